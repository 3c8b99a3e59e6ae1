// Concurrency groups of an actor: a group's calls run up to its size at
// once and never wait for another group's, so a health check answers while
// slow calls fill the default group. Runs with worker threads and again
// with worker processes (tests/integration/CMakeLists.txt).

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "cluster_fixture.hpp"

namespace concurrency_groups_test {

using prism_test::result_timeout;
using clock = std::chrono::steady_clock;

/// A service with slow calls, a health check, and calls that only return
/// true if `expected` of them run at once.
class service {
public:
  static service* create(int expected) {
    return new service(expected);
  }

  int slow(int ms) {
    // The time itself is the work: a call that holds its group's thread.
    std::this_thread::sleep_for(std::chrono::milliseconds{ms});
    return ms;
  }

  bool health() const {
    return true;
  }

  bool meet() {
    return meeting_.arrive_and_wait();
  }

  /// Records `x`; returns what it recorded so far, in the order calls ran.
  std::vector<int> record(int x) {
    seen_.push_back(x);
    return seen_;
  }

  /// Bound to a group that actors may not declare.
  bool elsewhere() const {
    return true;
  }

private:
  explicit service(int expected) {
    meeting_.reset(expected);
  }

  prism_test::rendezvous meeting_;
  std::vector<int> seen_;
};

PRISM_REMOTE(concurrency_groups_test::service::create,
             &concurrency_groups_test::service::slow,
             &concurrency_groups_test::service::health,
             &concurrency_groups_test::service::meet,
             &concurrency_groups_test::service::record,
             &concurrency_groups_test::service::elsewhere);
PRISM_CONCURRENCY_GROUP("health", &concurrency_groups_test::service::health);
PRISM_CONCURRENCY_GROUP("undeclared",
                        &concurrency_groups_test::service::elsewhere);

using namespace concurrency_groups_test;

BOOST_FIXTURE_TEST_SUITE(concurrency_groups, prism_test::cluster_fixture)

// 100 slow calls fill the default group (one at a time); the health check,
// bound to a group of its own, answers at once all the same.
BOOST_AUTO_TEST_CASE(health_answers_while_slow_calls_fill_the_default_group) {
  auto svc = prism::actor(service::create)
                 .concurrency_groups({{"health", 1}})
                 .remote(1);
  BOOST_REQUIRE(
      prism::get(svc.task(&service::health).remote(), result_timeout));
  std::vector<prism::object_ref<int>> slow;
  for (int i = 0; i < 100; ++i)
    slow.push_back(svc.task(&service::slow).remote(2'000));
  std::vector<double> answered_ms;
  for (int i = 0; i < 5; ++i) {
    auto start = clock::now();
    BOOST_REQUIRE(
        prism::get(svc.task(&service::health).remote(), result_timeout));
    answered_ms.push_back(
        std::chrono::duration<double, std::milli>(clock::now() - start)
            .count());
  }
  // Every answer came while the first slow call (2 s) still ran.
  std::vector<prism::object_ref<int>> first{slow.front()};
  BOOST_TEST(prism::wait(first, 1, std::chrono::milliseconds{0}).ready.empty());
  std::sort(answered_ms.begin(), answered_ms.end());
  BOOST_TEST_MESSAGE("health answered in " << answered_ms.front() << " to "
                                           << answered_ms.back() << " ms");
  BOOST_TEST(answered_ms[2] < 50.0);
  prism::kill(svc);
}

BOOST_AUTO_TEST_CASE(a_group_runs_up_to_its_size_at_once) {
  auto svc =
      prism::actor(service::create).concurrency_groups({{"io", 2}}).remote(2);
  // The default group (one at a time) is busy meanwhile.
  auto busy = svc.task(&service::slow).remote(1'000);
  auto a = svc.task(&service::meet).concurrency_group("io").remote();
  auto b = svc.task(&service::meet).concurrency_group("io").remote();
  BOOST_TEST(prism::get(a, result_timeout));
  BOOST_TEST(prism::get(b, result_timeout));
  BOOST_TEST(prism::get(busy, result_timeout) == 1'000);
}

BOOST_AUTO_TEST_CASE(calls_of_a_group_of_one_run_in_the_order_sent) {
  auto svc =
      prism::actor(service::create).concurrency_groups({{"log", 1}}).remote(1);
  std::vector<prism::object_ref<std::vector<int>>> refs;
  for (int i = 0; i < 50; ++i)
    refs.push_back(
        svc.task(&service::record).concurrency_group("log").remote(i));
  auto last = prism::get(refs.back(), result_timeout);
  std::vector<int> expected(50);
  for (int i = 0; i < 50; ++i)
    expected[i] = i;
  BOOST_TEST(last == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_call_to_a_group_the_actor_lacks_fails) {
  auto svc = prism::actor(service::create).remote(1);
  auto ref = svc.task(&service::health).concurrency_group("nowhere").remote();
  try {
    prism::get(ref, result_timeout);
    BOOST_FAIL("a call to a group the actor lacks ran");
  } catch (const prism::invalid_argument_error& e) {
    BOOST_TEST(std::string{e.what()}.find("nowhere") != std::string::npos,
               e.what());
  }
  // The actor lives on.
  BOOST_TEST(prism::get(svc.task(&service::health).remote(), result_timeout));
}

// A method bound to a group its actor does not declare runs in the default
// group: a class's binding does not make actors of it declare groups.
BOOST_AUTO_TEST_CASE(a_method_bound_to_an_undeclared_group_runs_by_default) {
  auto svc = prism::actor(service::create)
                 .concurrency_groups({{"health", 1}})
                 .remote(1);
  BOOST_TEST(
      prism::get(svc.task(&service::elsewhere).remote(), result_timeout));
}

BOOST_AUTO_TEST_CASE(malformed_groups_are_invalid_arguments) {
  auto creator = prism::actor(service::create);
  BOOST_CHECK_THROW(creator.concurrency_groups({{"", 1}}),
                    prism::invalid_argument_error);
  BOOST_CHECK_THROW(creator.concurrency_groups({{"io", 0}}),
                    prism::invalid_argument_error);
  BOOST_CHECK_THROW(creator.concurrency_groups({{"io", 1}, {"io", 2}}),
                    prism::invalid_argument_error);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace concurrency_groups_test
