// Errors a caller sees: exceptions thrown by tasks, calls of unregistered
// functions, bad registrations and bad arguments.

#include <boost/test/unit_test.hpp>

#include <stdexcept>
#include <string>

#include "cluster_fixture.hpp"

namespace errors_test {

using prism_test::result_timeout;

/// An exception type of the application, not of the standard library.
class insufficient_funds : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

int throws_out_of_range() {
  throw std::out_of_range("boom");
}

int throws_user_exception() {
  throw insufficient_funds("balance is 0");
}

int throws_an_int() {
  throw 42;
}

int plus1(int x) {
  return x + 1;
}

// Catches the task_error of a nested task it gets, and reports the nested
// task's exception type.
std::string catches_nested_error() {
  try {
    prism::get(prism::task(throws_out_of_range).remote(),
               prism_test::result_timeout);
    return "no error";
  } catch (const prism::task_error& e) {
    return e.exception_type();
  }
}

// Never registered.
int unregistered(int x) {
  return x;
}

// Registered at run time by the tests.
int late_square(int x) {
  return x * x;
}

int taken_name_first(int x) {
  return x;
}

int taken_name_second(int x) {
  return x;
}

int registered_twice(int x) {
  return x;
}

int empty_name(int x) {
  return x;
}

// Puts `x` on this task's worker, which then owns it (and lives on, idle).
prism::object_ref<int> put_on_a_worker(int x) {
  return prism::put(x);
}

/// A ref that names the live `owner` but an object it never made, as one
/// decoded from made-up or stale bytes would.
prism::object_ref<int> forged_ref(const prism::worker_id& owner) {
  prism::object_id id{
      prism::task_id{prism::worker_id{prism::unique_id::random()}, 1}, 1};
  return prism::object_ref<int>{prism::detail::borrow_ref(id, owner)};
}

/// A ref that names a live worker as its owner, which never made the object.
prism::object_ref<int> forged_ref_of_a_worker() {
  auto real = prism::get(prism::task(put_on_a_worker).remote(1),
                         prism_test::result_timeout);
  return forged_ref(real.owner());
}

/// A ref that names this driver as its owner, which never made the object.
prism::object_ref<int> forged_ref_of_the_driver() {
  return forged_ref(prism::put(1).owner());
}

PRISM_REMOTE(errors_test::throws_out_of_range,
             errors_test::throws_user_exception, errors_test::throws_an_int,
             errors_test::plus1, errors_test::catches_nested_error,
             errors_test::put_on_a_worker);

using namespace errors_test;

BOOST_FIXTURE_TEST_SUITE(errors, prism_test::cluster_fixture)

// -- exceptions thrown by tasks
// ------------------------------------------------

BOOST_AUTO_TEST_CASE(
    task_throwing_out_of_range_raises_task_error_with_its_type) {
  auto ref = prism::task(throws_out_of_range).remote();
  try {
    prism::get(ref, result_timeout);
    BOOST_FAIL("get returned a value of a task that threw");
  } catch (const prism::task_error& e) {
    BOOST_TEST(e.exception_type() == "std::out_of_range");
    BOOST_TEST(e.exception_message() == "boom");
  }
}

BOOST_AUTO_TEST_CASE(task_error_is_not_retryable) {
  auto ref = prism::task(throws_out_of_range).remote();
  try {
    prism::get(ref, result_timeout);
    BOOST_FAIL("get returned a value of a task that threw");
  } catch (const prism::task_error& e) {
    BOOST_TEST((e.code() == prism::errc::task_failed));
    BOOST_TEST(!e.retryable());
  }
}

BOOST_AUTO_TEST_CASE(task_error_names_the_function_that_threw) {
  auto ref = prism::task(throws_out_of_range).remote();
  try {
    prism::get(ref, result_timeout);
    BOOST_FAIL("get returned a value of a task that threw");
  } catch (const prism::task_error& e) {
    BOOST_TEST(e.function_name() == "errors_test::throws_out_of_range");
  }
}

BOOST_AUTO_TEST_CASE(task_throwing_a_user_exception_reports_its_type) {
  auto ref = prism::task(throws_user_exception).remote();
  try {
    prism::get(ref, result_timeout);
    BOOST_FAIL("get returned a value of a task that threw");
  } catch (const prism::task_error& e) {
    BOOST_TEST(e.exception_type() == "errors_test::insufficient_funds");
    BOOST_TEST(e.exception_message() == "balance is 0");
  }
}

BOOST_AUTO_TEST_CASE(task_throwing_a_non_exception_reports_unknown_type) {
  auto ref = prism::task(throws_an_int).remote();
  try {
    prism::get(ref, result_timeout);
    BOOST_FAIL("get returned a value of a task that threw");
  } catch (const prism::task_error& e) {
    BOOST_TEST(e.exception_type() == "unknown");
  }
}

BOOST_AUTO_TEST_CASE(task_depending_on_a_failed_task_fails_with_its_error) {
  auto failed = prism::task(throws_out_of_range).remote();
  auto dependent = prism::task(plus1).remote(failed);
  try {
    prism::get(dependent, result_timeout);
    BOOST_FAIL("get returned a value of a task whose argument failed");
  } catch (const prism::task_error& e) {
    BOOST_TEST(e.exception_type() == "std::out_of_range");
  }
}

BOOST_AUTO_TEST_CASE(task_getting_a_failed_nested_task_catches_its_task_error) {
  auto ref = prism::task(catches_nested_error).remote();
  BOOST_TEST(prism::get(ref, result_timeout) == "std::out_of_range");
}

// -- unregistered and registered functions
// -------------------------------------

BOOST_AUTO_TEST_CASE(
    calling_an_unregistered_function_throws_function_not_found) {
  try {
    [[maybe_unused]] auto ref = prism::task(unregistered).remote(1);
    BOOST_FAIL("remote accepted a function that was never registered");
  } catch (const prism::function_not_found_error& e) {
    BOOST_TEST((e.code() == prism::errc::function_not_found));
    BOOST_TEST(!e.retryable());
  }
}

BOOST_AUTO_TEST_CASE(function_registered_at_run_time_can_be_called) {
  prism::register_function("errors_test::late_square", late_square);
  auto ref = prism::task(late_square).remote(7);
  BOOST_TEST(prism::get(ref, result_timeout) == 49);
}

BOOST_AUTO_TEST_CASE(registering_a_taken_name_throws_registration_error) {
  prism::register_function("errors_test::taken_name", taken_name_first);
  BOOST_CHECK_THROW(
      prism::register_function("errors_test::taken_name", taken_name_second),
      prism::registration_error);
}

BOOST_AUTO_TEST_CASE(registering_a_function_twice_throws_registration_error) {
  prism::register_function("errors_test::registered_once", registered_twice);
  BOOST_CHECK_THROW(prism::register_function("errors_test::registered_again",
                                             registered_twice),
                    prism::registration_error);
}

BOOST_AUTO_TEST_CASE(
    registering_under_a_prism_remote_name_throws_registration_error) {
  BOOST_CHECK_THROW(
      prism::register_function("errors_test::plus1", taken_name_second),
      prism::registration_error);
}

BOOST_AUTO_TEST_CASE(
    registering_under_an_empty_name_throws_registration_error) {
  BOOST_CHECK_THROW(prism::register_function("", empty_name),
                    prism::registration_error);
}

// -- bad arguments and options
// -------------------------------------------------

BOOST_AUTO_TEST_CASE(passing_an_empty_ref_to_a_task_throws_invalid_argument) {
  prism::object_ref<int> empty;
  BOOST_CHECK_THROW(prism::task(plus1).remote(empty),
                    prism::invalid_argument_error);
}

BOOST_AUTO_TEST_CASE(a_task_given_a_forged_ref_fails_with_invalid_argument) {
  for (auto forged : {forged_ref_of_a_worker(), forged_ref_of_the_driver()}) {
    BOOST_TEST_CONTEXT("owner " << forged.owner().hex()) {
      BOOST_CHECK_THROW(
          prism::get(prism::task(plus1).remote(forged), result_timeout),
          prism::invalid_argument_error);
    }
  }
}

BOOST_AUTO_TEST_CASE(
    get_of_a_forged_ref_of_a_live_worker_throws_invalid_argument) {
  auto forged = forged_ref_of_a_worker();
  BOOST_CHECK_THROW(prism::get(forged), prism::invalid_argument_error);
  BOOST_CHECK_THROW(prism::get(forged, result_timeout),
                    prism::invalid_argument_error);
}

BOOST_AUTO_TEST_CASE(
    get_of_a_forged_ref_of_the_driver_throws_invalid_argument) {
  auto forged = forged_ref_of_the_driver();
  BOOST_CHECK_THROW(prism::get(forged), prism::invalid_argument_error);
  BOOST_CHECK_THROW(prism::get(forged, result_timeout),
                    prism::invalid_argument_error);
}

// Like an object that failed, a forged ref is done: `wait` counts it ready
// (and `get` of it throws), rather than waiting for it or returning early.
BOOST_AUTO_TEST_CASE(wait_counts_a_forged_ref_as_ready) {
  for (auto forged : {forged_ref_of_a_worker(), forged_ref_of_the_driver()}) {
    BOOST_TEST_CONTEXT("owner " << forged.owner().hex()) {
      auto done = prism::wait(std::vector{forged}, 1, result_timeout);
      BOOST_TEST(done.ready.size() == 1u);
      BOOST_TEST(done.not_ready.empty());
    }
  }
}

BOOST_AUTO_TEST_CASE(max_retries_below_minus_one_throws_invalid_argument) {
  BOOST_CHECK_THROW(prism::task(plus1).max_retries(-2),
                    prism::invalid_argument_error);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace errors_test
