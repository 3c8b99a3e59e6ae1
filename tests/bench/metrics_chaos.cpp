// Work under node kills, on a local cluster of its own: nested tasks that
// retry forever while a node dies every 200 ms (how many finish right, how
// many are wrong or lost), and how soon an owner acts on a node's death.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include <prism/prism.hpp>
#include <prism/testing.hpp>

#include "bench.hpp"
#include "cluster_fixture.hpp"

namespace prism::bench {

namespace {

/// Children each parent task submits; a parent and its children are
/// `family` tasks.
constexpr std::int64_t children_per_parent = 99;
constexpr std::int64_t family = children_per_parent + 1;

/// Task bodies not returned yet (those on killed workers run to their end).
std::atomic<int> in_flight{0};

struct in_flight_scope {
  in_flight_scope() {
    ++in_flight;
  }
  ~in_flight_scope() {
    --in_flight;
  }
};

/// A child: stands in for 2 ms of computation, so that the run spans
/// several node kills.
std::int64_t square(std::int64_t x) {
  in_flight_scope scope;
  // The time itself is the work: no condition to wait for.
  std::this_thread::sleep_for(std::chrono::milliseconds{2});
  return x * x;
}

/// Submits its children (retried forever) and sums their results.
std::int64_t sum_of_squares(std::int64_t first) {
  in_flight_scope scope;
  std::vector<object_ref<std::int64_t>> refs;
  refs.reserve(children_per_parent);
  for (std::int64_t i = 0; i < children_per_parent; ++i)
    refs.push_back(task(square).max_retries(-1).remote(first + i));
  std::int64_t sum = 0;
  for (auto x : get(refs))
    sum += x;
  return sum;
}

std::int64_t expected_sum(std::int64_t first) {
  std::int64_t sum = 0;
  for (std::int64_t i = 0; i < children_per_parent; ++i)
    sum += (first + i) * (first + i);
  return sum;
}

/// Set to let the held run of `held_then_timed` return.
std::atomic<bool> release{false};
/// When the retry of `held_then_timed` started.
std::atomic<std::int64_t> retry_started_ns{0};
std::atomic<bool> first_run_started{false};
std::mutex node_mu;
node_id first_run_node; // guarded by node_mu

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// The first run says where it runs and holds; the retry notes when it
/// started.
int held_then_timed() {
  in_flight_scope scope;
  auto ctx = get_runtime_context();
  if (ctx.attempt == 0) {
    {
      std::lock_guard<std::mutex> guard{node_mu};
      first_run_node = ctx.node;
    }
    first_run_started = true;
    prism_test::wait_until([] { return release.load(); },
                           std::chrono::seconds{60});
    return 0;
  }
  retry_started_ns = now_ns();
  return 1;
}

PRISM_REMOTE(square, sum_of_squares, held_then_timed);

const resource_map worker_node{{"CPU", 4}};

void wait_for_task_bodies() {
  prism_test::wait_until([] { return in_flight.load() == 0; },
                         std::chrono::seconds{60});
}

/// Nested tasks, 10,000 in all (parents of `children_per_parent` children),
/// under a node kill every 200 ms.
struct chaos_outcome {
  std::int64_t total = 0;
  std::int64_t right = 0;
};

chaos_outcome chaos_run(const run_options& opts) {
  auto parents = std::max<std::int64_t>(
      1, static_cast<std::int64_t>(opts.iterations(10'000)) / family);
  std::int64_t right = 0;
  // Its own cluster: the cluster metrics' one goes first, also when this
  // is measured again after them.
  stop_bench_cluster();
  {
    testing::local_cluster cluster{
        {{{"CPU", 4}}, worker_node, worker_node, worker_node}};
    {
      testing::node_killer killer{cluster, worker_node,
                                  std::chrono::milliseconds{200}, 8548};
      std::vector<object_ref<std::int64_t>> refs;
      for (std::int64_t p = 0; p < parents; ++p)
        refs.push_back(task(sum_of_squares)
                           .max_retries(-1)
                           .remote(p * children_per_parent));
      for (std::int64_t p = 0; p < parents; ++p) {
        try {
          if (get(refs[p], std::chrono::seconds{120}) ==
              expected_sum(p * children_per_parent))
            right += family;
        } catch (const error&) {
          // Lost: counted by what is missing from `right`.
        }
      }
      // Under --smoke the work may end before the first kill.
      expect(opts.smoke || killer.kills() > 0,
             "no node was killed while the tasks ran");
    }
    wait_for_task_bodies();
  }
  return {parents * family, right};
}

double chaos_tasks_completed(const run_options& opts) {
  return static_cast<double>(chaos_run(opts).right);
}

double chaos_tasks_wrong_or_lost(const run_options& opts) {
  auto r = chaos_run(opts);
  return static_cast<double>(r.total - r.right);
}

/// From `kill_node` until the owner of a task running there has retried it
/// on another node: detection, failover and a new lease.
double node_death_detection(const run_options&) {
  release = false;
  first_run_started = false;
  retry_started_ns = 0;
  double ms = 0;
  stop_bench_cluster(); // As in chaos_run.
  {
    testing::local_cluster cluster{{{{"CPU", 2}}, {{"CPU", 2}, {"spot", 1}}}};
    cluster.add_node({{"CPU", 2}, {"spot", 1}});
    auto ref = task(held_then_timed).resources({{"spot", 1}}).remote();
    expect(prism_test::wait_until([] { return first_run_started.load(); },
                                  std::chrono::seconds{30}),
           "the held task did not start");
    node_id doomed;
    {
      std::lock_guard<std::mutex> guard{node_mu};
      doomed = first_run_node;
    }
    auto killed = now_ns();
    expect(cluster.kill_node(doomed), "the node did not die");
    expect(get(ref, std::chrono::seconds{30}) == 1, "the task was not retried");
    ms = static_cast<double>(retry_started_ns.load() - killed) / 1e6;
    release = true;
    wait_for_task_bodies();
  }
  return ms;
}

} // namespace

std::vector<metric> chaos_metrics() {
  return {
      {"chaos_tasks_completed", "tasks", false, chaos_tasks_completed},
      {"chaos_tasks_wrong_or_lost", "tasks", false, chaos_tasks_wrong_or_lost},
      {"node_death_detection_ms", "ms", false, node_death_detection},
  };
}

} // namespace prism::bench
