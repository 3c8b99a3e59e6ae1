#define BOOST_TEST_MODULE prism_cluster_tests
#include <boost/test/unit_test.hpp>
