// Errors a caller sees: exceptions thrown by tasks, calls of unregistered
// functions, bad registrations and bad arguments.

#include <boost/test/unit_test.hpp>

#include <stdexcept>
#include <string>

#include "cluster_fixture.hpp"

using prism_test::result_timeout;

namespace errors_test {

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

// Catches the task_error of a child it gets, and reports the child's
// exception type.
std::string catches_child_error() {
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

} // namespace errors_test

PRISM_REMOTE(errors_test::throws_out_of_range,
             errors_test::throws_user_exception, errors_test::throws_an_int,
             errors_test::plus1, errors_test::catches_child_error);

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

BOOST_AUTO_TEST_CASE(task_getting_a_failed_child_catches_its_task_error) {
  auto ref = prism::task(catches_child_error).remote();
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

BOOST_AUTO_TEST_CASE(max_retries_below_minus_one_throws_invalid_argument) {
  BOOST_CHECK_THROW(prism::task(plus1).max_retries(-2),
                    prism::invalid_argument_error);
}

BOOST_AUTO_TEST_SUITE_END()
