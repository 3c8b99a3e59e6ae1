// Node affinity: a task pinned to a node runs there; a hard pin to a dead
// node, or to one that can never fit the task, fails with
// unschedulable_error; a soft pin falls back to any node that fits.

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <string>

#include "cluster_fixture.hpp"

namespace node_affinity_test {

using prism_test::result_timeout;

std::string where() {
  return prism::get_runtime_context().node.hex();
}

std::atomic<bool> started{false};
std::atomic<bool> release{false};
std::atomic<int> in_flight{0};

/// Holds until released, so that a test can kill its node meanwhile.
std::string held_where() {
  prism_test::in_flight_scope scope{in_flight};
  started = true;
  prism_test::wait_until([] { return release.load(); });
  return where();
}

PRISM_REMOTE(node_affinity_test::where, node_affinity_test::held_where);

using node_affinity_test::where;

namespace {

struct affinity_fixture {
  affinity_fixture() {
    node_affinity_test::started = false;
    node_affinity_test::release = false;
  }

  ~affinity_fixture() {
    node_affinity_test::release = true;
    prism_test::wait_until(
        [] { return node_affinity_test::in_flight.load() == 0; });
  }

  prism::testing::local_cluster cluster{
      {{{"CPU", 2}}, {{"CPU", 2}}, {{"CPU", 1}, {"GPU", 1}}}};
};

std::string run_where(prism::task_caller<std::string (*)()> call) {
  return prism::get(call.remote(), result_timeout);
}

template <class T>
std::string unschedulable_message(const prism::object_ref<T>& ref) {
  try {
    prism::get(ref, result_timeout);
  } catch (const prism::unschedulable_error& e) {
    BOOST_TEST(!e.retryable());
    return e.what();
  }
  BOOST_FAIL("the task ran");
  return {};
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(node_affinity, affinity_fixture)

BOOST_AUTO_TEST_CASE(hard_affinity_runs_every_task_on_its_node) {
  for (std::size_t n = 0; n < 3; ++n) {
    auto node = cluster.node(n);
    for (int i = 0; i < 5; ++i)
      BOOST_TEST(run_where(prism::task(where).node_affinity(node)) ==
                 node.hex());
  }
}

BOOST_AUTO_TEST_CASE(soft_affinity_runs_on_its_node_while_it_lives) {
  auto node = cluster.node(1);
  BOOST_TEST(run_where(prism::task(where).node_affinity(node, true)) ==
             node.hex());
}

BOOST_AUTO_TEST_CASE(hard_affinity_to_a_dead_node_is_unschedulable) {
  auto dead = cluster.node(1);
  BOOST_REQUIRE(cluster.kill_node(dead));
  auto message =
      unschedulable_message(prism::task(where).node_affinity(dead).remote());
  BOOST_TEST(message.find(dead.hex()) != std::string::npos);
  BOOST_TEST(message.find("dead") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(soft_affinity_to_a_dead_node_runs_elsewhere) {
  auto dead = cluster.node(1);
  BOOST_REQUIRE(cluster.kill_node(dead));
  auto ran = run_where(prism::task(where).node_affinity(dead, true));
  BOOST_TEST(ran != dead.hex());
}

BOOST_AUTO_TEST_CASE(hard_affinity_to_a_node_that_cannot_fit_is_unschedulable) {
  auto small = cluster.node(1);
  auto message = unschedulable_message(
      prism::task(where).resources({{"GPU", 1}}).node_affinity(small).remote());
  BOOST_TEST(message.find("can never fit") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(
    soft_affinity_to_a_node_that_cannot_fit_runs_where_it_fits) {
  auto gpu_node = cluster.node(2);
  BOOST_TEST(run_where(prism::task(where)
                           .resources({{"GPU", 1}})
                           .node_affinity(cluster.node(1), true)) ==
             gpu_node.hex());
}

BOOST_AUTO_TEST_CASE(a_pinned_task_whose_node_dies_under_it_is_unschedulable) {
  auto doomed = cluster.node(1);
  auto ref = prism::task(node_affinity_test::held_where)
                 .node_affinity(doomed)
                 .max_retries(3)
                 .remote();
  BOOST_REQUIRE(prism_test::wait_until(
      [] { return node_affinity_test::started.load(); }));
  BOOST_REQUIRE(cluster.kill_node(doomed));
  // Its retry may run nowhere else.
  auto message = unschedulable_message(ref);
  BOOST_TEST(message.find(doomed.hex()) != std::string::npos);
}

BOOST_AUTO_TEST_CASE(soft_affinity_to_an_unknown_node_runs_anywhere) {
  prism::node_id unknown{prism::unique_id::random()};
  BOOST_TEST(
      !run_where(prism::task(where).node_affinity(unknown, true)).empty());
}

BOOST_AUTO_TEST_CASE(hard_affinity_to_an_unknown_node_waits_for_it) {
  prism::node_id unknown{prism::unique_id::random()};
  auto ref = prism::task(where).node_affinity(unknown).remote();
  BOOST_TEST(prism::wait(std::vector{ref}, 1, std::chrono::milliseconds{100})
                 .ready.empty());
  BOOST_TEST(prism::testing::task_state(ref.id()) == "queued");
  // It is reported among the requests no live node can run now.
  BOOST_TEST(prism_test::wait_until([] {
    for (auto& r : prism::testing::pending_infeasible())
      if (r == prism::resource_map{{"CPU", 1}})
        return true;
    return false;
  }));
}

BOOST_AUTO_TEST_CASE(a_nil_node_is_an_invalid_argument) {
  BOOST_CHECK_THROW(prism::task(where).node_affinity(prism::node_id{}),
                    prism::invalid_argument_error);
}

BOOST_AUTO_TEST_CASE(unpinned_tasks_still_run_after_a_refusal) {
  auto dead = cluster.node(1);
  BOOST_REQUIRE(cluster.kill_node(dead));
  unschedulable_message(prism::task(where).node_affinity(dead).remote());
  BOOST_TEST(!run_where(prism::task(where)).empty());
  BOOST_TEST(prism::testing::illegal_task_transitions() == 0u);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace node_affinity_test
