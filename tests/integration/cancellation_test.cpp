// Cancelling tasks and actor calls (`prism::cancel`) at each point of their
// lives: before a worker takes them, while an argument is missing, while
// they run, after they finished. Tasks and methods tell the test what they
// did through the key-value table, so the suite runs with worker threads
// and again with worker processes (tests/integration/CMakeLists.txt).

#include <boost/test/unit_test.hpp>

#include <cerrno>
#include <chrono>
#include <string>
#include <vector>

#include <signal.h>
#include <unistd.h>

#include "cluster_fixture.hpp"

namespace cancellation_test {

using prism_test::result_timeout;
using prism_test::wait_until;
namespace kv = prism::kv;

bool has(const std::string& key) {
  return kv::get(key).has_value();
}

/// Waits (30 s at most) until the test sets `key`.
bool released(const std::string& key) {
  return wait_until([&] { return has(key); });
}

/// Notes a run of `tag` under its attempt number.
int mark(std::string tag) {
  auto attempt = prism::get_runtime_context().attempt;
  kv::put(tag + ":run:" + std::to_string(attempt), "1");
  return 1;
}

/// How many runs of `tag` were noted.
std::size_t runs_of(const std::string& tag) {
  return kv::keys(tag + ":run:").size();
}

/// Notes its start, then spins until it is cancelled (30 s at most); notes
/// that it saw the cancellation and returns.
int spin_until_cancelled(std::string tag) {
  mark(tag);
  kv::put(tag + ":started", "1");
  if (!wait_until([] { return prism::is_cancelled(); }))
    return 0;
  kv::put(tag + ":stopped", "1");
  return 1;
}

/// Like `spin_until_cancelled`, but throws once cancelled: an exception a
/// task that retries exceptions would be retried for.
int spin_then_throw(std::string tag) {
  spin_until_cancelled(tag);
  throw std::runtime_error("stopped by its cancellation");
}

/// Notes its process, then waits until the test releases it; never looks
/// at its cancellation.
int blocks_until_released(std::string tag) {
  mark(tag);
  kv::put(tag + ":pid", std::to_string(::getpid()));
  released(tag + ":release");
  kv::put(tag + ":ended", "1");
  return 1;
}

int takes_an_argument(int x, std::string tag) {
  mark(tag);
  return x;
}

/// Waits in `get` for a task that never ends by itself; notes whether that
/// `get` threw `task_cancelled_error`.
int waits_in_get(std::string tag) {
  auto inner = prism::task(blocks_until_released).remote(tag + ":inner");
  kv::put(tag + ":started", "1");
  try {
    return prism::get(inner);
  } catch (const prism::task_cancelled_error&) {
    kv::put(tag + ":get_threw", "1");
    throw;
  }
}

/// Submits a child that spins until cancelled, and waits for it.
int parent_of_spinner(std::string tag) {
  auto child = prism::task(spin_until_cancelled).remote(tag + ":child");
  return prism::get(child);
}

int plus_one(int x) {
  return x + 1;
}

/// A service whose calls wait or spin, and that records what ran.
class service {
public:
  static service* create() {
    return new service;
  }

  bool spin(std::string tag) {
    kv::put(tag + ":started", "1");
    saw_cancel_ = wait_until([] { return prism::is_cancelled(); });
    return saw_cancel_;
  }

  bool block(std::string tag) {
    kv::put(tag + ":started", "1");
    return released(tag + ":release");
  }

  std::vector<int> record(int x) {
    seen_.push_back(x);
    return seen_;
  }

  bool saw_cancel() const {
    return saw_cancel_;
  }

private:
  bool saw_cancel_ = false;
  std::vector<int> seen_;
};

} // namespace cancellation_test

PRISM_REMOTE(cancellation_test::mark, cancellation_test::spin_until_cancelled,
             cancellation_test::spin_then_throw,
             cancellation_test::blocks_until_released,
             cancellation_test::takes_an_argument,
             cancellation_test::waits_in_get,
             cancellation_test::parent_of_spinner, cancellation_test::plus_one);
PRISM_REMOTE(cancellation_test::service::create,
             &cancellation_test::service::spin,
             &cancellation_test::service::block,
             &cancellation_test::service::record,
             &cancellation_test::service::saw_cancel);

using namespace cancellation_test;

namespace {

/// Whether getting `ref` throws `task_cancelled_error`.
template <class T>
bool get_throws_cancelled(const prism::object_ref<T>& ref) {
  try {
    prism::get(ref, result_timeout);
  } catch (const prism::task_cancelled_error&) {
    return true;
  }
  return false;
}

} // namespace

BOOST_AUTO_TEST_SUITE(cancellation)

// Cancelled before the lease: the one CPU is busy, so the task waits in its
// owner's queue, and never runs.
BOOST_FIXTURE_TEST_CASE(a_task_cancelled_before_a_worker_took_it_never_runs,
                        prism_test::cpus_fixture<1>) {
  auto busy = prism::task(blocks_until_released).remote("busy");
  BOOST_REQUIRE(wait_until([] { return has("busy:pid"); }));
  auto target = prism::task(mark).remote("target");
  BOOST_TEST(prism::testing::task_state(target.id()) == "queued");
  prism::cancel(target);
  BOOST_TEST(get_throws_cancelled(target));
  kv::put("busy:release", "1");
  BOOST_TEST(prism::get(busy, result_timeout) == 1);
  // On the one CPU, a task submitted after it runs after it would have.
  BOOST_TEST(prism::get(prism::task(mark).remote("after"), result_timeout) ==
             1);
  BOOST_TEST(runs_of("target") == 0u);
  BOOST_TEST(prism::testing::illegal_task_transitions() == 0u);
}

// Cancelled while its argument is being made: it never runs, and the task
// that makes the argument goes on.
BOOST_FIXTURE_TEST_CASE(
    a_task_cancelled_while_an_argument_is_missing_never_runs,
    prism_test::cpus_fixture<1>) {
  auto arg = prism::task(blocks_until_released).remote("arg");
  auto target = prism::task(takes_an_argument).remote(arg, "target");
  auto other = prism::task(takes_an_argument).remote(arg, "other");
  BOOST_TEST(prism::testing::task_state(target.id()) == "waiting_args");
  prism::cancel(target);
  BOOST_TEST(get_throws_cancelled(target));
  kv::put("arg:release", "1");
  BOOST_TEST(prism::get(arg, result_timeout) == 1);
  // Both waited for the one argument, `target` first, on one CPU.
  BOOST_TEST(prism::get(other, result_timeout) == 1);
  BOOST_TEST(runs_of("target") == 0u);
}

// Cancelled while it runs: `is_cancelled` turns true inside it, and `get`
// of its ref throws at once, before it returns.
BOOST_FIXTURE_TEST_CASE(a_running_task_sees_its_cancellation,
                        prism_test::cluster_fixture) {
  BOOST_TEST(!prism::is_cancelled());
  auto ref = prism::task(spin_until_cancelled).remote("spin");
  BOOST_REQUIRE(wait_until([] { return has("spin:started"); }));
  prism::cancel(ref);
  BOOST_TEST(get_throws_cancelled(ref));
  BOOST_TEST(wait_until([] { return has("spin:stopped"); }));
  // The worker is free again.
  BOOST_TEST(prism::get(prism::task(plus_one).remote(1), result_timeout) == 2);
  BOOST_TEST(prism::testing::illegal_task_transitions() == 0u);
}

// A task cancelled while it waits in `get`: the `get` throws
// `task_cancelled_error` inside it.
BOOST_FIXTURE_TEST_CASE(a_get_inside_a_cancelled_task_throws,
                        prism_test::cluster_fixture) {
  auto ref = prism::task(waits_in_get).remote("outer");
  BOOST_REQUIRE(wait_until([] { return has("outer:started"); }));
  BOOST_REQUIRE(wait_until([] { return has("outer:inner:pid"); }));
  prism::cancel(ref, {.recursive = false});
  BOOST_TEST(get_throws_cancelled(ref));
  BOOST_TEST(wait_until([] { return has("outer:get_threw"); }));
  // Not recursive: the inner task ran on, until released.
  BOOST_TEST(!has("outer:inner:ended"));
  kv::put("outer:inner:release", "1");
  BOOST_TEST(wait_until([] { return has("outer:inner:ended"); }));
}

// Recursive (the default): the task the cancelled one submitted is
// cancelled too.
BOOST_FIXTURE_TEST_CASE(a_recursive_cancellation_reaches_the_tasks_submitted,
                        prism_test::cluster_fixture) {
  auto ref = prism::task(parent_of_spinner).remote("parent");
  BOOST_REQUIRE(wait_until([] { return has("parent:child:started"); }));
  prism::cancel(ref);
  BOOST_TEST(get_throws_cancelled(ref));
  BOOST_TEST(wait_until([] { return has("parent:child:stopped"); }));
}

// Cancelled after it finished: its result stays.
BOOST_FIXTURE_TEST_CASE(cancelling_a_finished_task_keeps_its_result,
                        prism_test::cluster_fixture) {
  auto ref = prism::task(plus_one).remote(41);
  BOOST_TEST(prism::get(ref, result_timeout) == 42);
  prism::cancel(ref);
  prism::cancel(ref, {.force = true});
  BOOST_TEST(prism::get(ref, result_timeout) == 42);
  // And a later task of the same kind runs as usual.
  BOOST_TEST(prism::get(prism::task(plus_one).remote(1), result_timeout) == 2);
}

// A cancelled task that throws an exception it would be retried for is not
// run again.
BOOST_FIXTURE_TEST_CASE(a_cancelled_task_is_never_retried,
                        prism_test::cluster_fixture) {
  auto ref = prism::task(spin_then_throw)
                 .max_retries(3)
                 .retry_exceptions(true)
                 .remote("retry");
  BOOST_REQUIRE(wait_until([] { return has("retry:started"); }));
  prism::cancel(ref);
  BOOST_TEST(get_throws_cancelled(ref));
  BOOST_TEST(wait_until([] { return has("retry:stopped"); }));
  // A retry would have run by the time a task submitted now has.
  BOOST_TEST(prism::get(prism::task(plus_one).remote(1), result_timeout) == 2);
  BOOST_TEST(!wait_until([] { return runs_of("retry") > 1; },
                         std::chrono::milliseconds{500}));
}

// `force` kills the worker: a worker process dies, a worker thread leaves
// the pool (its code runs on, its result thrown away). Either way the CPU
// is free at once.
BOOST_FIXTURE_TEST_CASE(force_frees_the_worker_at_once,
                        prism_test::cpus_fixture<1>) {
  auto ref = prism::task(blocks_until_released).remote("stuck");
  BOOST_REQUIRE(wait_until([] { return has("stuck:pid"); }));
  prism::cancel(ref, {.force = true});
  BOOST_TEST(get_throws_cancelled(ref));
  // The one CPU runs another task while the stuck one has not returned.
  BOOST_TEST(prism::get(prism::task(plus_one).remote(1), result_timeout) == 2);
  auto pid = std::stoi(*kv::get("stuck:pid"));
  if (pid != ::getpid()) {
    BOOST_TEST(
        wait_until([pid] { return ::kill(pid, 0) == -1 && errno == ESRCH; }));
    BOOST_TEST(!has("stuck:ended"));
  } else {
    BOOST_TEST(!has("stuck:ended"));
    kv::put("stuck:release", "1");
    BOOST_TEST(wait_until([] { return has("stuck:ended"); }));
  }
  BOOST_TEST(runs_of("stuck") == 1u);
}

BOOST_FIXTURE_TEST_CASE(a_put_object_cannot_be_cancelled,
                        prism_test::cluster_fixture) {
  auto ref = prism::put(7);
  BOOST_CHECK_THROW(prism::cancel(ref), prism::invalid_argument_error);
  BOOST_TEST(prism::get(ref, result_timeout) == 7);
}

// -- actor calls
// ----------------------------------------------------------------

// A call waiting behind a busy one (one at a time) never runs.
BOOST_FIXTURE_TEST_CASE(a_queued_actor_call_never_runs,
                        prism_test::cluster_fixture) {
  auto svc = prism::actor(service::create).remote();
  auto busy = svc.task(&service::block).remote("busy");
  BOOST_REQUIRE(wait_until([] { return has("busy:started"); }));
  auto cancelled = svc.task(&service::record).remote(1);
  prism::cancel(cancelled);
  BOOST_TEST(get_throws_cancelled(cancelled));
  kv::put("busy:release", "1");
  BOOST_TEST(prism::get(busy, result_timeout));
  auto seen = prism::get(svc.task(&service::record).remote(2), result_timeout);
  BOOST_TEST(seen == std::vector<int>{2}, boost::test_tools::per_element());
  prism::kill(svc);
}

// A running call sees its cancellation; the actor lives on.
BOOST_FIXTURE_TEST_CASE(a_running_actor_call_sees_its_cancellation,
                        prism_test::cluster_fixture) {
  auto svc = prism::actor(service::create).remote();
  auto ref = svc.task(&service::spin).remote("call");
  BOOST_REQUIRE(wait_until([] { return has("call:started"); }));
  prism::cancel(ref);
  BOOST_TEST(get_throws_cancelled(ref));
  BOOST_TEST(wait_until([&] {
    return prism::get(svc.task(&service::saw_cancel).remote(), result_timeout);
  }));
  prism::kill(svc);
}

BOOST_FIXTURE_TEST_CASE(force_is_refused_for_an_actor_call,
                        prism_test::cluster_fixture) {
  auto svc = prism::actor(service::create).remote();
  auto ref = svc.task(&service::block).remote("forced");
  BOOST_REQUIRE(wait_until([] { return has("forced:started"); }));
  BOOST_CHECK_THROW(prism::cancel(ref, {.force = true}),
                    prism::invalid_argument_error);
  kv::put("forced:release", "1");
  BOOST_TEST(prism::get(ref, result_timeout));
  prism::kill(svc);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(cancellation_failover)

// Cancelled while it waits for its retry after its node died: no node can
// run it, so it waits queued; cancelled there, it never runs again, not
// even once a node that fits it joins. Worker threads only: the test kills
// a node of this process.
BOOST_AUTO_TEST_CASE(cancellation_during_a_retry_after_a_node_died) {
  prism::testing::local_cluster cluster{
      {{{"CPU", 1}}, {{"CPU", 1}, {"spot", 1}}}};
  auto ref = prism::task(blocks_until_released)
                 .resources({{"CPU", 1}, {"spot", 1}})
                 .max_retries(3)
                 .remote("failover");
  BOOST_REQUIRE(wait_until([] { return has("failover:pid"); }));
  BOOST_REQUIRE(cluster.kill_node(cluster.node(1)));
  // Retried, and waiting for a node with a spot.
  BOOST_REQUIRE(wait_until(
      [&] { return prism::testing::task_state(ref.id()) == "queued"; }));
  prism::cancel(ref);
  BOOST_TEST(get_throws_cancelled(ref));
  cluster.add_node({{"CPU", 1}, {"spot", 1}});
  BOOST_TEST(prism::get(prism::task(mark)
                            .resources({{"CPU", 1}, {"spot", 1}})
                            .remote("after"),
                        result_timeout) == 1);
  BOOST_TEST(runs_of("failover") == 1u);
  BOOST_TEST(prism::testing::illegal_task_transitions() == 0u);
  // The first run, on the dead node's thread, goes on until released.
  kv::put("failover:release", "1");
  BOOST_TEST(wait_until([] { return has("failover:ended"); }));
}

BOOST_AUTO_TEST_SUITE_END()
