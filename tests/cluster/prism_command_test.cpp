// `prism start`, `prism stop` and `prism status` as an operator runs them:
// real head and node processes on loopback, found through their session
// directory, killed and frozen with signals.

#include <algorithm>
#include <csignal>

#include <boost/test/unit_test.hpp>

#include "prism_command.hpp"

namespace prism_command_test {

using namespace prism::cluster_test;
using namespace std::chrono_literals;

namespace {

/// Counts the lines of `text`.
std::size_t lines(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

/// `prism status` shows `alive` live and `dead` dead nodes.
bool shows_nodes(process_cluster& s, int alive, int dead) {
  auto r = s.run({"status"});
  return r.status == 0 &&
         contains(r.out, "Nodes: " + std::to_string(alive) + " alive, " +
                             std::to_string(dead) + " dead");
}

} // namespace

BOOST_AUTO_TEST_SUITE(prism_command)

BOOST_AUTO_TEST_CASE(a_head_and_a_node_start_show_in_status_and_stop) {
  process_cluster s{bare_session()};
  auto address =
      s.start_head({"--num-cpus", "2", "--resources", "{\"GPU\": 1}"});
  BOOST_TEST(contains(address, "127.0.0.1:"));
  auto node = s.start_node(address, {"--num-cpus", "1"});
  BOOST_TEST(s.pid_of("node-" + std::to_string(node)) == node);
  BOOST_TEST(eventually(20s, [&] { return shows_nodes(s, 2, 0); }));
  auto r = s.run({"status"});
  BOOST_TEST_MESSAGE(r.out);
  BOOST_TEST(contains(r.out, "CPU 0/2, GPU 0/1 (used/total)"));
  BOOST_TEST(contains(r.out, "CPU 0/1 (used/total)"));
  BOOST_TEST(contains(r.out, "Actors: 0 alive"));
  BOOST_TEST(contains(r.out, "Pending demands: none"));
  // Status finds the head through PRISM_ADDRESS or --address too.
  auto by_flag = s.run({"status", "--address", address});
  BOOST_TEST(by_flag.status == 0);

  auto stop = s.run({"stop"});
  BOOST_TEST(stop.status == 0);
  BOOST_TEST(contains(stop.out, "stopped head"));
  BOOST_TEST(contains(stop.out, "stopped node-" + std::to_string(node)));
  BOOST_TEST(!contains(stop.out, "killed"));
  BOOST_TEST(s.pid_of("head") == 0);
  auto gone = s.run({"status", "--address", address});
  BOOST_TEST(gone.status != 0);
  BOOST_TEST(lines(gone.err) == 1u);
  BOOST_TEST(contains(gone.err, "cannot reach the Prism head"));
  BOOST_TEST(s.sanitizer_reports() == "");
}

BOOST_AUTO_TEST_CASE(a_node_killed_with_sigkill_is_dead_at_once) {
  process_cluster s{bare_session()};
  auto address = s.start_head({"--num-cpus", "1"});
  auto node = s.start_node(address, {"--num-cpus", "1"});
  BOOST_TEST(eventually(20s, [&] { return shows_nodes(s, 2, 0); }));
  auto killed = std::chrono::steady_clock::now();
  ::kill(node, SIGKILL);
  BOOST_TEST(eventually(20s, [&] { return shows_nodes(s, 1, 1); }));
  auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - killed);
  BOOST_TEST_MESSAGE("SIGKILL to dead in status: " << took.count() << " ms");
  // A new node joins in its place.
  s.start_node(address, {"--num-cpus", "1"});
  BOOST_TEST(eventually(20s, [&] { return shows_nodes(s, 2, 1); }));
  s.run({"stop"});
  BOOST_TEST(s.sanitizer_reports() == "");
}

BOOST_AUTO_TEST_CASE(a_frozen_node_is_dead_after_the_timeout_and_then_refused) {
  process_cluster s{bare_session()};
  std::vector<std::string> fast{"--heartbeat-interval-ms", "200",
                                "--connection-timeout-ms", "1500"};
  auto head_flags = fast;
  head_flags.insert(head_flags.end(), {"--num-cpus", "1"});
  auto address = s.start_head(head_flags);
  auto node = s.start_node(address, fast);
  BOOST_TEST(eventually(20s, [&] { return shows_nodes(s, 2, 0); }));
  auto frozen = std::chrono::steady_clock::now();
  ::kill(node, SIGSTOP);
  BOOST_TEST(eventually(30s, [&] { return shows_nodes(s, 1, 1); }));
  auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - frozen);
  BOOST_TEST_MESSAGE("SIGSTOP to dead in status: " << took.count() << " ms");
  BOOST_TEST(took >= 1000ms);
  // Resumed, it is refused: its workers go, and it joins as a new node.
  ::kill(node, SIGCONT);
  BOOST_TEST(eventually(30s, [&] { return shows_nodes(s, 2, 1); }));
  auto log = s.log_of("node-" + std::to_string(node));
  BOOST_TEST(contains(log, "is refused"));
  BOOST_TEST(contains(log, "joining again as a new node"));
  s.run({"stop"});
  BOOST_TEST(s.sanitizer_reports() == "");
}

BOOST_AUTO_TEST_CASE(bad_flags_give_one_line_and_a_nonzero_exit) {
  process_cluster s{bare_session()};
  auto beyond = s.run({"start", "--head", "--host", "0.0.0.0"});
  BOOST_TEST(beyond.status != 0);
  BOOST_TEST(lines(beyond.err) == 1u);
  BOOST_TEST(contains(beyond.err, "without TLS"));
  BOOST_TEST(contains(beyond.err, "--insecure"));

  auto unknown = s.run({"start", "--head", "--bogus"});
  BOOST_TEST(unknown.status != 0);

  auto both = s.run({"start", "--head", "--address", "127.0.0.1:1"});
  BOOST_TEST(both.status != 0);
  BOOST_TEST(lines(both.err) == 1u);

  auto malformed = s.run({"start", "--address", "nowhere"});
  BOOST_TEST(malformed.status != 0);
  BOOST_TEST(lines(malformed.err) == 1u);
  BOOST_TEST(contains(malformed.err, "HOST:PORT"));

  auto bad_json = s.run({"start", "--head", "--resources", "{GPU"});
  BOOST_TEST(bad_json.status != 0);
  BOOST_TEST(lines(bad_json.err) == 1u);

  // Nothing listens on port 1.
  auto unreachable = s.run({"start", "--address", "127.0.0.1:1"});
  BOOST_TEST(unreachable.status != 0);
  BOOST_TEST(lines(unreachable.err) == 1u);
  BOOST_TEST(contains(unreachable.err, "cannot reach the Prism head"));
  BOOST_TEST(s.pid_of("head") == 0);
}

BOOST_AUTO_TEST_CASE(a_taken_port_and_a_second_head_are_refused) {
  process_cluster s{bare_session()};
  auto address = s.start_head();
  auto port = address.substr(address.find(':') + 1);
  auto second = s.run({"start", "--head", "--port", "0"});
  BOOST_TEST(second.status != 0);
  BOOST_TEST(contains(second.err, "a head runs on this host already"));

  process_cluster other{bare_session()};
  auto taken = other.run({"start", "--head", "--port", port});
  BOOST_TEST(taken.status != 0);
  BOOST_TEST(lines(taken.err) == 1u);
  BOOST_TEST(contains(taken.err, "cannot listen on 127.0.0.1:" + port));
  BOOST_TEST(other.pid_of("head") == 0);
}

BOOST_AUTO_TEST_CASE(block_stays_in_the_foreground_until_sigterm) {
  process_cluster s{bare_session()};
  auto pid = s.spawn({"start", "--head", "--port", "0", "--block"});
  BOOST_TEST(eventually(30s, [&] { return s.pid_of("head") == pid; }));
  BOOST_TEST(eventually(20s, [&] { return shows_nodes(s, 1, 0); }));
  ::kill(pid, SIGTERM);
  BOOST_TEST(s.await(pid, 30s) == 0);
  BOOST_TEST(s.pid_of("head") == 0);
  BOOST_TEST(s.sanitizer_reports() == "");
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace prism_command_test
