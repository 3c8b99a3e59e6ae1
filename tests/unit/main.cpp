#define BOOST_TEST_MODULE prism_unit_tests
#include <boost/test/unit_test.hpp>
