// The head process killed with SIGKILL and started again on its storage:
// nodes and drivers reconnect, and every acknowledged write is there.

#include <csignal>
#include <cstdlib>

#include <boost/test/unit_test.hpp>

#include <prism/prism.hpp>

#include "prism_command.hpp"

using namespace prism::cluster_test;
using namespace std::chrono_literals;

BOOST_AUTO_TEST_SUITE(head_restart)

BOOST_AUTO_TEST_CASE(a_killed_head_restarts_and_nodes_and_drivers_reconnect) {
  prism_session s;
  auto storage = s.dir() + "/gcs";
  auto address = s.start_head({"--num-cpus", "1", "--storage", storage});
  auto port = address.substr(address.find(':') + 1);
  auto node = s.start_node(address, {"--num-cpus", "1"});
  struct guard_t {
    ~guard_t() {
      prism::shutdown();
    }
  } guard;
  prism::config cfg;
  cfg.address = address;
  cfg.ns = "restart";
  prism::init(cfg);
  constexpr int keys = 50;
  for (int i = 0; i < keys; ++i)
    BOOST_TEST(!prism::kv::put("key-" + std::to_string(i),
                               "value-" + std::to_string(i)));

  auto head = s.pid_of("head");
  BOOST_REQUIRE(head > 0);
  ::kill(head, SIGKILL);
  auto again =
      s.start_head({"--num-cpus", "1", "--storage", storage, "--port", port});
  BOOST_TEST(again == address);

  // The driver's calls waited for the head and are answered now; every
  // acknowledged write is there.
  for (int i = 0; i < keys; ++i)
    BOOST_TEST((prism::kv::get("key-" + std::to_string(i)) ==
                "value-" + std::to_string(i)));
  BOOST_TEST(!prism::kv::put("after", "restart"));
  // The node registered again under its id; the old head's node did not
  // come back and is dead; the new head's node is alive.
  auto status_shows = [&](const std::string& what) {
    auto r = s.run({"status"});
    return r.status == 0 && contains(r.out, what);
  };
  BOOST_TEST(
      eventually(30s, [&] { return status_shows("Nodes: 2 alive, 1 dead"); }));
  BOOST_TEST(contains(s.log_of("node-" + std::to_string(node)),
                      "connected to the head at " + address + " again"));
  BOOST_TEST(status_shows("Jobs: 1 running"));
  prism::shutdown();
  BOOST_TEST(status_shows("Jobs: 0 running, 1 finished"));
  BOOST_TEST(s.sanitizer_reports() == "");
}

BOOST_AUTO_TEST_SUITE_END()
