// The suite runs twice: with worker threads, and with worker processes
// (PRISM_WORKER_PROCESSES=1), whose processes are this program run again.
#define BOOST_TEST_MODULE prism_integration_tests
#define BOOST_TEST_NO_MAIN
#include <boost/test/unit_test.hpp>

#include <prism/prism.hpp>

int main(int argc, char* argv[]) {
  prism::serve_if_worker();
  return boost::unit_test::unit_test_main(&init_unit_test, argc, argv);
}
