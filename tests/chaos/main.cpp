#define BOOST_TEST_MODULE prism_chaos_tests
#include <boost/test/unit_test.hpp>
