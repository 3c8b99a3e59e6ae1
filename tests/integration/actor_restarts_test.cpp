// Actors whose node or instance dies, on a local cluster of several nodes:
// restarts elsewhere, the calls in flight and the calls sent while the actor
// restarts, and actors that may not restart.

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <string>
#include <vector>

#include "cluster_fixture.hpp"

namespace actor_restarts_test {

using prism_test::actor_died_message;
using prism_test::result_timeout;
using prism_test::wait_until;

/// Instances `counter::create` has built, first runs and restarts alike.
std::atomic<int> builds{0};

/// Runs of `counter::hold`, and whether the first one has started.
std::atomic<int> hold_runs{0};
std::atomic<bool> hold_started{false};

/// Set by a test, and always by the fixture's teardown, to let the first run
/// of `counter::hold` return.
std::atomic<bool> release{false};

/// When set, a restarted counter's factory waits until `restart_released`,
/// so a test can send calls while the actor restarts.
std::atomic<bool> pause_restarts{false};
std::atomic<bool> restart_waiting{false};
std::atomic<bool> restart_released{false};

/// Factories and methods still running, so the teardown can wait for the
/// ones that outlived their killed instance.
std::atomic<int> in_flight{0};

/// An actor that keeps a running total.
class counter {
public:
  static counter* create(int start) {
    prism_test::in_flight_scope scope{in_flight};
    ++builds;
    if (pause_restarts && prism::was_current_actor_restarted()) {
      restart_waiting = true;
      wait_until([] { return restart_released.load(); });
    }
    return new counter(start);
  }

  int add(int x) {
    total_ += x;
    return total_;
  }

  bool restarted() const {
    return prism::was_current_actor_restarted();
  }

  /// The first instance blocks until released, so a test can kill the actor
  /// while this call runs; a restarted instance returns at once.
  int hold(int x) {
    prism_test::in_flight_scope scope{in_flight};
    ++hold_runs;
    if (!prism::was_current_actor_restarted()) {
      hold_started = true;
      wait_until([] { return release.load(); });
    }
    return x;
  }

private:
  explicit counter(int start) : total_(start) {}

  int total_;
};

PRISM_REMOTE(actor_restarts_test::counter::create,
             &actor_restarts_test::counter::add,
             &actor_restarts_test::counter::restarted,
             &actor_restarts_test::counter::hold);

using namespace actor_restarts_test;

namespace {

using counter_handle = prism::actor_handle<counter>;

/// The only resource of node 1 that the head lacks, so an actor that asks
/// for it starts there.
const prism::resource_map on_spot_node{{"spot", 0.01}};

int call_add(const counter_handle& h, int x) {
  return prism::get(h.task(&counter::add).remote(x), result_timeout);
}

/// A counter on node 1, the only node with "spot", at a total of 5.
counter_handle counter_on_spot_node(int max_restarts) {
  auto h = prism::actor(counter::create)
               .max_restarts(max_restarts)
               .resources(on_spot_node)
               .remote(0);
  BOOST_REQUIRE(call_add(h, 5) == 5);
  return h;
}

bool call_restarted(const counter_handle& h) {
  return prism::get(h.task(&counter::restarted).remote(), result_timeout);
}

/// A head with two CPUs, and node 1 with two CPUs and one "spot".
struct restart_fixture {
  restart_fixture() {
    builds = 0;
    hold_runs = 0;
    hold_started = false;
    release = false;
    pause_restarts = false;
    restart_waiting = false;
    restart_released = false;
  }

  // Runs before `cluster` shuts Prism down: calls and factories of killed
  // instances keep running inside this process until released.
  ~restart_fixture() {
    release = true;
    restart_released = true;
    wait_until([] { return in_flight.load() == 0; });
  }

  /// The hex id of the node `h` lives on, or "none".
  std::string node_of(const counter_handle& h) const {
    auto node = cluster.actor_node(h.id());
    return node ? node->hex() : std::string{"none"};
  }

  prism::testing::local_cluster cluster{
      {{{"CPU", 2}}, {{"CPU", 2}, {"spot", 1}}}};
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(actor_restarts, restart_fixture)

// -- node failure -------------------------------------------------------------

BOOST_AUTO_TEST_CASE(actor_restarts_on_another_node_when_its_node_dies) {
  auto h = counter_on_spot_node(1);
  BOOST_REQUIRE(node_of(h) == cluster.node(1).hex());
  auto replacement = cluster.add_node({{"CPU", 2}, {"spot", 1}});
  BOOST_REQUIRE(cluster.kill_node(cluster.node(1)));
  BOOST_REQUIRE_MESSAGE(wait_until([] { return builds.load() == 2; }),
                        "the actor was not rebuilt within the deadline");
  BOOST_TEST(call_add(h, 1) == 1);
  BOOST_TEST(call_restarted(h));
  BOOST_TEST(node_of(h) == replacement.hex());
}

BOOST_AUTO_TEST_CASE(a_restart_cut_short_by_its_node_dying_uses_no_restart) {
  auto h = counter_on_spot_node(1);
  // The one restart allowed begins on node 1, the only node with "spot",
  // and is held in the factory while that node dies.
  pause_restarts = true;
  BOOST_REQUIRE(cluster.kill_actor(h.id()));
  BOOST_REQUIRE_MESSAGE(wait_until([] { return restart_waiting.load(); }),
                        "the actor did not begin to restart");
  BOOST_REQUIRE(cluster.kill_node(cluster.node(1)));
  // That instance never ran: the actor waits for a node, and starts there
  // still within its one restart.
  auto replacement = cluster.add_node({{"CPU", 2}, {"spot", 1}});
  restart_released = true;
  BOOST_TEST(call_add(h, 1) == 1);
  BOOST_TEST(call_restarted(h));
  BOOST_TEST(node_of(h) == replacement.hex());
}

BOOST_AUTO_TEST_CASE(actor_without_restarts_dies_with_its_node) {
  auto h = counter_on_spot_node(0);
  BOOST_REQUIRE(node_of(h) == cluster.node(1).hex());
  // A node it could restart on exists, so only max_restarts(0) keeps it dead.
  cluster.add_node({{"CPU", 2}, {"spot", 1}});
  BOOST_REQUIRE(cluster.kill_node(cluster.node(1)));
  BOOST_TEST(actor_died_message(h.task(&counter::add).remote(1)).has_value());
  BOOST_TEST(builds.load() == 1);
}

// -- calls across a restart ---------------------------------------------------

BOOST_AUTO_TEST_CASE(call_in_flight_with_task_retries_completes_after_restart) {
  auto h = prism::actor(counter::create)
               .max_restarts(1)
               .max_task_retries(-1)
               .remote(0);
  auto held = h.task(&counter::hold).remote(7);
  BOOST_REQUIRE_MESSAGE(wait_until([] { return hold_started.load(); }),
                        "the call did not start within the deadline");
  BOOST_REQUIRE(cluster.kill_actor(h.id()));
  BOOST_TEST(prism::get(held, result_timeout) == 7);
  // At least once: the run on the killed instance, then the retry.
  BOOST_TEST(hold_runs.load() == 2);
}

BOOST_AUTO_TEST_CASE(call_in_flight_without_task_retries_fails_as_actor_died) {
  auto h = prism::actor(counter::create)
               .max_restarts(1)
               .max_task_retries(0)
               .remote(0);
  auto held = h.task(&counter::hold).remote(7);
  BOOST_REQUIRE_MESSAGE(wait_until([] { return hold_started.load(); }),
                        "the call did not start within the deadline");
  BOOST_REQUIRE(cluster.kill_actor(h.id()));
  BOOST_TEST(actor_died_message(held).has_value());
  BOOST_TEST(hold_runs.load() == 1);
}

BOOST_AUTO_TEST_CASE(calls_sent_while_the_actor_restarts_wait_and_complete) {
  pause_restarts = true;
  auto h = prism::actor(counter::create).max_restarts(1).remote(0);
  BOOST_REQUIRE(call_add(h, 5) == 5);
  BOOST_REQUIRE(cluster.kill_actor(h.id()));
  BOOST_REQUIRE_MESSAGE(wait_until([] { return restart_waiting.load(); }),
                        "the actor did not begin to restart");
  std::vector<prism::object_ref<int>> calls;
  for (int i = 0; i < 5; ++i)
    calls.push_back(h.task(&counter::add).remote(1));
  restart_released = true;
  auto totals = prism::get(calls, result_timeout);
  std::vector<int> expected{1, 2, 3, 4, 5};
  BOOST_TEST(totals == expected, boost::test_tools::per_element());
}

// -- crashes of the instance --------------------------------------------------

BOOST_AUTO_TEST_CASE(crashed_actor_with_unlimited_restarts_restarts_each_time) {
  auto h = prism::actor(counter::create).max_restarts(-1).remote(0);
  for (int crash = 1; crash <= 3; ++crash) {
    // The total starts from the factory's argument again after each restart.
    BOOST_REQUIRE_MESSAGE(call_add(h, 5) == 5, "before crash " << crash);
    BOOST_REQUIRE_MESSAGE(cluster.kill_actor(h.id()), "crash " << crash);
    BOOST_REQUIRE_MESSAGE(
        wait_until([crash] { return builds.load() == crash + 1; }),
        "no restart after crash " << crash);
  }
  BOOST_TEST(call_add(h, 5) == 5);
  BOOST_TEST(call_restarted(h));
}

BOOST_AUTO_TEST_CASE(actor_out_of_restarts_fails_calls_as_actor_died) {
  auto h = prism::actor(counter::create).max_restarts(1).remote(0);
  BOOST_REQUIRE(call_add(h, 1) == 1);
  BOOST_REQUIRE(cluster.kill_actor(h.id()));
  BOOST_REQUIRE_MESSAGE(wait_until([] { return builds.load() == 2; }),
                        "the actor was not rebuilt within the deadline");
  BOOST_REQUIRE(call_add(h, 1) == 1);
  BOOST_REQUIRE(cluster.kill_actor(h.id()));
  BOOST_TEST(actor_died_message(h.task(&counter::add).remote(1)).has_value());
  BOOST_TEST(builds.load() == 2);
}

BOOST_AUTO_TEST_CASE(kill_actor_of_an_unknown_actor_returns_false) {
  prism::actor_id unknown{prism::unique_id::random()};
  BOOST_TEST(!cluster.kill_actor(unknown));
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace actor_restarts_test
