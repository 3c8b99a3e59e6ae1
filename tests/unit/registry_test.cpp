// The function registry: PRISM_REMOTE and register_function, the names they
// give, and the invokers they build.

#include <boost/test/unit_test.hpp>

#include <stdexcept>
#include <string>
#include <vector>

#include "prism/task.hpp"

namespace registry_test {

int square(int x) {
  return x * x;
}

std::string repeat(const std::string& s, int n) {
  std::string result;
  for (int i = 0; i < n; ++i)
    result += s;
  return result;
}

void does_nothing() {}

int throws_out_of_range(int) {
  throw std::out_of_range("boom");
}

int over(int x) {
  return x;
}

int over(int x, int y) {
  return x + y;
}

// Never registered.
int unregistered(int x) {
  return x;
}

// Registered at run time by the tests.
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

PRISM_REMOTE(registry_test::square, registry_test::repeat,
             registry_test::does_nothing, registry_test::throws_out_of_range);
PRISM_REMOTE(PRISM_FUNC(registry_test::over, int),
             prism::overload<int, int>(registry_test::over));

using namespace registry_test;
using prism::detail::callable_key;
using prism::detail::decode;
using prism::detail::encode;
using prism::detail::function_registry;
using prism::detail::split_remote_names;

namespace {

const function_registry::entry& registered_entry(const std::string& name) {
  auto entry = function_registry::instance().find(name);
  BOOST_REQUIRE_MESSAGE(entry != nullptr, name << " is not registered");
  return *entry;
}

} // namespace

BOOST_AUTO_TEST_SUITE(registry)

// -- split_remote_names
// --------------------------------------------------------

BOOST_AUTO_TEST_CASE(split_remote_names_splits_at_top_level_commas_and_trims) {
  auto names = split_remote_names(
      "a, b, PRISM_FUNC(f, int), prism::overload<int, int>(g)");
  BOOST_TEST(names ==
                 (std::vector<std::string>{"a", "b", "PRISM_FUNC(f, int)",
                                           "prism::overload<int, int>(g)"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(split_remote_names_of_one_name_returns_it) {
  auto names = split_remote_names("  ns::f  ");
  BOOST_TEST(names == (std::vector<std::string>{"ns::f"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(
    split_remote_names_keeps_nested_template_arguments_together) {
  auto names =
      split_remote_names("prism::overload<std::map<int, int>, int>(g),\n  h");
  BOOST_TEST(names == (std::vector<std::string>{
                          "prism::overload<std::map<int, int>, int>(g)", "h"}),
             boost::test_tools::per_element());
}

// -- PRISM_REMOTE
// --------------------------------------------------------------

BOOST_AUTO_TEST_CASE(prism_remote_registers_each_function_under_its_text) {
  for (const char* name :
       {"registry_test::square", "registry_test::repeat",
        "registry_test::does_nothing", "registry_test::throws_out_of_range"})
    BOOST_TEST(function_registry::instance().find(name) != nullptr, name);
}

BOOST_AUTO_TEST_CASE(prism_remote_maps_a_function_pointer_to_its_name) {
  auto name = function_registry::instance().name_of(callable_key(&square));
  BOOST_REQUIRE(name != nullptr);
  BOOST_TEST(*name == "registry_test::square");
}

BOOST_AUTO_TEST_CASE(prism_remote_names_overloads_after_their_selector_text) {
  BOOST_TEST(prism::detail::registered_name(callable_key(prism::overload<int>(
                 over))) == "PRISM_FUNC(registry_test::over, int)");
  BOOST_TEST(prism::detail::registered_name(
                 callable_key(prism::overload<int, int>(over))) ==
             "prism::overload<int, int>(registry_test::over)");
}

BOOST_AUTO_TEST_CASE(valid_prism_remote_registrations_report_no_errors) {
  BOOST_TEST(function_registry::instance().static_errors().empty());
}

// -- invokers
// ------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(invoker_calls_the_function_on_encoded_arguments) {
  auto result = registered_entry("registry_test::square").call({encode(7)});
  BOOST_TEST(decode<int>(result) == 49);
}

BOOST_AUTO_TEST_CASE(invoker_passes_a_const_reference_parameter) {
  auto result = registered_entry("registry_test::repeat")
                    .call({encode(std::string{"ab"}), encode(3)});
  BOOST_TEST(decode<std::string>(result) == "ababab");
}

BOOST_AUTO_TEST_CASE(invoker_of_a_void_function_returns_a_void_value) {
  auto result = registered_entry("registry_test::does_nothing").call({});
  BOOST_TEST(result.tag == prism::detail::void_tag);
}

BOOST_AUTO_TEST_CASE(invoker_passes_on_what_the_function_throws) {
  const auto& entry = registered_entry("registry_test::throws_out_of_range");
  BOOST_CHECK_THROW(entry.call({encode(1)}), std::out_of_range);
}

BOOST_AUTO_TEST_CASE(
    invoker_given_an_argument_of_another_type_throws_mismatch) {
  const auto& entry = registered_entry("registry_test::square");
  BOOST_CHECK_THROW(entry.call({encode(std::string{"7"})}),
                    prism::type_mismatch_error);
}

BOOST_AUTO_TEST_CASE(invoker_given_too_few_arguments_throws_invalid_argument) {
  const auto& entry = registered_entry("registry_test::repeat");
  BOOST_CHECK_THROW(entry.call({encode(std::string{"ab"})}),
                    prism::invalid_argument_error);
}

BOOST_AUTO_TEST_CASE(invoker_given_too_many_arguments_throws_invalid_argument) {
  const auto& entry = registered_entry("registry_test::square");
  BOOST_CHECK_THROW(entry.call({encode(1), encode(2)}),
                    prism::invalid_argument_error);
}

// -- lookups and run-time registration
// -----------------------------------------

BOOST_AUTO_TEST_CASE(find_of_an_unknown_name_returns_null) {
  BOOST_TEST(function_registry::instance().find("registry_test::nope") ==
             nullptr);
}

BOOST_AUTO_TEST_CASE(registered_name_of_an_unregistered_function_throws) {
  BOOST_CHECK_THROW(prism::detail::registered_name(callable_key(&unregistered)),
                    prism::function_not_found_error);
}

BOOST_AUTO_TEST_CASE(
    remote_of_an_unregistered_function_throws_function_not_found) {
  BOOST_CHECK_THROW(prism::task(unregistered).remote(1),
                    prism::function_not_found_error);
}

BOOST_AUTO_TEST_CASE(register_function_under_a_taken_name_throws) {
  prism::register_function("registry_test::taken_name", taken_name_first);
  BOOST_CHECK_THROW(
      prism::register_function("registry_test::taken_name", taken_name_second),
      prism::registration_error);
}

BOOST_AUTO_TEST_CASE(register_function_of_a_registered_function_throws) {
  prism::register_function("registry_test::registered_once", registered_twice);
  BOOST_CHECK_THROW(prism::register_function("registry_test::registered_again",
                                             registered_twice),
                    prism::registration_error);
}

BOOST_AUTO_TEST_CASE(register_function_under_an_empty_name_throws) {
  BOOST_CHECK_THROW(prism::register_function("", empty_name),
                    prism::registration_error);
}

BOOST_AUTO_TEST_CASE(failed_registration_leaves_the_first_function_in_place) {
  BOOST_CHECK_THROW(
      prism::register_function("registry_test::square", taken_name_second),
      prism::registration_error);
  auto result = registered_entry("registry_test::square").call({encode(3)});
  BOOST_TEST(decode<int>(result) == 9);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace registry_test
