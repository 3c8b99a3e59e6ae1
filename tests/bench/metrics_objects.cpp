// Ray's object store metrics: put and get of a small value from the driver.

#include <cstddef>

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

} // namespace

std::vector<metric> object_metrics() {
  return {
      {"single_client_put_calls", "per_s", true, put_calls},
      {"single_client_get_calls", "per_s", true, get_calls},
  };
}

} // namespace prism::bench
