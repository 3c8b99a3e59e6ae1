// `prism logs` as an operator runs it: the output files of a job's worker
// processes, chosen by job, worker, actor, stream and tail, followed as they
// grow, a node's own log, and a dead node's files read through a live node
// on its host.

#include <csignal>
#include <regex>
#include <string>

#include <boost/test/unit_test.hpp>

#include "output_driver.hpp"
#include "prism_command.hpp"

namespace logs_test {

using namespace prism::cluster_test;
using namespace std::chrono_literals;

namespace {

/// The first match of `pattern`'s group 1 in `text`; empty if none.
std::string first_match(const std::string& text, const std::string& pattern) {
  std::smatch m;
  std::regex re{pattern};
  return std::regex_search(text, m, re) ? m[1].str() : std::string{};
}

} // namespace

BOOST_AUTO_TEST_SUITE(cluster_logs)

BOOST_AUTO_TEST_CASE(logs_reads_a_jobs_worker_files_through_the_nodes) {
  process_cluster s{bare_session()};
  // The head has less than a CPU: the tasks run on the other node.
  auto address = s.start_head({"--num-cpus", "0.5"});
  auto node_pid = s.start_node(address, {"--num-cpus", "2"});
  auto d = start_driver(s, {"2", "20", "1000"}, {"PRISM_ADDRESS=" + address},
                        "driver");
  BOOST_REQUIRE_MESSAGE(
      eventually(120s,
                 [&] { return contains(d.err_text(), "driver: tasks done"); }),
      d.err_text());
  // The tasks' results come back before the last of their lines may have:
  // the driver prints lines as their nodes send them on.
  BOOST_REQUIRE_MESSAGE(
      eventually(60s,
                 [&] { return count_of(d.out_text(), " line w=") == 40u; }),
      d.out_text());
  auto out = d.out_text();
  auto pid0 = first_match(out, R"(pid=(\d+) node=[0-9a-f]{8}\) line w=0 i=0)");
  auto node = first_match(out, R"(node=([0-9a-f]{8})\) line w=0 i=0)");
  auto actor = first_match(d.err_text(), R"(driver: actor ([0-9a-f]{32}))");
  BOOST_REQUIRE(!pid0.empty());
  BOOST_REQUIRE(!actor.empty());

  // Every line of the job, each file after a header naming node and file.
  auto all = s.run({"logs", "--address", address, "--job", "1"});
  BOOST_TEST(all.status == 0, all.err);
  BOOST_TEST(count_of(all.out, "line w=") == 40u, all.out);
  BOOST_TEST(
      contains(all.out, "==> node " + node + " worker-1-" + pid0 + ".out <=="),
      all.out);
  BOOST_TEST(contains(all.out, "speaker says hello"));
  BOOST_TEST(count_of(all.out, "err w=") == 0u);
  auto err = s.run({"logs", "--address", address, "--job", "1", "--err"});
  BOOST_TEST(count_of(err.out, "err w=") == 4u, err.out);
  BOOST_TEST(count_of(err.out, "line w=") == 0u);
  // Another job has none of them.
  auto other = s.run({"logs", "--address", address, "--job", "2"});
  BOOST_TEST(count_of(other.out, "line w=") == 0u);
  BOOST_TEST(contains(other.err, "no file matches"), other.err);

  // One worker's file, whole and its tail; the tail of one file is its
  // last lines. (A worker process may have run both tasks.)
  std::vector<std::string> by_pid0;
  auto prefix0 = "(output_driver::shout pid=" + pid0 + " node=" + node + ") ";
  for (auto& line : lines_of(out))
    if (line.rfind(prefix0 + "line w=", 0) == 0)
      by_pid0.push_back(line.substr(prefix0.size()));
  BOOST_REQUIRE(by_pid0.size() >= 20u);
  auto one = s.run({"logs", "--address", address, "--worker", pid0});
  BOOST_TEST(count_of(one.out, "line w=") == by_pid0.size(), one.out);
  auto tail =
      s.run({"logs", "--address", address, "--worker", pid0, "--tail", "3"});
  auto last = by_pid0.end() - 3;
  BOOST_TEST(tail.out == "==> node " + node + " worker-1-" + pid0 +
                             ".out <==\n" + last[0] + "\n" + last[1] + "\n" +
                             last[2] + "\n",
             tail.out);

  // The live actor's process, by the actor's id.
  auto of_actor = s.run({"logs", "--address", address, "--actor", actor});
  BOOST_TEST(of_actor.status == 0, of_actor.err);
  BOOST_TEST(contains(of_actor.out, "speaker says hello"), of_actor.out);
  BOOST_TEST(count_of(of_actor.out, "line w=") == 0u);

  // -f prints what the files gain.
  auto follower =
      s.spawn({"logs", "--address", address, "--actor", actor, "-f"});
  BOOST_TEST(eventually(30s, [&] {
    return contains(s.output_of(follower), "speaker says hello");
  }));
  d.say("again");
  BOOST_TEST(eventually(30s,
                        [&] {
                          return contains(s.output_of(follower),
                                          "speaker says again");
                        }),
             s.output_of(follower));
  ::kill(follower, SIGTERM);
  s.await(follower, 30s);

  // The nodes' own logs: the head's, and every node's.
  auto head_log = s.run({"logs", "--address", address, "--component", "head"});
  BOOST_TEST(head_log.status == 0, head_log.err);
  BOOST_TEST(contains(head_log.out, "head.log <=="),
             head_log.out.substr(0, 300));
  BOOST_TEST(count_of(head_log.out, "==> node ") == 1u);
  auto node_logs = s.run({"logs", "--address", address, "--component", "node"});
  BOOST_TEST(count_of(node_logs.out, ".log <==") == 2u,
             node_logs.out.substr(0, 300));

  BOOST_TEST(d.finish(s) == 0, d.err_text());

  // The node dies; its files stay, and the head's node (on the same host,
  // in the same session directory) reads them.
  ::kill(node_pid, SIGKILL);
  BOOST_REQUIRE(eventually(30s, [&] {
    return contains(s.run({"status", "--address", address}).out, "1 dead");
  }));
  auto dead = s.run({"logs", "--address", address, "--node", node});
  BOOST_TEST(dead.status == 0, dead.err);
  BOOST_TEST(count_of(dead.out, "line w=") == 40u, dead.out);
  BOOST_TEST(s.sanitizer_reports().empty(), s.sanitizer_reports());
}

BOOST_AUTO_TEST_CASE(bad_requests_get_one_line_and_a_failure) {
  process_cluster s{bare_session()};
  auto address = s.start_head({"--num-cpus", "1"});
  auto bad_actor = s.run({"logs", "--address", address, "--actor", "xyz"});
  BOOST_TEST(bad_actor.status == 1);
  BOOST_TEST(contains(bad_actor.err, "is not an actor id"), bad_actor.err);
  auto no_actor =
      s.run({"logs", "--address", address, "--actor", std::string(32, 'a')});
  BOOST_TEST(no_actor.status == 1);
  BOOST_TEST(contains(no_actor.err, "is not alive"), no_actor.err);
  auto no_node = s.run({"logs", "--address", address, "--node", "ffffffff"});
  BOOST_TEST(no_node.status == 1);
  BOOST_TEST(contains(no_node.err, "no node 'ffffffff'"), no_node.err);
  auto bad_component =
      s.run({"logs", "--address", address, "--component", "kernel"});
  BOOST_TEST(bad_component.status == 1);
  BOOST_TEST(contains(bad_component.err, "--component is worker, node or head"),
             bad_component.err);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace logs_test
