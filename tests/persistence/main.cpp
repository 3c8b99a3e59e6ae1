// prism_persistence_tests. The binary doubles as the crash test's writer:
// started with crash_writer_flag, it writes records until it is killed.

#define BOOST_TEST_MODULE prism_persistence_tests
#define BOOST_TEST_NO_MAIN
#include <boost/test/unit_test.hpp>

#include <string_view>

#include "test_support.hpp"

int main(int argc, char** argv) {
  using prism::persistence::testing::crash_writer_flag;
  if (argc > 1 && std::string_view{argv[1]} == crash_writer_flag)
    return prism::persistence::testing::run_crash_writer(argc, argv);
  return boost::unit_test::unit_test_main(&init_unit_test, argc, argv);
}
