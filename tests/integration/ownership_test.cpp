// The owner of an object dies: a borrower's `get` fails at once with an
// owner_died_error instead of waiting, whether it asked before or after the
// death, and a task that takes the object as an argument fails the same way.

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>

#include "cluster_fixture.hpp"

namespace ownership_test {

using prism_test::result_timeout;

// Written before `*_known` is set, read only after it is.
prism::worker_id maker_worker;
std::atomic<bool> maker_known{false};
std::atomic<bool> nested_started{false};
std::atomic<bool> release{false};
std::atomic<int> in_flight{0};

void report_maker() {
  maker_worker = prism::get_runtime_context().worker;
  maker_known = true;
}

int plus1(int x) {
  return x + 1;
}

// Puts an object, which this task's worker then owns, and returns its ref.
prism::object_ref<int> put_and_return(int x) {
  auto ref = prism::put(x);
  report_maker();
  return ref;
}

// Runs until released; its result is owned by the task that submitted it.
int held_child(int x) {
  prism_test::in_flight_scope scope{in_flight};
  nested_started = true;
  prism_test::wait_until([] { return release.load(); });
  return x;
}

// Submits `held_child` and returns the ref to its result once it runs (on
// another worker, as this one is busy until then).
prism::object_ref<int> submit_held_child(int x) {
  prism_test::in_flight_scope scope{in_flight};
  auto ref = prism::task(held_child).remote(x);
  prism_test::wait_until([] { return nested_started.load(); });
  report_maker();
  return ref;
}

PRISM_REMOTE(ownership_test::plus1, ownership_test::put_and_return,
             ownership_test::held_child, ownership_test::submit_held_child);

using namespace ownership_test;

namespace {

struct ownership_fixture : prism_test::cluster_fixture {
  ownership_fixture() {
    maker_worker = prism::worker_id{};
    maker_known = false;
    nested_started = false;
    release = false;
  }

  ~ownership_fixture() {
    release = true;
    prism_test::wait_until([] { return in_flight.load() == 0; });
  }
};

/// Kills the worker that made the inner object, once it has said which.
void kill_maker() {
  BOOST_REQUIRE(prism_test::wait_until([] { return maker_known.load(); }));
  BOOST_REQUIRE(prism::testing::kill_worker(maker_worker));
}

/// Gets `ref`, expecting an owner_died_error well before `result_timeout`;
/// returns its message.
template <class T>
std::string expect_owner_died(const prism::object_ref<T>& ref) {
  auto start = std::chrono::steady_clock::now();
  try {
    prism::get(ref, result_timeout);
    BOOST_FAIL("got a value whose owner died");
  } catch (const prism::owner_died_error& e) {
    auto took = std::chrono::steady_clock::now() - start;
    BOOST_TEST((took < std::chrono::seconds{5}));
    BOOST_TEST((e.code() == prism::errc::owner_died));
    BOOST_TEST(!e.retryable());
    return e.what();
  }
  return {};
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(ownership, ownership_fixture)

BOOST_AUTO_TEST_CASE(get_of_an_object_whose_owner_died_fails_with_owner_died) {
  auto inner =
      prism::get(prism::task(put_and_return).remote(7), result_timeout);
  kill_maker();
  auto message = expect_owner_died(inner);
  BOOST_TEST(message.find(inner.id().hex()) != std::string::npos);
  BOOST_TEST(message.find(maker_worker.hex()) != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_get_waiting_when_the_owner_dies_fails_at_once) {
  auto inner =
      prism::get(prism::task(submit_held_child).remote(5), result_timeout);
  // The borrower asks the owner, which has no value yet and keeps the
  // request; then the owner dies with it.
  BOOST_CHECK_THROW(prism::get(inner, std::chrono::milliseconds{50}),
                    prism::timeout_error);
  kill_maker();
  expect_owner_died(inner);
}

BOOST_AUTO_TEST_CASE(
    a_task_whose_argument_lost_its_owner_fails_with_owner_died) {
  auto inner =
      prism::get(prism::task(put_and_return).remote(1), result_timeout);
  kill_maker();
  expect_owner_died(prism::task(plus1).remote(inner));
}

BOOST_AUTO_TEST_CASE(objects_of_a_live_owner_are_still_fetched) {
  auto inner =
      prism::get(prism::task(put_and_return).remote(3), result_timeout);
  BOOST_TEST(prism::get(inner, result_timeout) == 3);
  BOOST_TEST(prism::get(prism::task(plus1).remote(inner), result_timeout) == 4);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace ownership_test
