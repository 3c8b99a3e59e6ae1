// Work that must survive repeated node kills: nested tasks that retry
// forever, and actors that restart and retry their calls forever. Every
// result must come back right, every node's CPUs must return to full, and no
// task may take an impossible step.

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "chaos_support.hpp"

namespace node_kills_test {

using prism_test::result_timeout;

/// Runs of `leaf` and `tree_sum`, finished or cut short by a kill.
std::atomic<int> runs{0};
/// Task bodies still running, so the test can wait for the ones that
/// outlived their killed worker before it ends.
std::atomic<int> in_flight{0};

/// The sum of the leaves under a node of the tree: leaves are numbered
/// `base * 2^depth + i`.
std::int64_t expected_sum(int depth, std::int64_t base) {
  std::int64_t width = std::int64_t{1} << depth;
  return width * base * width + width * (width - 1) / 2;
}

/// A leaf does a little work, so that kills land while tasks run.
std::int64_t leaf(std::int64_t x) {
  prism_test::in_flight_scope scope{in_flight};
  ++runs;
  // Stands in for computation; no test waits on it.
  std::this_thread::sleep_for(std::chrono::milliseconds{2});
  return x;
}

/// Sums a tree of tasks: each inner node submits its two children (retried
/// forever) and waits for them.
std::int64_t tree_sum(int depth, std::int64_t base) {
  prism_test::in_flight_scope scope{in_flight};
  ++runs;
  if (depth == 0)
    return leaf(base);
  auto a = prism::task(tree_sum).max_retries(-1).remote(depth - 1, base * 2);
  auto b =
      prism::task(tree_sum).max_retries(-1).remote(depth - 1, base * 2 + 1);
  return prism::get(a) + prism::get(b);
}

/// Calls that ran, counted across every instance of every `echo`.
std::atomic<int> echo_runs{0};

class echo {
public:
  static echo* create() {
    return new echo;
  }

  int call(int x) {
    prism_test::in_flight_scope scope{in_flight};
    ++echo_runs;
    // Stands in for the method's work, so that kills land while calls run.
    std::this_thread::sleep_for(std::chrono::milliseconds{1});
    return x;
  }
};

PRISM_REMOTE(node_kills_test::leaf, node_kills_test::tree_sum,
             node_kills_test::echo::create, &node_kills_test::echo::call);

using namespace node_kills_test;

namespace {

/// A node the killer may take down. Actors ask for "spot", so they live on
/// such nodes only and every kill can hit them.
const prism::resource_map worker_node{{"CPU", 2}, {"spot", 4}};

/// Kills that each test waits to see while its work runs.
constexpr int min_kills = 4;
/// A bound on the work submitted while waiting for those kills.
constexpr int max_waves = 200;

struct chaos_fixture : prism_chaos::transitions_stay_legal {
  chaos_fixture() {
    runs = 0;
    echo_runs = 0;
  }

  ~chaos_fixture() {
    prism_chaos::expect_bodies_end(in_flight);
  }

  prism::testing::local_cluster cluster{
      {{{"CPU", 2}}, worker_node, worker_node, worker_node}};
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(node_kills, chaos_fixture)

BOOST_AUTO_TEST_CASE(nested_tasks_finish_right_under_repeated_node_kills) {
  constexpr int depth = 3;
  constexpr int roots_per_wave = 8;
  int roots = 0;
  int kills = 0;
  {
    prism::testing::node_killer killer{cluster, worker_node,
                                       std::chrono::milliseconds{100}, 8548};
    for (int wave = 0; wave < max_waves && killer.kills() < min_kills; ++wave) {
      std::vector<prism::object_ref<std::int64_t>> refs;
      for (int r = 0; r < roots_per_wave; ++r)
        refs.push_back(
            prism::task(tree_sum).max_retries(-1).remote(depth, roots + r));
      for (int r = 0; r < roots_per_wave; ++r)
        BOOST_TEST(prism::get(refs[r], result_timeout) ==
                   expected_sum(depth, roots + r));
      roots += roots_per_wave;
    }
    kills = killer.kills();
  }
  BOOST_TEST_MESSAGE(roots << " trees of " << ((1 << (depth + 1)) - 1)
                           << " tasks, " << kills << " node kills, "
                           << runs.load() << " runs");
  BOOST_TEST(kills >= min_kills);
  prism_chaos::expect_cpus_return_to_full(cluster, 2);
  BOOST_TEST(prism::testing::illegal_task_transitions() == 0u);
}

BOOST_AUTO_TEST_CASE(actor_calls_are_not_lost_under_node_kills) {
  constexpr int num_actors = 4;
  constexpr int calls_per_actor = 20;
  std::vector<prism::actor_handle<echo>> actors;
  for (int i = 0; i < num_actors; ++i)
    actors.push_back(prism::actor(echo::create)
                         .resources({{"spot", 1}})
                         .max_restarts(-1)
                         .max_task_retries(-1)
                         .remote());
  int calls = 0;
  int kills = 0;
  {
    prism::testing::node_killer killer{cluster, worker_node,
                                       std::chrono::milliseconds{100}, 4242};
    for (int wave = 0; wave < max_waves && killer.kills() < min_kills; ++wave) {
      std::vector<prism::object_ref<int>> refs;
      for (int c = 0; c < calls_per_actor; ++c)
        for (auto& a : actors)
          refs.push_back(a.task(&echo::call).remote(calls + c));
      std::size_t i = 0;
      for (int c = 0; c < calls_per_actor; ++c)
        for (int a = 0; a < num_actors; ++a)
          BOOST_TEST(prism::get(refs[i++], result_timeout) == calls + c);
      calls += calls_per_actor;
    }
    kills = killer.kills();
  }
  auto total = calls * num_actors;
  BOOST_TEST_MESSAGE(total << " calls, " << kills << " node kills, "
                           << echo_runs.load() << " runs");
  BOOST_TEST(kills >= min_kills);
  // At least once: every call ran, some of them more than once.
  BOOST_TEST(echo_runs.load() >= total);
  BOOST_TEST(prism::testing::illegal_task_transitions() == 0u);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace node_kills_test
