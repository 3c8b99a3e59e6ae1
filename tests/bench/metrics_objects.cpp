// Ray's object store metrics: put and get of a small value from the driver,
// and the floor under them.

#include <cstddef>
#include <mutex>
#include <unordered_map>
#include <vector>

#include <prism/prism.hpp>

#include "bench.hpp"

namespace prism::bench {

namespace {

// Each ref is dropped at once, as in Ray's loop of `ray.put(0)`, so the metric
// includes releasing the object.
double put_calls(const run_options& opts) {
  auto n = opts.iterations(200'000);
  return ops_per_second(n, [n] {
    for (std::size_t i = 0; i < n; ++i)
      put(0);
  });
}

double get_calls(const run_options& opts) {
  auto n = opts.iterations(200'000);
  auto ref = put(1);
  std::size_t sum = 0;
  auto rate = ops_per_second(n, [&] {
    for (std::size_t i = 0; i < n; ++i)
      sum += static_cast<std::size_t>(get(ref));
  });
  expect(sum == n, "get returned a value other than the one put");
  return rate;
}

// The floor under put and get, which send no message: what the least store
// of objects does on this thread, in plain C++. Each iteration takes an
// uncontended lock three times, to insert a small value under a fresh
// object id into a hash map, to find it and copy it out, and to erase it.
double locked_map_floor(const run_options& opts) {
  auto n = opts.iterations(1'000'000);
  std::mutex mu;
  std::unordered_map<object_id, std::vector<char>> objects;
  worker_id me{unique_id::random()};
  std::size_t copied = 0;
  auto rate = ops_per_second(n, [&] {
    for (std::uint64_t seq = 1; seq <= n; ++seq) {
      object_id id{task_id{me, seq}, 0};
      {
        std::lock_guard<std::mutex> guard{mu};
        objects.emplace(id, std::vector<char>(8, 'x'));
      }
      std::vector<char> copy;
      {
        std::lock_guard<std::mutex> guard{mu};
        if (auto i = objects.find(id); i != objects.end())
          copy = i->second;
      }
      copied += copy.size();
      std::lock_guard<std::mutex> guard{mu};
      objects.erase(id);
    }
  });
  expect(copied == 8 * n && objects.empty(),
         "the map lost or kept a value of the floor");
  return rate;
}

} // namespace

std::vector<metric> object_metrics() {
  return {
      {"single_client_put_calls", "per_s", true, put_calls},
      {"single_client_get_calls", "per_s", true, get_calls},
  };
}

std::vector<metric> object_floor_metrics() {
  return {
      {"locked_map_floor", "per_s", false, locked_map_floor},
  };
}

} // namespace prism::bench
