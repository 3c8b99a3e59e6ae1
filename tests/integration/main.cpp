#define BOOST_TEST_MODULE prism_integration_tests
#include <boost/test/unit_test.hpp>
