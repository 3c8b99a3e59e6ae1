// Failure scenarios from Dask's test suite and from its scheduler bug
// (distributed issue 8548), on a local cluster: each ends with every ref
// resolved to the right value or to a typed error that names the cause,
// never a hang and never an impossible task state.

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "chaos_support.hpp"

namespace failure_scenarios_test {

using prism_test::result_timeout;
using prism_test::wait_until;

std::atomic<int> runs{0};
std::atomic<int> in_flight{0};
/// Set by a test, and always by the fixture's teardown, to let held tasks
/// return.
std::atomic<bool> release{false};

/// Where the last `note_where` call ran; guarded by `where_mu`.
std::mutex where_mu;
prism::worker_id last_worker;
prism::node_id last_node;
std::atomic<int> noted{0};

void note_where() {
  auto ctx = prism::get_runtime_context();
  std::lock_guard<std::mutex> guard{where_mu};
  last_worker = ctx.worker;
  last_node = ctx.node;
  ++noted;
}

prism::worker_id noted_worker() {
  std::lock_guard<std::mutex> guard{where_mu};
  return last_worker;
}

prism::node_id noted_node() {
  std::lock_guard<std::mutex> guard{where_mu};
  return last_node;
}

std::int64_t plus1(std::int64_t x) {
  prism_test::in_flight_scope scope{in_flight};
  ++runs;
  note_where();
  return x + 1;
}

std::int64_t add(std::int64_t a, std::int64_t b) {
  prism_test::in_flight_scope scope{in_flight};
  ++runs;
  // Stands in for computation, so that kills land while tasks run.
  std::this_thread::sleep_for(std::chrono::milliseconds{2});
  return a + b;
}

/// `add` that holds until released: the tasks of a reduction keep their
/// nodes busy until the test has seen nodes die under them.
std::int64_t add_once_released(std::int64_t a, std::int64_t b) {
  prism_test::in_flight_scope scope{in_flight};
  ++runs;
  wait_until([] { return release.load(); });
  return a + b;
}

/// Says where it runs, then holds until released.
std::int64_t held(std::int64_t x) {
  prism_test::in_flight_scope scope{in_flight};
  ++runs;
  note_where();
  wait_until([] { return release.load(); });
  return x;
}

/// Kills its own worker, every time it runs, then holds until released (a
/// killed worker's C++ code runs to its end inside this process).
std::int64_t kills_its_worker(std::int64_t x) {
  prism_test::in_flight_scope scope{in_flight};
  ++runs;
  prism::testing::kill_worker(prism::get_runtime_context().worker);
  wait_until([] { return release.load(); });
  return x;
}

/// Puts data, which this task's worker then owns, and returns its ref.
prism::object_ref<std::string> put_data(std::string s) {
  note_where();
  return prism::put(s);
}

PRISM_REMOTE(failure_scenarios_test::plus1, failure_scenarios_test::add,
             failure_scenarios_test::add_once_released,
             failure_scenarios_test::held,
             failure_scenarios_test::kills_its_worker,
             failure_scenarios_test::put_data);

using namespace failure_scenarios_test;

namespace {

/// Nodes that may die; "spot" pins work to them.
const prism::resource_map spot_node{{"CPU", 2}, {"spot", 4}};
const prism::resource_map on_spot{{"spot", 1}};

struct scenario_fixture : prism_chaos::transitions_stay_legal {
  scenario_fixture() {
    runs = 0;
    release = false;
    noted = 0;
  }

  ~scenario_fixture() {
    release = true;
    prism_chaos::expect_bodies_end(in_flight);
  }

  /// Waits until a task noted where it runs `n` times in all.
  void wait_noted(int n) {
    BOOST_REQUIRE_MESSAGE(wait_until([n] { return noted.load() >= n; }),
                          "the task did not start within the deadline");
  }

  prism::testing::local_cluster cluster{{{{"CPU", 2}}, spot_node, spot_node}};
};

/// The message of the error of type E that getting `ref` throws; fails the
/// test if it returns or throws something else.
template <class E, class T>
std::string error_of(const prism::object_ref<T>& ref) {
  try {
    prism::get(ref, result_timeout);
  } catch (const E& e) {
    return e.what();
  }
  BOOST_FAIL("get returned a value");
  return {};
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(failure_scenarios, scenario_fixture)

BOOST_AUTO_TEST_CASE(submit_after_a_worker_failed) {
  BOOST_REQUIRE(prism::get(prism::task(plus1).remote(1), result_timeout) == 2);
  BOOST_REQUIRE(cluster.kill_worker(noted_worker()));
  std::vector<prism::object_ref<std::int64_t>> refs;
  for (int i = 0; i < 20; ++i)
    refs.push_back(prism::task(plus1).remote(i));
  for (int i = 0; i < 20; ++i)
    BOOST_TEST(prism::get(refs[i], result_timeout) == i + 1);
}

BOOST_AUTO_TEST_CASE(gather_after_a_worker_failed) {
  auto first = prism::task(held).remote(-1);
  wait_noted(1);
  std::vector<prism::object_ref<std::int64_t>> refs;
  for (int i = 0; i < 20; ++i)
    refs.push_back(prism::task(add).remote(i, 100));
  BOOST_REQUIRE(cluster.kill_worker(noted_worker()));
  release = true;
  for (int i = 0; i < 20; ++i)
    BOOST_TEST(prism::get(refs[i], result_timeout) == i + 100);
  // Retried on another worker.
  BOOST_TEST(prism::get(first, result_timeout) == -1);
}

BOOST_AUTO_TEST_CASE(kill_the_holder_of_a_result_repeatedly) {
  std::vector<prism::object_ref<std::int64_t>> chain{
      prism::put(std::int64_t{0})};
  for (int i = 1; i <= 5; ++i) {
    auto next = prism::task(plus1).resources(on_spot).remote(chain.back());
    BOOST_REQUIRE(prism::get(next, result_timeout) == i);
    // The node that computed it dies; its result lives with its owner.
    BOOST_REQUIRE(cluster.kill_node(noted_node()));
    cluster.add_node(spot_node);
    chain.push_back(next);
  }
  for (int i = 0; i <= 5; ++i)
    BOOST_TEST(prism::get(chain[i], result_timeout) == i);
}

BOOST_AUTO_TEST_CASE(break_workers_during_a_tree_reduction) {
  constexpr int leaves = 128;
  // Nodes that die while the reduction's first tasks hold theirs.
  constexpr int min_kills = 5;
  std::vector<prism::object_ref<std::int64_t>> level;
  for (int i = 0; i < leaves; ++i)
    level.push_back(prism::put(std::int64_t{i}));
  int kills = 0;
  {
    prism::testing::node_killer killer{cluster, spot_node,
                                       std::chrono::milliseconds{30}, 1};
    while (level.size() > 1) {
      std::vector<prism::object_ref<std::int64_t>> next;
      for (std::size_t i = 0; i + 1 < level.size(); i += 2)
        next.push_back(prism::task(add_once_released)
                           .resources(on_spot)
                           .max_retries(-1)
                           .remote(level[i], level[i + 1]));
      level = std::move(next);
    }
    // No task returns before the release, so the reduction cannot end
    // before these kills.
    BOOST_REQUIRE_MESSAGE(
        wait_until([&] { return killer.kills() >= min_kills; }),
        "the killer killed " << killer.kills() << " nodes, not " << min_kills);
    release = true;
    BOOST_TEST(prism::get(level[0], result_timeout) ==
               std::int64_t{leaves} * (leaves - 1) / 2);
    kills = killer.kills();
  }
  BOOST_TEST_MESSAGE(kills << " node kills during the reduction, "
                           << runs.load() << " runs of " << leaves - 1
                           << " tasks");
  prism_chaos::expect_cpus_return_to_full(cluster, 2);
  BOOST_TEST(prism::testing::illegal_task_transitions() == 0u);
}

BOOST_AUTO_TEST_CASE(a_task_that_keeps_killing_its_worker_fails_naming_why) {
  auto ref = prism::task(kills_its_worker).max_retries(2).remote(1);
  auto message = error_of<prism::worker_crashed_error>(ref);
  BOOST_TEST_MESSAGE(message);
  BOOST_TEST(runs.load() == 3);
  BOOST_TEST(message.find("kills_its_worker") != std::string::npos);
  BOOST_TEST(message.find("killed by fault injection") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(lost_put_data_is_reported_lost) {
  auto inner = prism::get(
      prism::task(put_data).resources(on_spot).remote(std::string{"payload"}),
      result_timeout);
  BOOST_REQUIRE(cluster.kill_node(noted_node()));
  auto start = std::chrono::steady_clock::now();
  auto message = error_of<prism::owner_died_error>(inner);
  BOOST_TEST(
      (std::chrono::steady_clock::now() - start < std::chrono::seconds{5}));
  BOOST_TEST(message.find(inner.id().hex()) != std::string::npos);
}

// Dask 8548: f runs on a node that dies, so f fails for good; g depends on
// f, and h1, h2 on g. Each ends with f's cause, none hangs.
BOOST_AUTO_TEST_CASE(dependents_of_a_task_that_fails_for_good_fail_with_cause) {
  auto f = prism::task(held).resources(on_spot).max_retries(0).remote(1);
  auto g = prism::task(plus1).remote(f);
  auto h1 = prism::task(plus1).remote(g);
  auto h2 = prism::task(plus1).remote(g);
  wait_noted(1);
  BOOST_REQUIRE(cluster.kill_node(noted_node()));
  auto cause = error_of<prism::worker_crashed_error>(f);
  BOOST_TEST(cause.find("its node died") != std::string::npos);
  BOOST_TEST(error_of<prism::worker_crashed_error>(g) == cause);
  BOOST_TEST(error_of<prism::worker_crashed_error>(h1) == cause);
  BOOST_TEST(error_of<prism::worker_crashed_error>(h2) == cause);
  BOOST_TEST(prism::testing::illegal_task_transitions() == 0u);
}

// Dask 8548, the other half: g was computed from f before f's node died;
// g's value is kept, and h1, h2 complete from it.
BOOST_AUTO_TEST_CASE(a_computed_dependent_keeps_its_value_when_the_node_dies) {
  auto f = prism::task(plus1).resources(on_spot).max_retries(0).remote(1);
  auto g = prism::task(plus1).resources(on_spot).remote(f);
  BOOST_REQUIRE(prism::get(g, result_timeout) == 3);
  BOOST_REQUIRE(cluster.kill_node(noted_node()));
  auto h1 = prism::task(plus1).remote(g);
  auto h2 = prism::task(plus1).remote(g);
  BOOST_TEST(prism::get(h1, result_timeout) == 4);
  BOOST_TEST(prism::get(h2, result_timeout) == 4);
  BOOST_TEST(prism::get(f, result_timeout) == 2);
  BOOST_TEST(prism::testing::illegal_task_transitions() == 0u);
}

// Dask 8548: a late "finished" for a task that already failed changes
// nothing.
BOOST_AUTO_TEST_CASE(a_late_finished_report_for_a_failed_task_is_dropped) {
  auto f = prism::task(held).max_retries(0).remote(7);
  wait_noted(1);
  BOOST_REQUIRE(cluster.kill_worker(noted_worker()));
  auto cause = error_of<prism::worker_crashed_error>(f);
  // The run on the killed worker now returns and reports its result.
  release = true;
  BOOST_REQUIRE(wait_until([] { return in_flight.load() == 0; }));
  BOOST_TEST(error_of<prism::worker_crashed_error>(f) == cause);
  BOOST_TEST(prism::get(prism::task(plus1).remote(1), result_timeout) == 2);
  BOOST_TEST(prism::testing::illegal_task_transitions() == 0u);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace failure_scenarios_test
