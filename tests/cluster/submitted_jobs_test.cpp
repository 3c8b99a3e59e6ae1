// Jobs the cluster runs (`prism job submit|status|logs|stop|list`): the
// program is uploaded through the head's door, runs as a driver on the
// head's host, and its logs and exit code outlive the death of a node and a
// restart of the head.

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <boost/test/unit_test.hpp>
#include <nlohmann/json.hpp>

#include "gcs/job_launch.hpp"
#include "prism_command.hpp"

namespace submitted_jobs_test {

using namespace prism::cluster_test;
using namespace std::chrono_literals;
namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr auto job_timeout = 120s;

/// A cluster of a head (and `nodes` nodes) that this process does not
/// attach to: jobs are the drivers here.
process_cluster::options head_only(std::size_t nodes = 0) {
  auto o = bare_session();
  o.head = true;
  o.nodes = nodes;
  o.cpus = 2;
  return o;
}

/// Submits the job driver (tests/cluster/programs/job_driver.cpp), which
/// ends with `code` once the file `go` exists; returns the job's id.
std::string submit_driver(process_cluster& s, const std::string& go, int code,
                          std::vector<std::string> flags = {}) {
  std::vector<std::string> args{"job", "submit"};
  args.insert(args.end(), flags.begin(), flags.end());
  args.insert(args.end(),
              {"--", PRISM_JOB_DRIVER_PATH, go, std::to_string(code)});
  auto r = s.run(args);
  BOOST_REQUIRE_MESSAGE(r.status == 0, r.err);
  auto at = r.out.find("Job job-");
  BOOST_REQUIRE_MESSAGE(at != std::string::npos, r.out);
  return r.out.substr(at + 4, 16);
}

/// The job `id` as `prism job status --format json` prints it.
json status_of(process_cluster& s, const std::string& id) {
  auto r = s.run({"job", "status", id, "--format", "json"});
  BOOST_REQUIRE_MESSAGE(r.status == 0, r.err);
  return json::parse(r.out);
}

/// Waits until job `id` is in a final state; returns it.
json await_end(process_cluster& s, const std::string& id) {
  json job;
  bool ended = eventually(job_timeout, [&] {
    job = status_of(s, id);
    auto state = job["state"].get<std::string>();
    return state != "RUNNING" && state != "PENDING";
  });
  BOOST_REQUIRE_MESSAGE(ended, "job " << id << " did not end: " << job.dump());
  return job;
}

std::string logs_of(process_cluster& s, const std::string& id,
                    bool err = false) {
  std::vector<std::string> args{"job", "logs", id};
  if (err)
    args.push_back("--err");
  auto r = s.run(args);
  BOOST_REQUIRE_MESSAGE(r.status == 0, r.err);
  return r.out;
}

std::string go_file(const process_cluster& s, const std::string& name) {
  return s.session_dir() + "/" + name + ".go";
}

void touch(const std::string& path) {
  std::ofstream{path} << "go\n";
}

/// Whether process `pid` is gone (or a zombie).
bool gone(int pid) {
  return prism::actors::process_start_time(pid) == 0;
}

/// The number after `key=` in `text`; -1 if none.
int number_after(const std::string& text, const std::string& key) {
  auto at = text.find(key + "=");
  if (at == std::string::npos)
    return -1;
  return std::atoi(text.c_str() + at + key.size() + 1);
}

BOOST_AUTO_TEST_SUITE(submitted_jobs)

BOOST_AUTO_TEST_CASE(a_submitted_job_runs_and_keeps_its_exit_code_and_logs) {
  process_cluster s{head_only()};
  auto go = go_file(s, "first");
  auto id = submit_driver(s, go, 3, {"--name", "first", "--env", "MODE=x"});
  auto job = status_of(s, id);
  BOOST_TEST(job["state"] == "RUNNING");
  BOOST_TEST(job["name"] == "first");
  BOOST_TEST(job["env"].dump() == R"(["MODE"])");
  BOOST_TEST(job["driver_pid"].get<int>() > 0);
  // Its driver attached, and its tasks run on the cluster.
  BOOST_TEST(
      eventually(job_timeout,
                 [&] { return contains(logs_of(s, id), "round 1 sum"); }),
      logs_of(s, id));
  auto listed = s.run({"job", "list"});
  BOOST_TEST(contains(listed.out, id + "  first  RUNNING"), listed.out);
  touch(go);
  job = await_end(s, id);
  BOOST_TEST(job["state"] == "FAILED");
  BOOST_TEST(job["exit_code"] == 3);
  BOOST_TEST(job["message"] == "exited with code 3");
  BOOST_TEST(!job["end_time"].get<std::string>().empty());
  auto out = logs_of(s, id);
  BOOST_TEST(contains(out, "submitted_job=" + id), out);
  BOOST_TEST(contains(out, "round 0 sum 140"), out);
  BOOST_TEST(contains(out, "driver: done"), out);
  BOOST_TEST(!contains(logs_of(s, id, true), "failed"));
}

BOOST_AUTO_TEST_CASE(a_job_outlives_a_node_death_and_a_head_restart) {
  process_cluster s{head_only(1)};
  auto go = go_file(s, "restart");
  auto id = submit_driver(s, go, 0);
  BOOST_TEST(
      eventually(job_timeout,
                 [&] { return contains(logs_of(s, id), "round 2 sum"); }),
      logs_of(s, id));
  s.kill_node(1);
  s.restart_head();
  // The restarted head reports the job it did not start, running.
  auto job = status_of(s, id);
  BOOST_TEST(job["state"] == "RUNNING", job.dump());
  auto rounds_before = logs_of(s, id).size();
  // The driver's tasks run again after the restart.
  BOOST_TEST(eventually(job_timeout,
                        [&] { return logs_of(s, id).size() > rounds_before; }),
             logs_of(s, id));
  touch(go);
  job = await_end(s, id);
  BOOST_TEST(job["state"] == "SUCCEEDED", job.dump());
  BOOST_TEST(job["exit_code"] == 0);
  BOOST_TEST(contains(logs_of(s, id), "driver: done"));
  // How it ended is durable: another restart still reports it.
  s.restart_head();
  job = status_of(s, id);
  BOOST_TEST(job["state"] == "SUCCEEDED", job.dump());
  BOOST_TEST(job["exit_code"] == 0);
  BOOST_TEST(contains(logs_of(s, id), "driver: done"));
}

BOOST_AUTO_TEST_CASE(a_job_that_ends_while_the_head_is_down_is_reported) {
  process_cluster s{head_only()};
  auto go = go_file(s, "down");
  auto id = submit_driver(s, go, 7);
  BOOST_TEST(eventually(
      job_timeout, [&] { return contains(logs_of(s, id), "round 0 sum"); }));
  auto driver = status_of(s, id)["driver_pid"].get<int>();
  ::kill(s.pid_of("head"), SIGKILL);
  touch(go);
  BOOST_TEST(eventually(job_timeout, [&] { return gone(driver); }));
  s.restart_head();
  auto job = await_end(s, id);
  BOOST_TEST(job["state"] == "FAILED", job.dump());
  BOOST_TEST(job["exit_code"] == 7);
}

BOOST_AUTO_TEST_CASE(stopping_a_job_ends_its_driver_and_its_workers) {
  process_cluster s{head_only()};
  auto id = submit_driver(s, go_file(s, "never"), 0);
  std::string out;
  BOOST_REQUIRE(eventually(job_timeout, [&] {
    out = logs_of(s, id);
    return contains(out, "actor pid=");
  }));
  auto actor_pid = number_after(out, "actor pid");
  auto job_id = number_after(out, "job_id");
  BOOST_REQUIRE(actor_pid > 0);
  auto driver = status_of(s, id)["driver_pid"].get<int>();
  auto r = s.run({"job", "stop", id, "--grace-ms", "2000"});
  BOOST_TEST(r.status == 0, r.err);
  BOOST_TEST(contains(r.out, "STOPPED"), r.out);
  auto job = status_of(s, id);
  BOOST_TEST(job["state"] == "STOPPED", job.dump());
  BOOST_TEST(gone(driver));
  // Its job ended with its driver: its worker processes go too.
  BOOST_TEST(eventually(60s, [&] { return gone(actor_pid); }));
  std::string workers;
  BOOST_TEST(eventually(60s,
                        [&] {
                          workers = s.run({"list", "workers", "--filter",
                                           "job_id=" + std::to_string(job_id),
                                           "--format", "json"})
                                        .out;
                          return contains(workers, "\"matched\": 0");
                        }),
             workers);
  // Stopping it again says it ended.
  r = s.run({"job", "stop", id});
  BOOST_TEST(r.status == 0);
  BOOST_TEST(contains(r.out, "had ended already: STOPPED"), r.out);
  // `prism stop` ends a running job with the cluster.
  auto other = submit_driver(s, go_file(s, "never"), 0);
  auto other_driver = status_of(s, other)["driver_pid"].get<int>();
  BOOST_TEST(s.run({"stop"}).status == 0);
  BOOST_TEST(eventually(30s, [&] { return gone(other_driver); }));
}

BOOST_AUTO_TEST_CASE(bad_submissions_get_one_clear_line) {
  process_cluster s{head_only()};
  auto not_executable = s.session_dir() + "/data.txt";
  std::ofstream{not_executable} << "not a program\n";
  struct bad_case {
    std::vector<std::string> args;
    std::string said;
  };
  std::vector<bad_case> cases{
      {{"job", "submit", "--", s.session_dir() + "/missing"},
       "no such program: " + s.session_dir() + "/missing"},
      {{"job", "submit", "--", "prism-no-such-program"},
       "no such program: prism-no-such-program (not on the PATH)"},
      {{"job", "submit", "--", not_executable},
       not_executable + " is not executable"},
      {{"job", "submit", "--", s.session_dir()},
       s.session_dir() + " is not a program file"},
      {{"job", "submit", "--working-dir", "/prism/nowhere", "--",
        PRISM_JOB_DRIVER_PATH, "x", "0"},
       "the working directory /prism/nowhere is not a directory on the "
       "head's host"},
      {{"job", "submit", "--env", "NOVALUE", "--", PRISM_JOB_DRIVER_PATH},
       "--env NOVALUE is not NAME=value"},
      {{"job", "status", "job-000000000000"}, "no job 'job-000000000000'"},
      {{"job", "logs", "job-000000000000"}, "no job 'job-000000000000'"},
      {{"job", "stop", "job-000000000000"}, "no job 'job-000000000000'"},
  };
  for (auto& c : cases) {
    auto r = s.run(c.args);
    BOOST_TEST(r.status == 1, c.said);
    BOOST_TEST(contains(r.err, c.said), r.err);
    BOOST_TEST(std::count(r.err.begin(), r.err.end(), '\n') == 1, r.err);
  }
  auto listed = s.run({"job", "list"});
  BOOST_TEST(contains(listed.out, "0 jobs"), listed.out);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace submitted_jobs_test
