// The test program is also the program of its worker processes: each is
// this executable run again, and serves as a worker from the top of main.

#define BOOST_TEST_MODULE prism_worker_process_tests
#define BOOST_TEST_NO_MAIN
#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <unistd.h>

#include <prism/prism.hpp>

#include "worker_env.hpp"

int main(int argc, char* argv[]) {
  // Ways a worker process can go wrong before it serves, for the tests of
  // its start-up: a program that ends, or hangs, before calling init.
  if (prism::is_worker_process()) {
    if (std::getenv(worker_test::exit_before_init) != nullptr)
      return 7;
    if (std::getenv(worker_test::hang_before_init) != nullptr)
      for (;;)
        ::pause();
  }
  prism::serve_if_worker();
  return boost::unit_test::unit_test_main(&init_unit_test, argc, argv);
}
