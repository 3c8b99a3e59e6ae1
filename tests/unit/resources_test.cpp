// Validation of resource requests and task options, before anything runs.

#include <boost/test/unit_test.hpp>

#include <limits>

#include "prism/task.hpp"

namespace resources_test {

int identity(int x) {
  return x;
}

using prism::detail::validate_resources;
using resources_test::identity;

BOOST_AUTO_TEST_SUITE(resource_validation)

// -- accepted
// ------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(whole_cpu_is_accepted) {
  BOOST_CHECK_NO_THROW(validate_resources({{"CPU", 1}}));
}

BOOST_AUTO_TEST_CASE(fraction_of_one_is_accepted) {
  BOOST_CHECK_NO_THROW(validate_resources({{"GPU", 0.5}}));
  BOOST_CHECK_NO_THROW(validate_resources({{"GPU", 0.25}}));
}

BOOST_AUTO_TEST_CASE(whole_quantity_above_one_is_accepted) {
  BOOST_CHECK_NO_THROW(validate_resources({{"CPU", 2}}));
  BOOST_CHECK_NO_THROW(validate_resources({{"GPU", 8}}));
}

BOOST_AUTO_TEST_CASE(several_valid_resources_are_accepted) {
  BOOST_CHECK_NO_THROW(
      validate_resources({{"CPU", 1}, {"GPU", 0.5}, {"memory_gb", 4}}));
}

// -- rejected
// ------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(empty_resource_name_is_rejected) {
  BOOST_CHECK_THROW(validate_resources({{"", 1}}),
                    prism::invalid_argument_error);
}

BOOST_AUTO_TEST_CASE(zero_quantity_is_rejected) {
  BOOST_CHECK_THROW(validate_resources({{"CPU", 0}}),
                    prism::invalid_argument_error);
}

BOOST_AUTO_TEST_CASE(negative_quantity_is_rejected) {
  BOOST_CHECK_THROW(validate_resources({{"CPU", -1}}),
                    prism::invalid_argument_error);
  BOOST_CHECK_THROW(validate_resources({{"GPU", -0.5}}),
                    prism::invalid_argument_error);
}

BOOST_AUTO_TEST_CASE(fractional_quantity_above_one_is_rejected) {
  BOOST_CHECK_THROW(validate_resources({{"GPU", 1.5}}),
                    prism::invalid_argument_error);
  BOOST_CHECK_THROW(validate_resources({{"CPU", 2.25}}),
                    prism::invalid_argument_error);
}

BOOST_AUTO_TEST_CASE(nan_quantity_is_rejected) {
  BOOST_CHECK_THROW(
      validate_resources({{"CPU", std::numeric_limits<double>::quiet_NaN()}}),
      prism::invalid_argument_error);
}

BOOST_AUTO_TEST_CASE(one_bad_resource_among_good_ones_is_rejected) {
  BOOST_CHECK_THROW(validate_resources({{"CPU", 1}, {"GPU", 1.5}}),
                    prism::invalid_argument_error);
}

// -- task options
// --------------------------------------------------------------

BOOST_AUTO_TEST_CASE(task_resources_rejects_a_bad_request_before_submitting) {
  BOOST_CHECK_THROW(prism::task(identity).resources({{"GPU", 1.5}}),
                    prism::invalid_argument_error);
}

BOOST_AUTO_TEST_CASE(task_resources_accepts_a_valid_request) {
  BOOST_CHECK_NO_THROW(prism::task(identity).resources({{"GPU", 0.5}}));
}

BOOST_AUTO_TEST_CASE(max_retries_of_minus_one_is_accepted) {
  BOOST_CHECK_NO_THROW(prism::task(identity).max_retries(-1));
}

BOOST_AUTO_TEST_CASE(max_retries_below_minus_one_is_rejected) {
  BOOST_CHECK_THROW(prism::task(identity).max_retries(-2),
                    prism::invalid_argument_error);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace resources_test
