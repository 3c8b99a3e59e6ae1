// Error kinds: which are retryable, their names, and the typed exceptions
// that carry them.

#include <boost/test/unit_test.hpp>

#include <string>
#include <utility>
#include <vector>

#include "prism/detail/runtime.hpp"
#include "prism/error.hpp"

namespace errors_test {

BOOST_AUTO_TEST_SUITE(error_codes)

// -- retryable kinds
// -----------------------------------------------------------

BOOST_AUTO_TEST_CASE(worker_crashed_and_timeout_are_retryable) {
  BOOST_TEST(prism::is_retryable(prism::errc::worker_crashed));
  BOOST_TEST(prism::is_retryable(prism::errc::timeout));
}

BOOST_AUTO_TEST_CASE(failures_that_would_repeat_are_not_retryable) {
  for (auto code :
       {prism::errc::task_failed, prism::errc::function_not_found,
        prism::errc::invalid_argument, prism::errc::type_mismatch,
        prism::errc::registration_failed, prism::errc::owner_died,
        prism::errc::unschedulable, prism::errc::object_lost,
        prism::errc::reconstruction_failed, prism::errc::storage_corrupt,
        prism::errc::permission_denied}) {
    BOOST_TEST_CONTEXT("code " << prism::to_string(code)) {
      BOOST_TEST(!prism::is_retryable(code));
    }
  }
}

BOOST_AUTO_TEST_CASE(error_retryable_follows_its_code) {
  BOOST_TEST(prism::worker_crashed_error("died").retryable());
  BOOST_TEST(prism::timeout_error("late").retryable());
  BOOST_TEST(prism::object_store_full_error("full").retryable());
  BOOST_TEST(prism::out_of_memory_error("killed").retryable());
  BOOST_TEST(!prism::task_error("std::out_of_range", "boom", "f").retryable());
  BOOST_TEST(!prism::invalid_argument_error("bad").retryable());
}

// -- names
// ---------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(to_string_names_each_code_after_its_enumerator) {
  std::vector<std::pair<prism::errc, std::string>> names{
      {prism::errc::ok, "ok"},
      {prism::errc::task_failed, "task_failed"},
      {prism::errc::worker_crashed, "worker_crashed"},
      {prism::errc::timeout, "timeout"},
      {prism::errc::function_not_found, "function_not_found"},
      {prism::errc::invalid_argument, "invalid_argument"},
      {prism::errc::type_mismatch, "type_mismatch"},
      {prism::errc::registration_failed, "registration_failed"},
      {prism::errc::not_initialized, "not_initialized"},
      {prism::errc::internal, "internal"},
      {prism::errc::actor_died, "actor_died"},
      {prism::errc::gcs_unavailable, "gcs_unavailable"},
      {prism::errc::owner_died, "owner_died"},
      {prism::errc::unschedulable, "unschedulable"},
      {prism::errc::object_lost, "object_lost"},
      {prism::errc::reconstruction_failed, "reconstruction_failed"},
      {prism::errc::storage_corrupt, "storage_corrupt"},
      {prism::errc::permission_denied, "permission_denied"},
      {prism::errc::task_cancelled, "task_cancelled"},
      {prism::errc::object_store_full, "object_store_full"},
      {prism::errc::out_of_memory, "out_of_memory"},
  };
  for (const auto& [code, name] : names)
    BOOST_TEST(prism::to_string(code) == name);
}

// -- typed exceptions
// ----------------------------------------------------------

BOOST_AUTO_TEST_CASE(each_error_class_carries_its_code) {
  BOOST_TEST(
      (prism::task_error("t", "m", "f").code() == prism::errc::task_failed));
  BOOST_TEST(
      (prism::worker_crashed_error("m").code() == prism::errc::worker_crashed));
  BOOST_TEST((prism::timeout_error("m").code() == prism::errc::timeout));
  BOOST_TEST((prism::function_not_found_error("m").code() ==
              prism::errc::function_not_found));
  BOOST_TEST((prism::invalid_argument_error("m").code() ==
              prism::errc::invalid_argument));
  BOOST_TEST(
      (prism::type_mismatch_error("m").code() == prism::errc::type_mismatch));
  BOOST_TEST((prism::registration_error("m").code() ==
              prism::errc::registration_failed));
  BOOST_TEST((prism::not_initialized_error("m").code() ==
              prism::errc::not_initialized));
  BOOST_TEST((prism::owner_died_error("m").code() == prism::errc::owner_died));
  BOOST_TEST(
      (prism::unschedulable_error("m").code() == prism::errc::unschedulable));
  BOOST_TEST(
      (prism::object_lost_error("m").code() == prism::errc::object_lost));
  BOOST_TEST((prism::reconstruction_failed_error("m").code() ==
              prism::errc::reconstruction_failed));
}

BOOST_AUTO_TEST_CASE(error_what_is_its_message) {
  prism::error e{prism::errc::internal, "the store is gone"};
  BOOST_TEST(e.what() == std::string{"the store is gone"});
}

BOOST_AUTO_TEST_CASE(task_error_keeps_the_exception_type_message_and_function) {
  prism::task_error e{"std::out_of_range", "boom", "plus"};
  BOOST_TEST(e.exception_type() == "std::out_of_range");
  BOOST_TEST(e.exception_message() == "boom");
  BOOST_TEST(e.function_name() == "plus");
}

// -- errors that crossed a process boundary
// ------------------------------------

BOOST_AUTO_TEST_CASE(throw_error_rebuilds_a_task_error_with_its_fields) {
  prism::detail::error_info info;
  info.code = prism::errc::task_failed;
  info.message = "boom";
  info.exception_type = "std::out_of_range";
  info.function_name = "plus";
  try {
    prism::detail::throw_error(info);
  } catch (const prism::task_error& e) {
    BOOST_TEST(e.exception_type() == "std::out_of_range");
    BOOST_TEST(e.exception_message() == "boom");
    BOOST_TEST(e.function_name() == "plus");
  }
}

BOOST_AUTO_TEST_CASE(throw_error_rebuilds_the_typed_exception_of_each_code) {
  prism::detail::error_info info;
  info.message = "m";
  info.code = prism::errc::worker_crashed;
  BOOST_CHECK_THROW(prism::detail::throw_error(info),
                    prism::worker_crashed_error);
  info.code = prism::errc::timeout;
  BOOST_CHECK_THROW(prism::detail::throw_error(info), prism::timeout_error);
  info.code = prism::errc::function_not_found;
  BOOST_CHECK_THROW(prism::detail::throw_error(info),
                    prism::function_not_found_error);
  info.code = prism::errc::invalid_argument;
  BOOST_CHECK_THROW(prism::detail::throw_error(info),
                    prism::invalid_argument_error);
  info.code = prism::errc::type_mismatch;
  BOOST_CHECK_THROW(prism::detail::throw_error(info),
                    prism::type_mismatch_error);
  info.code = prism::errc::not_initialized;
  BOOST_CHECK_THROW(prism::detail::throw_error(info),
                    prism::not_initialized_error);
  info.code = prism::errc::owner_died;
  BOOST_CHECK_THROW(prism::detail::throw_error(info), prism::owner_died_error);
  info.code = prism::errc::unschedulable;
  BOOST_CHECK_THROW(prism::detail::throw_error(info),
                    prism::unschedulable_error);
  info.code = prism::errc::object_lost;
  BOOST_CHECK_THROW(prism::detail::throw_error(info), prism::object_lost_error);
  info.code = prism::errc::reconstruction_failed;
  BOOST_CHECK_THROW(prism::detail::throw_error(info),
                    prism::reconstruction_failed_error);
}

BOOST_AUTO_TEST_CASE(throw_error_keeps_the_code_of_an_internal_error) {
  prism::detail::error_info info;
  info.code = prism::errc::internal;
  info.message = "m";
  try {
    prism::detail::throw_error(info);
  } catch (const prism::error& e) {
    BOOST_TEST((e.code() == prism::errc::internal));
  }
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace errors_test
