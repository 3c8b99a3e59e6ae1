// A property test of the task state machine: random workloads under random
// failures (worker kills, node kills, exceptions), with the invariants
// checked after every step:
// - no task is both finished and pending: a ref that is ready belongs to a
//   task its owner no longer tracks;
// - no task takes an impossible step;
// and at the end:
// - every ref resolves to its right value or to a typed error of a kind its
//   task may end with, never a timeout;
// - every node's CPUs return to full;
// - once the refs are dropped, every object is freed in every process
//   (dependents take their argument as a ref or nested in a vector, so
//   borrowers die with killed workers and nodes too).

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "chaos_support.hpp"

namespace property_test {

using prism_test::result_timeout;
using prism_test::wait_until;

std::atomic<int> in_flight{0};

/// Workers that ran a task lately, for the kills to pick from.
std::mutex workers_mu;
std::vector<prism::worker_id> recent_workers; // guarded by workers_mu

void note_worker() {
  auto w = prism::get_runtime_context().worker;
  std::lock_guard<std::mutex> guard{workers_mu};
  recent_workers.push_back(w);
  if (recent_workers.size() > 16)
    recent_workers.erase(recent_workers.begin());
}

/// Stands in for a little computation, so that kills land while tasks run.
void work() {
  std::this_thread::sleep_for(std::chrono::milliseconds{1});
}

std::int64_t plus_one(std::int64_t x) {
  prism_test::in_flight_scope scope{in_flight};
  note_worker();
  work();
  return x + 1;
}

std::int64_t always_throws(std::int64_t) {
  prism_test::in_flight_scope scope{in_flight};
  note_worker();
  work();
  throw std::domain_error("always_throws");
}

/// Reads its argument through a ref nested in a vector: a borrower.
std::int64_t plus_one_nested(std::vector<prism::object_ref<std::int64_t>> in) {
  prism_test::in_flight_scope scope{in_flight};
  note_worker();
  auto x = prism::get(in.at(0), result_timeout);
  work();
  return x + 1;
}

/// Throws on its first run only.
std::int64_t flaky(std::int64_t x) {
  prism_test::in_flight_scope scope{in_flight};
  note_worker();
  work();
  if (prism::get_runtime_context().attempt == 0)
    throw std::runtime_error("flaky, first run");
  return x + 1;
}

PRISM_REMOTE(property_test::plus_one, property_test::plus_one_nested,
             property_test::always_throws, property_test::flaky);

using namespace property_test;

namespace {

const prism::resource_map node_resources{{"CPU", 2}};

/// A submitted task and how it may end.
struct tracked {
  prism::object_ref<std::int64_t> ref;
  /// The value it returns if it succeeds.
  std::int64_t value = 0;
  /// The error codes it may end with instead.
  std::set<prism::errc> may_fail_with;
  /// Whether it must succeed (retried forever, nothing in it throws).
  bool must_succeed = false;
};

class workload {
public:
  explicit workload(std::uint32_t seed) : rng_(seed) {}

  void step(prism::testing::local_cluster& cluster) {
    switch (rng_() % 10) {
    case 0:
      kill_a_worker(cluster);
      break;
    case 1:
      kill_a_node(cluster);
      break;
    case 2:
      submit_throwing();
      break;
    case 3:
      submit_flaky();
      break;
    case 4:
    case 5:
      submit_dependent();
      break;
    default:
      submit_plain();
      break;
    }
  }

  /// Ready refs belong to tasks their owner no longer tracks.
  void check_no_task_is_finished_and_pending() {
    for (auto& t : tasks_) {
      auto ready =
          prism::wait(std::vector{t.ref}, 1, std::chrono::milliseconds{0});
      if (ready.ready.empty())
        continue;
      auto state = prism::testing::task_state(t.ref.id());
      BOOST_TEST(state.empty(), "task of ref " << t.ref.id().hex()
                                               << " is ready and " << state);
    }
  }

  void check_every_ref_resolves() {
    for (auto& t : tasks_) {
      try {
        auto v = prism::get(t.ref, result_timeout);
        BOOST_TEST(v == t.value);
      } catch (const prism::timeout_error& e) {
        BOOST_ERROR("a ref never resolved: " << e.what());
      } catch (const prism::error& e) {
        BOOST_TEST(!t.must_succeed,
                   "a task that had to succeed failed: " << e.what());
        BOOST_TEST(t.may_fail_with.count(e.code()) == 1u,
                   "unexpected error " << prism::to_string(e.code()) << ": "
                                       << e.what());
      }
    }
  }

  std::size_t size() const {
    return tasks_.size();
  }

private:
  std::int32_t random_retries() {
    static const std::int32_t choices[] = {0, 1, 3, -1};
    return choices[rng_() % 4];
  }

  void submit_plain() {
    auto retries = random_retries();
    auto x = static_cast<std::int64_t>(rng_() % 1000);
    tracked t;
    t.ref = prism::task(plus_one).max_retries(retries).remote(x);
    t.value = x + 1;
    t.must_succeed = retries < 0;
    t.may_fail_with = {prism::errc::worker_crashed};
    tasks_.push_back(std::move(t));
  }

  void submit_throwing() {
    tracked t;
    t.ref = prism::task(always_throws)
                .max_retries(static_cast<std::int32_t>(rng_() % 3))
                .retry_exceptions(rng_() % 2 == 0)
                .remote(1);
    t.may_fail_with = {prism::errc::task_failed, prism::errc::worker_crashed};
    tasks_.push_back(std::move(t));
  }

  void submit_flaky() {
    auto x = static_cast<std::int64_t>(rng_() % 1000);
    tracked t;
    t.ref = prism::task(flaky).max_retries(-1).retry_exceptions(true).remote(x);
    t.value = x + 1;
    t.must_succeed = true;
    tasks_.push_back(std::move(t));
  }

  /// A task whose argument is an earlier task's result: it gets that value
  /// plus one, or fails with that task's error.
  void submit_dependent() {
    if (tasks_.empty())
      return submit_plain();
    auto& dep = tasks_[rng_() % tasks_.size()];
    auto retries = random_retries();
    tracked t;
    t.value = dep.value + 1;
    t.must_succeed = dep.must_succeed && retries < 0;
    t.may_fail_with = dep.may_fail_with;
    t.may_fail_with.insert(prism::errc::worker_crashed);
    if (rng_() % 2 == 0) {
      t.ref = prism::task(plus_one).max_retries(retries).remote(dep.ref);
    } else {
      // The dependency's error reaches it through `get`, as task_failed.
      t.ref = prism::task(plus_one_nested)
                  .max_retries(retries)
                  .remote(std::vector{dep.ref});
      t.may_fail_with.insert(prism::errc::task_failed);
    }
    tasks_.push_back(std::move(t));
  }

  void kill_a_worker(prism::testing::local_cluster& cluster) {
    std::optional<prism::worker_id> victim;
    {
      std::lock_guard<std::mutex> guard{workers_mu};
      if (!recent_workers.empty())
        victim = recent_workers[rng_() % recent_workers.size()];
    }
    if (victim)
      cluster.kill_worker(*victim);
  }

  void kill_a_node(prism::testing::local_cluster& cluster) {
    std::vector<prism::node_id> victims;
    for (auto& n : cluster.alive_nodes())
      if (n != cluster.node(0))
        victims.push_back(n);
    if (!victims.empty() && cluster.kill_node(victims[rng_() % victims.size()]))
      cluster.add_node(node_resources);
  }

public:
  /// Drops every ref the workload made.
  void drop_all() {
    tasks_.clear();
  }

private:
  std::mt19937 rng_;
  std::vector<tracked> tasks_;
};

} // namespace

BOOST_AUTO_TEST_SUITE(task_state_property)

BOOST_AUTO_TEST_CASE(random_workloads_under_random_failures_keep_invariants) {
  for (std::uint32_t seed : {1u, 2u, 3u}) {
    BOOST_TEST_CONTEXT("seed " << seed) {
      {
        // Ends after the cluster: checks its shutdown too.
        prism_chaos::transitions_stay_legal legal;
        prism::testing::local_cluster cluster{
            {node_resources, node_resources, node_resources}};
        auto baseline = prism::testing::objects_in_scope();
        workload w{seed};
        for (int i = 0; i < 120; ++i) {
          w.step(cluster);
          w.check_no_task_is_finished_and_pending();
          BOOST_TEST(prism::testing::illegal_task_transitions() == 0u);
        }
        w.check_every_ref_resolves();
        BOOST_TEST_MESSAGE("seed " << seed << ": " << w.size() << " tasks");
        prism_chaos::expect_cpus_return_to_full(cluster, 2);
        BOOST_TEST(prism::testing::illegal_task_transitions() == 0u);
        BOOST_REQUIRE(wait_until([] { return in_flight.load() == 0; }));
        w.drop_all();
        BOOST_TEST(wait_until(
            [&] { return prism::testing::objects_in_scope() == baseline; }));
      }
      std::lock_guard<std::mutex> guard{workers_mu};
      recent_workers.clear();
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace property_test
