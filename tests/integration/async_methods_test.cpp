// Asynchronous actor methods (`prism::future`): a method gives its thread
// back while it waits on an object, another actor's call, or a timer, so
// one actor serves many waiting calls at once; its calls still begin in the
// order sent, and touch its state one at a time. Everything the tests look
// at is the actors' own state, so the suite runs with worker threads and
// again with worker processes (tests/integration/CMakeLists.txt).

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "cluster_fixture.hpp"

namespace async_methods_test {

using prism_test::result_timeout;
using namespace std::chrono_literals;

int doubled(int x) {
  return 2 * x;
}

class gateway;
using gateway_handle = prism::actor_handle<gateway>;

/// A service whose methods wait without a thread.
class gateway {
public:
  static gateway* create() {
    return new gateway;
  }

  prism::future<int> add_after(int x, int ms) {
    co_await prism::sleep_for(std::chrono::milliseconds{ms});
    co_return x + 1;
  }

  /// Waits until `n` calls of it have arrived (30 s at most): true only if
  /// they all wait at once.
  prism::future<bool> meet(int n) {
    ++arrived_;
    for (int waited = 0; arrived_ < n; ++waited) {
      if (waited == 30'000)
        co_return false;
      co_await prism::sleep_for(1ms);
    }
    co_return true;
  }

  /// Notes `x` as it begins and `-x` as it ends, a wait apart.
  prism::future<std::vector<int>> record(int x) {
    seen_.push_back(x);
    co_await prism::sleep_for(1ms);
    seen_.push_back(-x);
    co_return seen_;
  }

  /// Waits for a task's result.
  prism::future<int> doubled_by_task(int x) {
    auto ref = prism::task(doubled).remote(x);
    co_return co_await prism::get_async(ref) + 1;
  }

  /// Waits for another actor's call.
  prism::future<int> ask(gateway_handle other, int x) {
    auto ref = other.task(&gateway::add_after).remote(x, 20);
    auto answer = co_await prism::get_async(ref);
    co_return answer * 10;
  }

  /// Sleeps `ms`; returns how long it slept, in microseconds.
  prism::future<std::int64_t> slept_us(int ms) {
    auto start = std::chrono::steady_clock::now();
    co_await prism::sleep_for(std::chrono::milliseconds{ms});
    co_return std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::steady_clock::now() - start)
        .count();
  }

  prism::future<int> fails_later() {
    co_await prism::sleep_for(1ms);
    throw std::runtime_error("failed after its wait");
  }

  prism::future<void> nothing_later() {
    co_await prism::sleep_for(1ms);
  }

  /// Sleeps 30 s unless cancelled; notes a cancellation it saw.
  prism::future<bool> sleep_long() {
    try {
      co_await prism::sleep_for(30s);
    } catch (const prism::task_cancelled_error&) {
      saw_cancel_ = true;
      throw;
    }
    co_return false;
  }

  bool saw_cancel() const {
    return saw_cancel_;
  }

  int arrived() const {
    return arrived_;
  }

private:
  int arrived_ = 0;
  bool saw_cancel_ = false;
  std::vector<int> seen_;
};

} // namespace async_methods_test

PRISM_REMOTE(async_methods_test::doubled);
PRISM_REMOTE(async_methods_test::gateway::create,
             &async_methods_test::gateway::add_after,
             &async_methods_test::gateway::meet,
             &async_methods_test::gateway::record,
             &async_methods_test::gateway::doubled_by_task,
             &async_methods_test::gateway::ask,
             &async_methods_test::gateway::slept_us,
             &async_methods_test::gateway::fails_later,
             &async_methods_test::gateway::nothing_later,
             &async_methods_test::gateway::sleep_long,
             &async_methods_test::gateway::saw_cancel,
             &async_methods_test::gateway::arrived);

using namespace async_methods_test;

BOOST_FIXTURE_TEST_SUITE(async_methods, prism_test::cluster_fixture)

BOOST_AUTO_TEST_CASE(an_async_method_answers_with_what_it_returns) {
  auto g = prism::actor(gateway::create).remote();
  BOOST_TEST(prism::get(g.task(&gateway::add_after).remote(41, 5),
                        result_timeout) == 42);
  prism::get(g.task(&gateway::nothing_later).remote(), result_timeout);
  prism::kill(g);
}

// 200 calls to an actor that runs one call at a time all wait at once: each
// gives the thread back at its first wait. Run one at a time, the first
// would wait for the others forever.
BOOST_AUTO_TEST_CASE(waiting_calls_wait_at_once_on_one_actor) {
  auto g = prism::actor(gateway::create).remote();
  std::vector<prism::object_ref<bool>> refs;
  for (int i = 0; i < 200; ++i)
    refs.push_back(g.task(&gateway::meet).remote(200));
  for (auto& r : refs)
    BOOST_TEST(prism::get(r, result_timeout));
  BOOST_TEST(prism::get(g.task(&gateway::arrived).remote(), result_timeout) ==
             200);
  prism::kill(g);
}

// Calls begin in the order sent, and the actor's state is touched one call
// at a time: each call notes itself as it begins, and a call that waited
// finds every call sent before it begun.
BOOST_AUTO_TEST_CASE(calls_begin_in_the_order_sent) {
  auto g = prism::actor(gateway::create).remote();
  std::vector<prism::object_ref<std::vector<int>>> refs;
  for (int i = 1; i <= 50; ++i)
    refs.push_back(g.task(&gateway::record).remote(i));
  std::vector<int> begun;
  for (auto x : prism::get(refs.back(), result_timeout))
    if (x > 0)
      begun.push_back(x);
  std::vector<int> expected;
  for (int i = 1; i <= 50; ++i)
    expected.push_back(i);
  BOOST_TEST(begun == expected, boost::test_tools::per_element());
  prism::kill(g);
}

// Sleeps that end in one millisecond share a timer, and none ends before
// its time: 300 sleeps of 1 to 7 ms, begun at once.
BOOST_AUTO_TEST_CASE(no_sleep_ends_early) {
  auto g = prism::actor(gateway::create).remote();
  std::vector<prism::object_ref<std::int64_t>> refs;
  for (int i = 0; i < 300; ++i)
    refs.push_back(g.task(&gateway::slept_us).remote(1 + i % 7));
  for (int i = 0; i < 300; ++i) {
    auto us = prism::get(refs[i], result_timeout);
    BOOST_TEST(us >= 1000 * (1 + i % 7), "sleep " << i << " took " << us);
  }
  prism::kill(g);
}

BOOST_AUTO_TEST_CASE(an_async_method_waits_for_a_task) {
  auto g = prism::actor(gateway::create).remote();
  BOOST_TEST(prism::get(g.task(&gateway::doubled_by_task).remote(20),
                        result_timeout) == 41);
  prism::kill(g);
}

BOOST_AUTO_TEST_CASE(an_async_method_waits_for_another_actors_call) {
  auto a = prism::actor(gateway::create).remote();
  auto b = prism::actor(gateway::create).remote();
  BOOST_TEST(prism::get(a.task(&gateway::ask).remote(b, 4), result_timeout) ==
             50);
  prism::kill(a);
  prism::kill(b);
}

BOOST_AUTO_TEST_CASE(an_exception_after_a_wait_fails_only_that_call) {
  auto g = prism::actor(gateway::create).remote();
  auto ref = g.task(&gateway::fails_later).remote();
  try {
    prism::get(ref, result_timeout);
    BOOST_FAIL("the call that threw returned");
  } catch (const prism::task_error& e) {
    BOOST_TEST(e.exception_message() == "failed after its wait");
  }
  BOOST_TEST(prism::get(g.task(&gateway::add_after).remote(1, 1),
                        result_timeout) == 2);
  prism::kill(g);
}

// A call cancelled while it waits wakes at once: its wait throws
// `task_cancelled_error`, and the actor lives on.
BOOST_AUTO_TEST_CASE(a_waiting_call_wakes_when_cancelled) {
  auto g = prism::actor(gateway::create).remote();
  auto ref = g.task(&gateway::sleep_long).remote();
  // It waits: a later call runs meanwhile.
  BOOST_TEST(prism::get(g.task(&gateway::add_after).remote(1, 1),
                        result_timeout) == 2);
  prism::cancel(ref);
  BOOST_CHECK_THROW(prism::get(ref, result_timeout),
                    prism::task_cancelled_error);
  BOOST_TEST(prism_test::wait_until([&] {
    return prism::get(g.task(&gateway::saw_cancel).remote(), result_timeout);
  }));
  prism::kill(g);
}

// An actor killed while calls wait: they fail with `actor_died_error`, and
// their coroutines go with the actor.
BOOST_AUTO_TEST_CASE(calls_waiting_when_their_actor_dies_fail) {
  auto g = prism::actor(gateway::create).remote();
  auto ref = g.task(&gateway::sleep_long).remote();
  BOOST_TEST(prism::get(g.task(&gateway::add_after).remote(1, 1),
                        result_timeout) == 2);
  prism::kill(g);
  BOOST_CHECK_THROW(prism::get(ref, result_timeout), prism::actor_died_error);
}

BOOST_AUTO_TEST_SUITE_END()
