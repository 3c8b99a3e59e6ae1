// Starting and stopping Prism, and what the API does when it is not running.
// These tests manage the cluster themselves, so each one starts with Prism
// stopped and leaves it stopped.

#include <boost/test/unit_test.hpp>

#include <memory>

#include "cluster_fixture.hpp"

namespace lifecycle_test {

using prism_test::result_timeout;

int plus1(int x) {
  return x + 1;
}

PRISM_REMOTE(lifecycle_test::plus1);

using namespace lifecycle_test;

namespace {

/// Boost fixture: checks that no earlier test left Prism running.
struct stopped_fixture {
  stopped_fixture() {
    BOOST_REQUIRE(!prism::is_initialized());
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(lifecycle, stopped_fixture)

BOOST_AUTO_TEST_CASE(is_initialized_is_true_only_between_init_and_shutdown) {
  BOOST_TEST(!prism::is_initialized());
  prism::init(prism_test::make_config(2));
  BOOST_TEST(prism::is_initialized());
  prism::shutdown();
  BOOST_TEST(!prism::is_initialized());
}

BOOST_AUTO_TEST_CASE(init_while_running_throws_error) {
  prism_test::cluster running{prism_test::make_config(2)};
  BOOST_CHECK_THROW(prism::init(prism_test::make_config(2)), prism::error);
}

BOOST_AUTO_TEST_CASE(failed_second_init_leaves_the_running_cluster_working) {
  prism_test::cluster running{prism_test::make_config(2)};
  BOOST_CHECK_THROW(prism::init(prism_test::make_config(2)), prism::error);
  BOOST_TEST(prism::is_initialized());
  BOOST_TEST(prism::get(prism::task(plus1).remote(1), result_timeout) == 2);
}

BOOST_AUTO_TEST_CASE(shutdown_when_not_running_does_nothing) {
  BOOST_CHECK_NO_THROW(prism::shutdown());
  BOOST_TEST(!prism::is_initialized());
}

BOOST_AUTO_TEST_CASE(init_with_negative_cpus_throws_invalid_argument_error) {
  BOOST_CHECK_THROW(prism::init(prism_test::make_config(-1)),
                    prism::invalid_argument_error);
  BOOST_TEST(!prism::is_initialized());
  prism::shutdown(); // In case init started anything before it threw.
}

BOOST_AUTO_TEST_CASE(cluster_runs_tasks_again_after_a_restart) {
  {
    prism_test::cluster first{prism_test::make_config(2)};
    BOOST_TEST(prism::get(prism::task(plus1).remote(1), result_timeout) == 2);
  }
  prism_test::cluster second{prism_test::make_config(2)};
  BOOST_TEST(prism::get(prism::task(plus1).remote(2), result_timeout) == 3);
}

// -- calls without a running Prism
// ---------------------------------------------

BOOST_AUTO_TEST_CASE(put_before_init_throws_not_initialized_error) {
  BOOST_CHECK_THROW(prism::put(1), prism::not_initialized_error);
}

BOOST_AUTO_TEST_CASE(remote_before_init_throws_not_initialized_error) {
  BOOST_CHECK_THROW(prism::task(plus1).remote(1), prism::not_initialized_error);
}

BOOST_AUTO_TEST_CASE(
    get_runtime_context_before_init_throws_not_initialized_error) {
  BOOST_CHECK_THROW(prism::get_runtime_context(), prism::not_initialized_error);
}

// There is no valid ref before the first init, so `get` without a running
// Prism is reached with a ref that outlived its session.
BOOST_AUTO_TEST_CASE(get_after_shutdown_throws_not_initialized_error) {
  prism::object_ref<int> ref;
  {
    prism_test::cluster session{prism_test::make_config(2)};
    ref = prism::put(1);
  }
  BOOST_CHECK_THROW(prism::get(ref, result_timeout),
                    prism::not_initialized_error);
}

// A ref keeps its runtime only weakly: once Prism is shut down, the object
// it names is gone with the driver's store, though the ref is still held.
BOOST_AUTO_TEST_CASE(ref_outliving_its_session_keeps_none_of_its_objects) {
  auto baseline = prism::testing::objects_in_scope();
  auto ref = std::make_unique<prism::object_ref<int>>();
  {
    prism_test::cluster session{prism_test::make_config(2)};
    *ref = prism::task(plus1).remote(1);
  }
  BOOST_TEST(prism_test::wait_until([&] {
               return prism::testing::objects_in_scope() == baseline;
             }),
             "a ref held after shutdown kept its session's store alive");
  // Dropping it after shutdown reaches no runtime.
  ref.reset();
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace lifecycle_test
