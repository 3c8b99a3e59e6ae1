// The head process killed with SIGKILL and started again on its storage:
// nodes and drivers reconnect, every acknowledged write is there, and
// detached actors on the other nodes keep running, reachable by name.

#include <filesystem>
#include <unistd.h>
#include <vector>

#include <boost/test/unit_test.hpp>

#include <prism/prism.hpp>

#include "common/program_file.hpp"
#include "prism_command.hpp"

namespace head_restart_test {

using namespace prism::cluster_test;
using namespace std::chrono_literals;

/// A detached service that counts: its count shows that the same instance
/// answers, not one started again.
class counter {
public:
  static counter* create() {
    return new counter;
  }

  int bump() {
    return ++count_;
  }

  int pid() const {
    return static_cast<int>(::getpid());
  }

private:
  int count_ = 0;
};

PRISM_REMOTE(head_restart_test::counter::create,
             &head_restart_test::counter::bump,
             &head_restart_test::counter::pid);

using head_restart_test::counter;

/// Where a task ran.
int restart_task_pid(int x) {
  return x >= 0 ? static_cast<int>(::getpid()) : 0;
}

PRISM_REMOTE(head_restart_test::restart_task_pid);

namespace {

/// The detached counter, found by name once the head knows it (a restarted
/// head knows it again once its node registers again); nothing after 30 s.
std::optional<prism::actor_handle<counter>> await_counter() {
  std::optional<prism::actor_handle<counter>> found;
  eventually(30s, [&] {
    try {
      found = prism::get_actor<counter>("counter");
    } catch (const prism::error&) {
      found.reset();
    }
    return found.has_value();
  });
  return found;
}

} // namespace

BOOST_AUTO_TEST_SUITE(head_restart)

BOOST_AUTO_TEST_CASE(a_killed_head_restarts_and_nodes_and_drivers_reconnect) {
  auto opts = attached_cluster(1);
  opts.driver.ns = "restart";
  process_cluster cluster{opts};
  constexpr int keys = 50;
  for (int i = 0; i < keys; ++i)
    BOOST_TEST(!prism::kv::put("key-" + std::to_string(i),
                               "value-" + std::to_string(i)));

  auto old_head = cluster.node_pid(0);
  cluster.restart_head();
  BOOST_TEST(cluster.node_pid(0) != old_head);

  // The driver's calls waited for the head and are answered now; every
  // acknowledged write is there.
  for (int i = 0; i < keys; ++i)
    BOOST_TEST((prism::kv::get("key-" + std::to_string(i)) ==
                "value-" + std::to_string(i)));
  BOOST_TEST(!prism::kv::put("after", "restart"));
  // The node registered again under its id; the old head's node did not
  // come back and is dead; the new head's node is alive.
  auto status_shows = [&](const std::string& what) {
    auto r = cluster.run({"status"});
    return r.status == 0 && contains(r.out, what);
  };
  BOOST_TEST(
      eventually(30s, [&] { return status_shows("Nodes: 2 alive, 1 dead"); }));
  auto node_log = cluster.log_of("node-" + std::to_string(cluster.node_pid(1)));
  BOOST_TEST(contains(node_log, "connected to the head at " +
                                    cluster.address() + " again"));
  BOOST_TEST(status_shows("Jobs: 1 running"));
  // The driver's program is kept by the control store, whether its upload
  // ended before the restart or started again after it.
  auto program = prism::actors::digest_file("/proc/self/exe");
  BOOST_REQUIRE(program.error.empty());
  auto kept = cluster.session_dir() + "/gcs/programs/" + program.sha256;
  BOOST_TEST(eventually(120s, [&] {
    return prism::actors::digest_file(kept).sha256 == program.sha256;
  }));
  prism::shutdown();
  BOOST_TEST(status_shows("Jobs: 0 running, 1 finished"));
  BOOST_TEST(cluster.sanitizer_reports() == "");
}

// A detached actor in a worker process of another node lives through the
// head's restart: the same instance answers, by its handle and by its name,
// to the driver that made it and to a new one.
BOOST_AUTO_TEST_CASE(a_detached_actor_on_a_node_outlives_a_head_restart) {
  auto opts = attached_cluster(0);
  opts.driver.ns = "services";
  process_cluster cluster{opts};
  cluster.add_node({"--resources", R"({"far": 1})"});
  auto service = prism::actor(counter::create)
                     .name("counter")
                     .lifetime(prism::lifetime::detached)
                     .resources({{"far", 1}})
                     .remote();
  constexpr auto timeout = 60s;
  BOOST_TEST(prism::get(service.task(&counter::bump).remote(), timeout) == 1);
  auto pid = prism::get(service.task(&counter::pid).remote(), timeout);
  BOOST_TEST(pid != cluster.node_pid(1));

  cluster.restart_head();

  // Calls go straight to the actor's process: they need no head.
  BOOST_TEST(prism::get(service.task(&counter::bump).remote(), timeout) == 2);
  // By name, once the new head knows the actor again (its node reported
  // it when it registered again).
  auto found = await_counter();
  BOOST_REQUIRE(found.has_value());
  BOOST_TEST(prism::get(found->task(&counter::bump).remote(), timeout) == 3);
  BOOST_TEST(prism::get(found->task(&counter::pid).remote(), timeout) == pid);
  {
    auto other = prism::client::connect("services");
    auto seen = other.get_actor<counter>("counter");
    BOOST_REQUIRE(seen.has_value());
    BOOST_TEST(other.get(seen->task(&counter::bump).remote(), timeout) == 4);
  }
  BOOST_TEST(cluster.sanitizer_reports() == "");
}

// A driver that attaches only after the head's restart finds the old head's
// node in the node table, dead and without a handle, and attaches to the
// live ones: it finds a detached actor by name and calls it.
BOOST_AUTO_TEST_CASE(a_driver_attaching_after_a_head_restart_finds_a_service) {
  auto opts = attached_cluster(1);
  opts.driver.ns = "services";
  process_cluster cluster{opts};
  cluster.add_node({"--resources", R"({"far": 1})"});
  constexpr auto timeout = 60s;
  auto service = prism::actor(counter::create)
                     .name("counter")
                     .lifetime(prism::lifetime::detached)
                     .resources({{"far", 1}})
                     .remote();
  BOOST_TEST(prism::get(service.task(&counter::bump).remote(), timeout) == 1);
  auto pid = prism::get(service.task(&counter::pid).remote(), timeout);
  prism::shutdown();

  cluster.restart_head();
  auto status_shows = [&](const std::string& what) {
    auto r = cluster.run({"status"});
    return r.status == 0 && contains(r.out, what);
  };
  BOOST_TEST(
      eventually(30s, [&] { return status_shows("Nodes: 3 alive, 1 dead"); }));

  // A new driver: its process attaches again, as a program started now
  // would.
  auto cfg = opts.driver;
  cfg.address = cluster.address();
  if (std::filesystem::exists(cluster.session_dir() + "/token"))
    cfg.auth_token_file = cluster.session_dir() + "/token";
  prism::init(cfg);
  auto found = await_counter();
  BOOST_REQUIRE(found.has_value());
  BOOST_TEST(prism::get(found->task(&counter::bump).remote(), timeout) == 2);
  BOOST_TEST(prism::get(found->task(&counter::pid).remote(), timeout) == pid);
  BOOST_TEST(cluster.sanitizer_reports() == "");
}

BOOST_AUTO_TEST_CASE(process_cluster_kills_freezes_and_adds_nodes) {
  auto opts = attached_cluster(2);
  opts.flags = {"--heartbeat-interval-ms", "200", "--connection-timeout-ms",
                "1500"};
  process_cluster cluster{opts};
  auto shows = [&](const std::string& what) {
    return eventually(30s, [&] {
      auto r = cluster.run({"status"});
      return r.status == 0 && contains(r.out, what);
    });
  };
  BOOST_TEST(shows("Nodes: 3 alive, 0 dead"));
  cluster.kill_node(1);
  BOOST_TEST(shows("Nodes: 2 alive, 1 dead"));
  cluster.freeze_node(2);
  BOOST_TEST(shows("Nodes: 1 alive, 2 dead"));
  cluster.resume_node(2);
  // Refused on its return, it joins again as a new node.
  BOOST_TEST(shows("Nodes: 2 alive, 2 dead"));
  BOOST_TEST(cluster.add_node() == 3u);
  BOOST_TEST(shows("Nodes: 3 alive, 2 dead"));
  BOOST_CHECK_THROW(cluster.kill_node(0), prism::invalid_argument_error);
  BOOST_TEST(cluster.sanitizer_reports() == "");
}

// An attached driver's node is the head's: when the head restarts, its
// raylet is gone with it, and the driver's owner finds another node to ask
// for leases. Tasks submitted after the restart run, and so do those that
// waited in its queues meanwhile.
BOOST_AUTO_TEST_CASE(an_attached_driver_runs_tasks_after_the_head_restarts) {
  auto opts = attached_cluster(1);
  opts.cpus = 2;
  process_cluster cluster{opts};
  auto before = prism::task(restart_task_pid).remote(1);
  BOOST_REQUIRE(prism::get(before, 60s) > 0);
  cluster.restart_head();
  std::vector<prism::object_ref<int>> refs;
  for (int i = 0; i < 20; ++i)
    refs.push_back(prism::task(restart_task_pid).remote(i));
  for (auto& r : refs)
    BOOST_TEST(prism::get(r, 60s) > 0);
  // And again, once the driver has its new node.
  BOOST_TEST(prism::get(prism::task(restart_task_pid).remote(7), 60s) > 0);
  BOOST_TEST(cluster.sanitizer_reports() == "");
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace head_restart_test
