// A worker dies while it runs a task: the owner retries the task elsewhere, or
// reports the crash once the task has no retries left. A worker whose owner
// dies goes with it.

#include <boost/test/unit_test.hpp>

#include <atomic>

#include "cluster_fixture.hpp"

namespace worker_failure_test {

using prism_test::result_timeout;

std::atomic<int> runs{0};
std::atomic<int> in_flight{0};
std::atomic<int> last_attempt{-1};

// Written before `held_worker_known` is set, and read only after it is.
prism::worker_id held_worker;
std::atomic<bool> held_worker_known{false};

// Set by the test, and always by the fixture's teardown, to let the first run
// return.
std::atomic<bool> release{false};

// The first run reports its worker and blocks until released, so the test can
// kill that worker mid-task; a retry returns at once. The deadline keeps the
// first run from blocking forever if a test fails before releasing it.
int hold_first_attempt(int x) {
  prism_test::in_flight_scope scope{in_flight};
  ++runs;
  auto ctx = prism::get_runtime_context();
  last_attempt = ctx.attempt;
  if (ctx.attempt == 0) {
    held_worker = ctx.worker;
    held_worker_known = true;
    prism_test::wait_until([] { return release.load(); });
  }
  return x + 1;
}

// Written before `outer_worker_known` is set.
prism::worker_id outer_worker;
std::atomic<bool> outer_worker_known{false};

// Submits a held task and returns its ref: this task's worker owns it.
prism::object_ref<int> start_held(int x) {
  outer_worker = prism::get_runtime_context().worker;
  outer_worker_known = true;
  return prism::task(hold_first_attempt).remote(x);
}

PRISM_REMOTE(worker_failure_test::hold_first_attempt,
             worker_failure_test::start_held);

using namespace worker_failure_test;

namespace {

struct worker_failure_fixture : prism_test::cluster_fixture {
  worker_failure_fixture() {
    runs = 0;
    last_attempt = -1;
    held_worker = prism::worker_id{};
    held_worker_known = false;
    outer_worker_known = false;
    release = false;
  }

  // Runs before the base class shuts the cluster down: the run on the killed
  // worker keeps going inside this process until released.
  ~worker_failure_fixture() {
    release = true;
    prism_test::wait_until([] { return in_flight.load() == 0; });
  }
};

/// Waits until the first run of the task has started and returns its worker.
prism::worker_id wait_for_held_worker() {
  BOOST_REQUIRE_MESSAGE(
      prism_test::wait_until([] { return held_worker_known.load(); }),
      "the task did not start within the deadline");
  return held_worker;
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(worker_failure, worker_failure_fixture)

BOOST_AUTO_TEST_CASE(task_on_a_killed_worker_is_retried_and_returns_its_value) {
  auto ref = prism::task(hold_first_attempt).remote(41);
  auto worker = wait_for_held_worker();
  BOOST_REQUIRE(prism::testing::kill_worker(worker));
  BOOST_TEST(prism::get(ref, result_timeout) == 42);
  BOOST_TEST(runs.load() == 2);
  BOOST_TEST(last_attempt.load() == 1);
}

BOOST_AUTO_TEST_CASE(task_on_a_killed_worker_without_retries_fails_as_crashed) {
  auto ref = prism::task(hold_first_attempt).max_retries(0).remote(41);
  auto worker = wait_for_held_worker();
  BOOST_REQUIRE(prism::testing::kill_worker(worker));
  try {
    prism::get(ref, result_timeout);
    BOOST_FAIL("get returned a value of a task whose worker was killed");
  } catch (const prism::worker_crashed_error& e) {
    BOOST_TEST((e.code() == prism::errc::worker_crashed));
    BOOST_TEST(e.retryable());
  }
  BOOST_TEST(runs.load() == 1);
}

BOOST_AUTO_TEST_CASE(killing_a_worker_that_does_not_exist_returns_false) {
  prism::worker_id unknown{prism::unique_id::random()};
  BOOST_TEST(!prism::testing::kill_worker(unknown));
}

BOOST_AUTO_TEST_CASE(
    killing_the_same_worker_twice_returns_false_the_second_time) {
  auto ref = prism::task(hold_first_attempt).remote(1);
  auto worker = wait_for_held_worker();
  BOOST_REQUIRE(prism::testing::kill_worker(worker));
  BOOST_TEST(!prism::testing::kill_worker(worker));
  BOOST_TEST(prism::get(ref, result_timeout) == 2);
}

// As in Ray: the workers leased to an owner that dies are killed, not handed
// to another owner while they may still run the dead owner's task.
BOOST_AUTO_TEST_CASE(the_workers_leased_to_a_dead_owner_go_with_it) {
  auto outer = prism::task(start_held).remote(1);
  auto inner = prism::get(outer, result_timeout);
  wait_for_held_worker();
  BOOST_REQUIRE(outer_worker_known.load());
  auto before = prism::testing::num_workers();
  BOOST_REQUIRE(prism::testing::kill_worker(outer_worker));
  // The worker running the held task was leased to the owner that died.
  BOOST_TEST(prism_test::wait_until(
      [&] { return prism::testing::num_workers() + 2 <= before; }));
  BOOST_TEST(!prism::testing::kill_worker(held_worker));
  BOOST_CHECK_THROW(prism::get(inner, result_timeout), prism::owner_died_error);
}

// The node of the fixture has 2 CPUs and starts one worker per CPU: with
// one of them busy, both are still counted.
BOOST_AUTO_TEST_CASE(worker_running_a_task_is_counted_by_num_workers) {
  auto ref = prism::task(hold_first_attempt).remote(1);
  wait_for_held_worker();
  BOOST_TEST(prism::testing::num_workers() == 2u);
  release = true;
  BOOST_TEST(prism::get(ref, result_timeout) == 2);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace worker_failure_test
