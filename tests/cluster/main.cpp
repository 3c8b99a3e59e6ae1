// The test program is also the program of the worker processes that the
// nodes start for its jobs: each serves as a worker from the top of main.

#define BOOST_TEST_MODULE prism_cluster_tests
#define BOOST_TEST_NO_MAIN
#include <boost/test/unit_test.hpp>

#include <prism/prism.hpp>

int main(int argc, char* argv[]) {
  prism::serve_if_worker();
  return boost::unit_test::unit_test_main(&init_unit_test, argc, argv);
}
