// Retries of tasks that throw: how often a task runs under max_retries and
// retry_exceptions, counted exactly by the task itself.

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "cluster_fixture.hpp"

namespace retries_test {

using prism_test::result_timeout;

std::atomic<int> always_throws_runs{0};

// Throws on every run, naming the run in its message.
int always_throws() {
  auto run = ++always_throws_runs;
  throw std::runtime_error("run " + std::to_string(run));
}

std::atomic<int> fails_twice_runs{0};

int fails_twice_then_returns_7() {
  if (++fails_twice_runs <= 2)
    throw std::runtime_error("not yet");
  return 7;
}

std::atomic<int> fails_five_times_runs{0};

int fails_five_times_then_returns_8() {
  if (++fails_five_times_runs <= 5)
    throw std::runtime_error("not yet");
  return 8;
}

std::mutex attempts_mu;
std::vector<int> attempts_seen; // guarded by attempts_mu

// Records the attempt number of each run; throws until attempt 2.
int records_attempts() {
  auto attempt = prism::get_runtime_context().attempt;
  {
    std::lock_guard<std::mutex> guard{attempts_mu};
    attempts_seen.push_back(attempt);
  }
  if (attempt < 2)
    throw std::runtime_error("not yet");
  return attempt;
}

// Exceptions a task throws by type: a transient one, one derived from it,
// and one that is not.
struct transient_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct connection_reset : transient_error {
  using transient_error::transient_error;
};
struct bad_input : std::logic_error {
  using std::logic_error::logic_error;
};

std::atomic<int> typed_runs{0};

// Throws `what` (0: transient_error, 1: connection_reset, 2: bad_input) on
// its first two runs, then returns 9.
int throws_by_type(int what) {
  if (++typed_runs <= 2) {
    if (what == 0)
      throw transient_error("transient");
    if (what == 1)
      throw connection_reset("reset");
    throw bad_input("bad");
  }
  return 9;
}

PRISM_REMOTE(retries_test::always_throws, retries_test::throws_by_type,
             retries_test::fails_twice_then_returns_7,
             retries_test::fails_five_times_then_returns_8,
             retries_test::records_attempts);

using namespace retries_test;

namespace {

struct retries_fixture : prism_test::cluster_fixture {
  retries_fixture() {
    always_throws_runs = 0;
    fails_twice_runs = 0;
    fails_five_times_runs = 0;
    typed_runs = 0;
    std::lock_guard<std::mutex> guard{attempts_mu};
    attempts_seen.clear();
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(retries, retries_fixture)

BOOST_AUTO_TEST_CASE(always_throwing_task_with_three_retries_runs_four_times) {
  auto ref =
      prism::task(always_throws).retry_exceptions(true).max_retries(3).remote();
  BOOST_CHECK_THROW(prism::get(ref, result_timeout), prism::task_error);
  BOOST_TEST(always_throws_runs.load() == 4);
}

BOOST_AUTO_TEST_CASE(task_with_zero_retries_runs_once) {
  auto ref =
      prism::task(always_throws).retry_exceptions(true).max_retries(0).remote();
  BOOST_CHECK_THROW(prism::get(ref, result_timeout), prism::task_error);
  BOOST_TEST(always_throws_runs.load() == 1);
}

BOOST_AUTO_TEST_CASE(exceptions_are_not_retried_without_retry_exceptions) {
  auto ref = prism::task(always_throws)
                 .retry_exceptions(false)
                 .max_retries(5)
                 .remote();
  BOOST_CHECK_THROW(prism::get(ref, result_timeout), prism::task_error);
  BOOST_TEST(always_throws_runs.load() == 1);
}

BOOST_AUTO_TEST_CASE(exceptions_are_not_retried_by_default) {
  auto ref = prism::task(always_throws).remote();
  BOOST_CHECK_THROW(prism::get(ref, result_timeout), prism::task_error);
  BOOST_TEST(always_throws_runs.load() == 1);
}

BOOST_AUTO_TEST_CASE(exhausted_retries_raise_the_task_error_of_the_last_run) {
  auto ref =
      prism::task(always_throws).retry_exceptions(true).max_retries(2).remote();
  try {
    prism::get(ref, result_timeout);
    BOOST_FAIL("get returned a value of a task that always throws");
  } catch (const prism::task_error& e) {
    BOOST_TEST(e.exception_type() == "std::runtime_error");
    BOOST_TEST(e.exception_message() == "run 3");
  }
}

BOOST_AUTO_TEST_CASE(
    task_failing_twice_then_succeeding_returns_after_three_runs) {
  auto ref = prism::task(fails_twice_then_returns_7)
                 .retry_exceptions(true)
                 .max_retries(3)
                 .remote();
  BOOST_TEST(prism::get(ref, result_timeout) == 7);
  BOOST_TEST(fails_twice_runs.load() == 3);
}

BOOST_AUTO_TEST_CASE(unlimited_retries_run_until_the_task_succeeds) {
  auto ref = prism::task(fails_five_times_then_returns_8)
                 .retry_exceptions(true)
                 .max_retries(-1)
                 .remote();
  BOOST_TEST(prism::get(ref, result_timeout) == 8);
  BOOST_TEST(fails_five_times_runs.load() == 6);
}

BOOST_AUTO_TEST_CASE(attempt_counts_up_by_one_with_each_run) {
  auto ref = prism::task(records_attempts)
                 .retry_exceptions(true)
                 .max_retries(3)
                 .remote();
  BOOST_TEST(prism::get(ref, result_timeout) == 2);
  std::lock_guard<std::mutex> guard{attempts_mu};
  BOOST_TEST(attempts_seen == (std::vector<int>{0, 1, 2}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_listed_exception_type_is_retried) {
  auto ref = prism::task(throws_by_type)
                 .retry_exceptions<transient_error>()
                 .max_retries(3)
                 .remote(0);
  BOOST_TEST(prism::get(ref, result_timeout) == 9);
  BOOST_TEST(typed_runs.load() == 3);
}

BOOST_AUTO_TEST_CASE(a_type_derived_from_a_listed_one_is_retried) {
  auto ref = prism::task(throws_by_type)
                 .retry_exceptions<bad_input, transient_error>()
                 .max_retries(3)
                 .remote(1);
  BOOST_TEST(prism::get(ref, result_timeout) == 9);
  BOOST_TEST(typed_runs.load() == 3);
}

BOOST_AUTO_TEST_CASE(an_exception_of_a_type_not_listed_is_not_retried) {
  auto ref = prism::task(throws_by_type)
                 .retry_exceptions<transient_error>()
                 .max_retries(3)
                 .remote(2);
  try {
    prism::get(ref, result_timeout);
    BOOST_FAIL("an exception that is not listed was retried");
  } catch (const prism::task_error& e) {
    BOOST_TEST(e.exception_type() == "retries_test::bad_input");
  }
  BOOST_TEST(typed_runs.load() == 1);
}

BOOST_AUTO_TEST_CASE(retry_exceptions_true_after_a_list_retries_any_type) {
  auto ref = prism::task(throws_by_type)
                 .retry_exceptions<transient_error>()
                 .retry_exceptions(true)
                 .max_retries(3)
                 .remote(2);
  BOOST_TEST(prism::get(ref, result_timeout) == 9);
  BOOST_TEST(typed_runs.load() == 3);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace retries_test
