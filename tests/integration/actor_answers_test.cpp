// How an actor's answers reach its callers: a host sends the answers of calls
// that ran back to back together, yet no answer waits for the calls queued
// after it, and every caller gets its own answers.

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <future>
#include <vector>

#include "cluster_fixture.hpp"

namespace actor_answers_test {

using prism_test::result_timeout;
using prism_test::wait_until;

/// Let the call `latch::hold` return.
std::atomic<bool> hold_released{false};
std::atomic<bool> holding{false};

/// Set by the test once it has the answer of the call before `wait_for_test`.
std::atomic<bool> answer_seen{false};

/// Bodies still running, waited for before the cluster stops.
std::atomic<int> in_flight{0};

/// An actor whose calls can block until the test lets them go.
class latch {
public:
  static latch* create() {
    return new latch;
  }

  /// Blocks until released, so that the calls sent meanwhile queue up and
  /// then run back to back.
  int hold() {
    prism_test::in_flight_scope scope{in_flight};
    holding = true;
    wait_until([] { return hold_released.load(); });
    return 0;
  }

  int echo(int x) {
    return x;
  }

  /// Returns true once the test has seen the answer of the call before this
  /// one; false if it has not within the deadline.
  bool wait_for_test() {
    prism_test::in_flight_scope scope{in_flight};
    return wait_until([] { return answer_seen.load(); },
                      std::chrono::milliseconds{10'000});
  }
};

PRISM_REMOTE(actor_answers_test::latch::create,
             &actor_answers_test::latch::hold, &actor_answers_test::latch::echo,
             &actor_answers_test::latch::wait_for_test);

using namespace actor_answers_test;

namespace {

struct answers_fixture : prism_test::cluster_fixture {
  answers_fixture() {
    hold_released = false;
    holding = false;
    answer_seen = false;
  }

  ~answers_fixture() {
    hold_released = true;
    answer_seen = true;
    wait_until([] { return in_flight.load() == 0; });
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(actor_answers, answers_fixture)

BOOST_AUTO_TEST_CASE(an_answer_does_not_wait_for_the_call_after_it) {
  auto h = prism::actor(latch::create).remote();
  auto held = h.task(&latch::hold).remote();
  BOOST_REQUIRE(wait_until([] { return holding.load(); }));
  // Both calls queue behind `hold` and then run back to back: the second
  // returns only once the test has the answer of the first.
  auto first = h.task(&latch::echo).remote(7);
  auto second = h.task(&latch::wait_for_test).remote();
  hold_released = true;
  BOOST_TEST(prism::get(first, result_timeout) == 7);
  answer_seen = true;
  BOOST_TEST(prism::get(second, result_timeout));
  BOOST_TEST(prism::get(held, result_timeout) == 0);
}

BOOST_AUTO_TEST_CASE(queued_calls_of_two_jobs_each_get_their_answers) {
  auto h = prism::actor(latch::create).remote();
  auto other = prism::client::connect();
  auto held = h.task(&latch::hold).remote();
  BOOST_REQUIRE(wait_until([] { return holding.load(); }));
  // Calls of both jobs, interleaved, queue behind `hold` and run in one go.
  std::vector<prism::object_ref<int>> mine;
  std::vector<prism::object_ref<int>> theirs;
  for (int i = 0; i < 100; ++i) {
    mine.push_back(h.task(&latch::echo).remote(i));
    theirs.push_back(other.task(h, &latch::echo).remote(1000 + i));
  }
  hold_released = true;
  for (int i = 0; i < 100; ++i) {
    BOOST_TEST(prism::get(mine[i], result_timeout) == i);
    BOOST_TEST(other.get(theirs[i], result_timeout) == 1000 + i);
  }
  BOOST_TEST(prism::get(held, result_timeout) == 0);
  other.shutdown();
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace actor_answers_test
