// Ray's task metrics: trivial tasks submitted and fetched one at a time, all at
// once, from several threads, and in batches of 1000 through get and wait.

#include <algorithm>
#include <cstddef>
#include <future>
#include <vector>

#include <prism/prism.hpp>

#include "bench.hpp"
#include "owner/task_events.hpp"

namespace prism::bench {

namespace {

/// The trivial task of Ray's microbenchmark.
int small_value() {
  return 0;
}

PRISM_REMOTE(small_value);

/// Tasks per batch of the batch and wait metrics, as in Ray.
constexpr std::size_t batch_size = 1'000;

/// Submitting threads of `multi_client_tasks_async`.
constexpr std::size_t clients = 4;

std::vector<object_ref<int>> submit_small_values(std::size_t n) {
  std::vector<object_ref<int>> refs;
  refs.reserve(n);
  for (std::size_t i = 0; i < n; ++i)
    refs.push_back(task(small_value).remote());
  return refs;
}

void expect_zeros(const std::vector<int>& xs) {
  expect(std::all_of(xs.begin(), xs.end(), [](int x) { return x == 0; }),
         "small_value returned a value other than 0");
}

// -- metrics ------------------------------------------------------------------

double tasks_sync(const run_options& opts) {
  auto n = opts.iterations(5'000);
  return ops_per_second(n, [n] {
    for (std::size_t i = 0; i < n; ++i)
      expect(get(task(small_value).remote()) == 0,
             "small_value returned a value other than 0");
  });
}

double tasks_async(const run_options& opts) {
  auto n = opts.iterations(100'000);
  return ops_per_second(n, [n] { expect_zeros(get(submit_small_values(n))); });
}

double multi_client_tasks_async(const run_options& opts) {
  auto per_client = opts.iterations(100'000) / clients;
  return ops_per_second(per_client * clients, [per_client] {
    // std::async with launch::async runs each client on a std::thread of its
    // own and hands a client's exception back through its future.
    std::vector<std::future<void>> running;
    for (std::size_t i = 0; i < clients; ++i)
      running.push_back(std::async(std::launch::async, [per_client] {
        expect_zeros(get(submit_small_values(per_client)));
      }));
    for (auto& client : running)
      client.get();
  });
}

// As in Ray, each wait counts the submission of the refs it waits for.
double wait_1k_refs(const run_options& opts) {
  auto waits = opts.iterations(100);
  return ops_per_second(waits, [waits] {
    for (std::size_t i = 0; i < waits; ++i) {
      auto result = wait(submit_small_values(batch_size), batch_size);
      expect(result.ready.size() == batch_size,
             "wait returned before all refs were ready");
    }
  });
}

double tasks_and_get_batch(const run_options& opts) {
  auto batches = opts.iterations(100);
  return ops_per_second(batches, [batches] {
    for (std::size_t i = 0; i < batches; ++i)
      expect_zeros(get(submit_small_values(batch_size)));
  });
}

} // namespace

double recording_cost_pct(const run_options& opts,
                          double (*workload)(const run_options&)) {
  auto was = actors::task_event_recording();
  auto pct = cost_pct([&](bool recorded) {
    actors::set_task_event_recording(recorded);
    return workload(opts);
  });
  actors::set_task_event_recording(was);
  return pct;
}

std::vector<metric> task_metrics() {
  return {
      {"single_client_tasks_sync", "per_s", true, tasks_sync},
      {"single_client_tasks_async", "per_s", true, tasks_async},
      {"task_events_cost_pct", "pct", true,
       [](const run_options& opts) {
         return recording_cost_pct(opts, tasks_async);
       }},
      {"multi_client_tasks_async", "per_s", true, multi_client_tasks_async},
      {"single_client_wait_1k_refs", "per_s", true, wait_1k_refs},
      {"single_client_tasks_and_get_batch", "per_s", true, tasks_and_get_batch},
  };
}

} // namespace prism::bench
