// The output of tasks and actors in worker processes: on the driver's
// console, each line after who wrote it, complete; in files of each worker
// process on its node; never in the node's own log. The driver is a program
// of its own (programs/output_driver.cpp) whose stdout and stderr the test
// reads.

#include <cerrno>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <spawn.h>
#include <string>
#include <unistd.h>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "output_driver.hpp"
#include "prism_command.hpp"

extern char** environ;

namespace output_test {

using namespace prism::cluster_test;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

/// What the workers' files in `dir` hold, all of them together.
std::string worker_files(const std::string& dir, const std::string& ext) {
  std::string all;
  for (auto& e : fs::directory_iterator{dir}) {
    auto name = e.path().filename().string();
    if (name.rfind("worker-", 0) == 0 && e.path().extension() == ext)
      all += read_text(e.path());
  }
  return all;
}

/// How many workers printed "every worker says this", counting the
/// collapsed repeats.
std::size_t alike_lines(const std::string& out) {
  static const std::regex repeated{R"(\[repeated (\d+)x across cluster\]$)"};
  std::size_t n = 0;
  for (auto& line : lines_of(out)) {
    if (!contains(line, "every worker says this"))
      continue;
    std::smatch m;
    n += std::regex_search(line, m, repeated) ? std::stoul(m[1]) : 1;
  }
  return n;
}

/// Checks that `text` holds each of `workers` x `lines` numbered lines
/// ("line w=W i=I", or "err w=" every tenth) exactly once, each after a
/// prefix naming the task, its process and its node, one process per
/// worker's lines.
void check_numbered(const std::string& text, const std::string& word,
                    int workers, int lines, int every) {
  static const std::regex prefixed{
      R"(^\(output_driver::shout pid=(\d+) node=([0-9a-f]{8})\) (line|err) w=(\d+) i=(\d+)$)"};
  std::set<std::pair<int, int>> seen;
  std::map<int, std::string> pid_of_worker;
  std::size_t unprefixed = 0;
  for (auto& line : lines_of(text)) {
    if (!contains(line, word + " w="))
      continue;
    std::smatch m;
    if (!std::regex_match(line, m, prefixed)) {
      ++unprefixed;
      BOOST_TEST_MESSAGE("not prefixed as expected: " << line);
      continue;
    }
    int w = std::stoi(m[4]);
    int i = std::stoi(m[5]);
    BOOST_TEST(seen.insert({w, i}).second, "twice: " << line);
    auto [at, fresh] = pid_of_worker.emplace(w, m[1]);
    BOOST_TEST(at->second == m[1].str(), "two processes for worker " << w);
  }
  BOOST_TEST(unprefixed == 0u);
  BOOST_TEST(seen.size() ==
             static_cast<std::size_t>(workers * ((lines + every - 1) / every)));
}

} // namespace

BOOST_AUTO_TEST_SUITE(worker_output)

// 8 workers print 10,000 lines a second between them for two seconds, and
// every tenth also on stderr: the driver prints each line once, after who
// wrote it, on the stream it was written to; the node's log has none of
// them, and the workers' files have them all.
BOOST_AUTO_TEST_CASE(output_reaches_the_driver_prefixed_and_complete) {
  process_cluster s{bare_session()};
  auto address = s.start_head({"--num-cpus", "8"});
  constexpr int workers = 8, lines = 2500, rate = 1250;
  auto d = start_driver(
      s, {std::to_string(workers), std::to_string(lines), std::to_string(rate)},
      {"PRISM_ADDRESS=" + address}, "driver");
  bool complete = eventually(180s, [&] {
    return count_of(d.out_text(), " line w=") >= workers * lines &&
           count_of(d.err_text(), " err w=") >= workers * lines / 10 &&
           alike_lines(d.out_text()) >= workers &&
           contains(d.out_text(), ") speaker says hello");
  });
  auto out = d.out_text();
  auto err = d.err_text();
  BOOST_TEST(complete, "stdout has " << count_of(out, " line w=")
                                     << " lines, stderr "
                                     << count_of(err, " err w=")
                                     << "; stderr: " << err.substr(0, 2000));
  BOOST_TEST(d.finish(s) == 0,
             err.substr(err.size() > 2000 ? err.size() - 2000 : 0));
  check_numbered(out, "line", workers, lines, 1);
  check_numbered(err, "err", workers, lines, 10);
  BOOST_TEST(count_of(out, " err w=") == 0u);
  BOOST_TEST(count_of(err, " line w=") == 0u);
  BOOST_TEST(alike_lines(out) == static_cast<std::size_t>(workers));
  static const std::regex actor_line{
      R"((^|\n)\(output_driver::speaker pid=\d+ node=[0-9a-f]{8}\) speaker says hello\n)"};
  BOOST_TEST(std::regex_search(out, actor_line), out.substr(0, 500));
  BOOST_TEST(contains(err, "driver: tasks done, 20000 lines"));
  // The files on the node have every line; the node's own log none.
  BOOST_TEST(count_of(worker_files(s.session_dir(), ".out"), "line w=") ==
             static_cast<std::size_t>(workers * lines));
  BOOST_TEST(count_of(worker_files(s.session_dir(), ".err"), "err w=") ==
             static_cast<std::size_t>(workers * lines / 10));
  auto head_log = s.log_of("head");
  BOOST_TEST(!contains(head_log, "line w="));
  BOOST_TEST(!contains(head_log, "err w="));
  BOOST_TEST(!contains(head_log, "every worker says this"));
  BOOST_TEST(s.sanitizer_reports().empty(), s.sanitizer_reports());
}

// A driver that ends its job as soon as its tasks returned still prints
// every line they wrote: its nodes send on what they read before the job
// ends.
BOOST_AUTO_TEST_CASE(the_last_lines_of_a_job_are_printed_before_it_ends) {
  process_cluster s{bare_session()};
  auto address = s.start_head({"--num-cpus", "2"});
  // Each task writes its 10,000 lines (and 1,000 on stderr) as fast as it
  // can, and returns.
  auto d = start_driver(s, {"2", "10000", "0", "hasty"},
                        {"PRISM_ADDRESS=" + address}, "hasty");
  auto status = d.finish(s);
  auto err = d.err_text();
  BOOST_TEST(status == 0,
             "the driver ended with "
                 << status << ", " << count_of(d.out_text(), "line w=")
                 << " lines out; stderr ends: "
                 << err.substr(err.size() > 1000 ? err.size() - 1000 : 0));
  check_numbered(d.out_text(), "line", 2, 10000, 1);
  check_numbered(d.err_text(), "err", 2, 10000, 10);
}

// PRISM_LOG_TO_DRIVER=0: the driver prints none of its workers' lines,
// which are in the workers' files all the same.
BOOST_AUTO_TEST_CASE(log_to_driver_off_keeps_the_output_in_the_files_only) {
  process_cluster s{bare_session()};
  auto address = s.start_head({"--num-cpus", "2"});
  auto d = start_driver(s, {"2", "20", "1000"},
                        {"PRISM_ADDRESS=" + address, "PRISM_LOG_TO_DRIVER=0"},
                        "quiet");
  BOOST_TEST(eventually(120s, [&] {
    return contains(d.err_text(), "driver: tasks done") &&
           count_of(worker_files(s.session_dir(), ".out"), "line w=") == 40u &&
           contains(worker_files(s.session_dir(), ".out"), "speaker says");
  }));
  BOOST_TEST(d.finish(s) == 0, d.err_text());
  BOOST_TEST(count_of(d.out_text(), "line w=") == 0u, d.out_text());
  BOOST_TEST(!contains(d.out_text(), "speaker says"));
  BOOST_TEST(count_of(d.err_text(), "err w=") == 0u);
}

// The embedded cluster with worker processes prints their output the same
// way, and keeps their files in its session directory.
BOOST_AUTO_TEST_CASE(
    embedded_worker_processes_print_their_output_to_the_driver) {
  process_cluster s{bare_session()};
  auto d = start_driver(
      s, {"2", "50", "1000"},
      {"PRISM_WORKER_PROCESSES=1", "PRISM_SESSION_DIR=" + s.session_dir()},
      "embedded");
  bool complete = eventually(120s, [&] {
    return count_of(d.out_text(), " line w=") >= 100u &&
           count_of(d.err_text(), " err w=") >= 10u &&
           alike_lines(d.out_text()) >= 2u &&
           contains(d.out_text(), ") speaker says hello");
  });
  BOOST_TEST(complete, d.out_text().substr(0, 1000) << d.err_text());
  BOOST_TEST(d.finish(s) == 0, d.err_text());
  check_numbered(d.out_text(), "line", 2, 50, 1);
  check_numbered(d.err_text(), "err", 2, 50, 10);
  BOOST_TEST(count_of(worker_files(s.session_dir(), ".out"), "line w=") ==
             100u);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace output_test
