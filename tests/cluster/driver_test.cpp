// Drivers attached to a cluster of `prism start` processes: this test
// process is the driver, the head and nodes are daemons of its session.

#include <cstdlib>

#include <boost/test/unit_test.hpp>

#include <prism/prism.hpp>

#include "prism_command.hpp"

namespace driver_test {

using namespace prism::cluster_test;
using namespace std::chrono_literals;

int square(int x) {
  return x * x;
}

PRISM_REMOTE(driver_test::square);

namespace {

/// `prism status` says `what`.
bool status_says(process_cluster& s, const std::string& what) {
  auto r = s.run({"status"});
  return r.status == 0 && contains(r.out, what);
}

/// Ends the attached driver whatever a test case does.
struct shutdown_guard {
  ~shutdown_guard() {
    prism::shutdown();
    ::unsetenv("PRISM_ADDRESS");
  }
};

/// Starts a head in `s` and attaches this process to it with namespace `ns`;
/// returns the config it attached with.
prism::config attach_to_new_head(process_cluster& s, const std::string& ns) {
  prism::config cfg;
  cfg.address = s.start_head({"--num-cpus", "1"});
  cfg.ns = ns;
  prism::init(cfg);
  return cfg;
}

} // namespace

BOOST_AUTO_TEST_SUITE(attached_driver)

BOOST_AUTO_TEST_CASE(a_driver_attaches_by_address_with_a_job_of_its_own) {
  process_cluster s{bare_session()};
  shutdown_guard guard;
  auto cfg = attach_to_new_head(s, "attached");
  BOOST_TEST(status_says(s, "Jobs: 1 running, 0 finished"));
  BOOST_TEST(!prism::kv::put("color", "blue"));
  BOOST_TEST((prism::kv::get("color") == "blue"));
  {
    // A second job of this process sees the same table.
    auto other = prism::client::connect("attached");
    BOOST_TEST(status_says(s, "Jobs: 2 running, 0 finished"));
    other.shutdown();
  }
  BOOST_TEST(status_says(s, "Jobs: 1 running, 1 finished"));
  prism::shutdown();
  BOOST_TEST(status_says(s, "Jobs: 0 running, 2 finished"));
  // The head runs on: another driver attaches and reads what was written.
  prism::init(cfg);
  BOOST_TEST((prism::kv::get("color") == "blue"));
  BOOST_TEST(s.sanitizer_reports() == "");
}

BOOST_AUTO_TEST_CASE(prism_address_in_the_environment_attaches_init) {
  process_cluster s{bare_session()};
  auto address = s.start_head({"--num-cpus", "1"});
  shutdown_guard guard;
  ::setenv("PRISM_ADDRESS", address.c_str(), 1);
  prism::init();
  BOOST_TEST(status_says(s, "Jobs: 1 running"));
}

BOOST_AUTO_TEST_CASE(an_unreachable_cluster_fails_init_with_a_typed_error) {
  shutdown_guard guard;
  prism::config cfg;
  cfg.address = "127.0.0.1:1";
  BOOST_CHECK_THROW(prism::init(cfg), prism::gcs_unavailable_error);
  BOOST_TEST(!prism::is_initialized());
  cfg.address = "no-port";
  BOOST_CHECK_THROW(prism::init(cfg), prism::invalid_argument_error);
  BOOST_TEST(!prism::is_initialized());
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace driver_test
