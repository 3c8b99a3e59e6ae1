// The autoscaler end to end, with the local-process provider: a head of 2
// CPUs started with `--autoscaler`, and 200 tasks that each need 8 CPUs.
// Nodes of 8 CPUs are launched as real `prism start` processes, the tasks
// finish, a node killed meanwhile is replaced, `prism status` shows the
// autoscaler, and the nodes go once idle.

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <unistd.h>
#include <utility>
#include <vector>

#include <boost/test/unit_test.hpp>

#include <prism/prism.hpp>

#include "prism_command.hpp"

namespace autoscaler_test {

using namespace prism::cluster_test;
using namespace std::chrono_literals;

/// Holds 8 CPUs for `ms` milliseconds; returns `i` and the node it ran on.
/// It sleeps because its length is the subject: it is the work that keeps a
/// node busy while the test kills one.
std::pair<int, std::string> hold(int i, int ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds{ms});
  return {i, prism::get_runtime_context().node.hex()};
}

PRISM_REMOTE(autoscaler_test::hold);

namespace {

namespace fs = std::filesystem;

/// The pids of the nodes running in the session (not the head).
std::set<int> node_pids(const std::string& session) {
  std::set<int> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator{session, ec}) {
    auto name = e.path().filename().string();
    if (name.rfind("node-", 0) != 0 || e.path().extension() != ".pid")
      continue;
    // A node killed with SIGKILL leaves its file behind.
    auto pid = std::atoi(name.substr(5).c_str());
    if (pid > 0 && ::kill(pid, 0) == 0)
      out.insert(pid);
  }
  return out;
}

/// A configuration file of nodes of 8 CPUs, at most 3, quick to scale.
std::string write_config() {
  auto path = fs::temp_directory_path() /
              ("prism-autoscaler-" + std::to_string(::getpid()) + ".json");
  std::ofstream{path} << R"({
    "node_types": {"cpu8": {"resources": {"CPU": 8}, "max_workers": 3}},
    "idle_timeout_s": 4,
    "interval_s": 0.25,
    "request_timeout_s": 30,
    "join_timeout_s": 60,
    "missed_listings": 2,
    "gone_grace_s": 1,
    "node_grace_s": 1,
    "backoff_min_s": 0.5,
    "backoff_max_s": 5
  })";
  return path.string();
}

} // namespace

BOOST_AUTO_TEST_SUITE(autoscaler_end_to_end)

BOOST_AUTO_TEST_CASE(demand_beyond_the_head_gets_nodes_that_go_once_idle) {
  auto config = write_config();
  auto o = attached_cluster(0);
  o.cpus = 2;
  o.flags = {"--autoscaler", config};
  process_cluster cluster{o};
  fs::remove(config);

  // The driver is attached to the head: its node is the head's.
  auto head_node = prism::get_runtime_context().node.hex();
  std::vector<prism::object_ref<std::pair<int, std::string>>> refs;
  for (int i = 0; i < 200; ++i)
    refs.push_back(prism::task(autoscaler_test::hold)
                       .resources({{"CPU", 8}})
                       .max_retries(5)
                       .remote(i, 60));

  // Nodes come for the demand the head cannot serve (required: the test
  // kills one of them next).
  std::set<int> seen;
  BOOST_REQUIRE(eventually(60s, [&] {
    for (auto pid : node_pids(cluster.session_dir()))
      seen.insert(pid);
    return seen.size() >= 2;
  }));
  auto status = cluster.run({"status"});
  BOOST_TEST(status.status == 0, status.err);
  BOOST_TEST(contains(status.out, "Autoscaler status"), status.out);
  BOOST_TEST(contains(status.out, "cpu8"), status.out);

  // One of them is killed while tasks remain: it is replaced.
  auto victim = *seen.begin();
  BOOST_TEST(::kill(victim, SIGKILL) == 0);
  BOOST_TEST(eventually(60s, [&] {
    for (auto pid : node_pids(cluster.session_dir()))
      seen.insert(pid);
    auto now = node_pids(cluster.session_dir());
    return seen.size() >= 3 && !now.contains(victim) && !now.empty();
  }));

  // Every task finishes with its own value, on a node of 8 CPUs (the head
  // has 2).
  auto results = prism::get(refs, 180s);
  for (std::size_t i = 0; i < refs.size(); ++i) {
    BOOST_TEST_CONTEXT("task " << i) {
      BOOST_TEST(results.at(i).first == static_cast<int>(i));
      BOOST_TEST(results.at(i).second != head_node, "it ran on the head");
    }
  }
  for (auto pid : node_pids(cluster.session_dir()))
    seen.insert(pid);
  BOOST_TEST(seen.size() >= 3u, "no node replaced the one killed");
  BOOST_TEST(seen.size() <= 3u + 3u, "more nodes than demand and one loss");

  // Idle, they go after the idle timeout (4 s), all of them (no minimum).
  BOOST_TEST(eventually(
      60s, [&] { return node_pids(cluster.session_dir()).empty(); }));
  status = cluster.run({"status"});
  BOOST_TEST(contains(status.out, "Active:\n (no nodes)"), status.out);
  // The lost node is among the recent failures: seen as its node leaving
  // the cluster, or as its instance no longer listed, whichever came first.
  BOOST_TEST(
      (contains(status.out, "node_died") || contains(status.out, "vanished")),
      status.out);
  BOOST_TEST(cluster.sanitizer_reports() == "");
}

BOOST_AUTO_TEST_CASE(a_restarted_head_keeps_its_nodes_and_launches_none_again) {
  auto path = fs::temp_directory_path() /
              ("prism-autoscaler-min-" + std::to_string(::getpid()) + ".json");
  std::ofstream{path} << R"({
    "node_types": {"cpu2": {"resources": {"CPU": 2}, "min_workers": 2,
                            "max_workers": 2}},
    "interval_s": 0.25
  })";
  auto o = attached_cluster(0);
  o.attach = false;
  o.flags = {"--autoscaler", path.string()};
  process_cluster cluster{o};
  auto idle_two = [&] {
    auto r = cluster.run({"status"});
    return contains(r.out, "Idle:\n 2 cpu2");
  };
  BOOST_TEST(eventually(60s, idle_two));
  auto before = node_pids(cluster.session_dir());
  BOOST_TEST(before.size() == 2u);

  // Killed and started again on its storage: it reads its instances from
  // the control store, finds their processes, and its nodes rejoin.
  cluster.restart_head();
  BOOST_TEST(eventually(60s, idle_two));
  // Two passes more, and still the same two nodes: none launched again.
  auto stamp = [&] {
    auto out = cluster.run({"status"}).out;
    auto at = out.find("Autoscaler status: ");
    return at == std::string::npos ? std::string{} : out.substr(at, 40);
  };
  auto first = stamp();
  BOOST_TEST(eventually(10s, [&] {
    auto now = stamp();
    return !now.empty() && now != first;
  }));
  BOOST_TEST((node_pids(cluster.session_dir()) == before));
  auto status = cluster.run({"status"});
  BOOST_TEST((!contains(status.out, "Pending:\n 1") &&
              !contains(status.out, "Pending:\n 2")),
             status.out);
  fs::remove(path);
}

BOOST_AUTO_TEST_CASE(a_bad_configuration_stops_the_head_at_start) {
  auto path = fs::temp_directory_path() /
              ("prism-autoscaler-bad-" + std::to_string(::getpid()) + ".json");
  std::ofstream{path} << R"({"node_types": {"w": {"resources": {"CPU": 2},
                             "max": 3}}})";
  process_cluster cluster{bare_session()};
  auto r = cluster.run(
      {"start", "--head", "--port", "0", "--autoscaler", path.string()});
  fs::remove(path);
  BOOST_TEST(r.status != 0);
  BOOST_TEST(contains(r.err, "node_types.w.max: unknown field"), r.err);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace autoscaler_test
