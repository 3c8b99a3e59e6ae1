// `prism job submit|status|logs|stop|list`: programs the cluster runs as
// drivers on the head's host. `submit` uploads the program by SHA-256
// through the head's door, as any client enters, and returns the job's id
// at once.

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <iostream>
#include <memory>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "common/program_file.hpp"
#include "head_connection.hpp"
#include "printing.hpp"
#include "prism/error.hpp"
#include "prism/internal/state_query.hpp"
#include "protocol/programs.hpp"
#include "protocol/submitted_jobs.hpp"

namespace prism::tools {

namespace {

namespace job_cli {

using json = nlohmann::ordered_json;
using protocol::submitted_job;

/// How long a submission may take: its program may wait for another
/// submitter's upload of it.
constexpr auto submit_timeout = std::chrono::seconds{90};

/// How often `logs -f` and `stop` ask again.
constexpr auto poll_interval = std::chrono::milliseconds{200};

/// The bytes of one part of an upload.
constexpr std::size_t upload_part_bytes = std::size_t{4} << 20;

// -- the program --------------------------------------------------------------

/// The file `name` names, as exec would find it: a path if it holds a
/// '/', else the first executable file of that name on the PATH. Throws
/// `invalid_argument_error` with one clear line if there is none, or it is
/// not an executable file.
std::string program_file(const std::string& name) {
  if (name.empty())
    throw invalid_argument_error("no program given: prism job submit -- "
                                 "PROGRAM [ARGS...]");
  std::string path = name;
  if (name.find('/') == std::string::npos) {
    path.clear();
    const char* env = std::getenv("PATH");
    std::string dirs = env != nullptr ? env : "/usr/local/bin:/usr/bin:/bin";
    for (std::size_t at = 0; at <= dirs.size();) {
      auto end = dirs.find(':', at);
      if (end == std::string::npos)
        end = dirs.size();
      auto dir = dirs.substr(at, end - at);
      auto candidate = (dir.empty() ? "." : dir) + "/" + name;
      if (::access(candidate.c_str(), X_OK) == 0) {
        path = candidate;
        break;
      }
      at = end + 1;
    }
    if (path.empty())
      throw invalid_argument_error("no such program: " + name +
                                   " (not on the PATH)");
  }
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0)
    throw invalid_argument_error("no such program: " + path);
  if (!S_ISREG(info.st_mode))
    throw invalid_argument_error(path + " is not a program file");
  if (::access(path.c_str(), X_OK) != 0)
    throw invalid_argument_error(path + " is not executable");
  return path;
}

/// Hands the program at `path` to the control store, unless it keeps it.
void upload(head_connection& head, const std::string& path,
            const actors::file_digest& digest) {
  if (!head.ask<bool>(protocol::offer_program{digest.sha256, digest.size},
                      "offering the program"))
    return; // kept already, or another submitter hands it over
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw invalid_argument_error("cannot read " + path + ": " +
                                 std::strerror(errno));
  std::string part(upload_part_bytes, '\0');
  std::uint64_t offset = 0;
  bool done = false;
  try {
    while (!done) {
      auto n = actors::read_at(fd, part.data(), part.size(), offset);
      if (n == 0 && offset < digest.size)
        throw invalid_argument_error(path + " changed while it was uploaded");
      done = head.ask<bool>(
          protocol::program_part{digest.sha256, offset, part.substr(0, n)},
          "uploading the program");
      offset += n;
      if (!done && n == 0)
        throw invalid_argument_error("the control store did not take the "
                                     "whole program");
    }
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
}

// -- printing -----------------------------------------------------------------

std::string command_line(const submitted_job& job) {
  std::string text;
  for (auto& arg : job.argv)
    text += (text.empty() ? "" : " ") + arg;
  return text;
}

json json_of(const submitted_job& job) {
  json o = json::object();
  o["job_id"] = job.id;
  o["name"] = job.name;
  o["state"] = to_string(job.state);
  o["exit_code"] = job.exit_code >= 0 ? json(job.exit_code) : json(nullptr);
  o["message"] = job.message;
  o["argv"] = job.argv;
  o["program_sha256"] = job.sha256;
  o["working_dir"] = job.working_dir;
  o["env"] = job.env_names;
  o["submit_time"] = internal::iso_time(job.submit_ms);
  o["start_time"] = internal::iso_time(job.start_ms);
  o["end_time"] = internal::iso_time(job.end_ms);
  o["driver_pid"] = job.driver_pid;
  o["supervisor_pid"] = job.supervisor_pid;
  o["stop_requested"] = job.stop_requested;
  return o;
}

void print_job(std::ostream& out, const submitted_job& job) {
  out << job.id << (job.name.empty() ? "" : "  (" + job.name + ")") << "\n";
  auto line = [&](const char* key, const std::string& value) {
    if (!value.empty())
      out << "  " << key << value << "\n";
  };
  line("state:       ", to_string(job.state));
  if (job.exit_code >= 0)
    line("exit code:   ", std::to_string(job.exit_code));
  line("how:         ", job.message);
  line("command:     ", command_line(job));
  line("working dir: ", job.working_dir);
  line("submitted:   ", internal::iso_time(job.submit_ms));
  line("started:     ", internal::iso_time(job.start_ms));
  line("ended:       ", internal::iso_time(job.end_ms));
  if (job.driver_pid > 0)
    line("driver pid:  ", std::to_string(job.driver_pid) +
                              " on the head's host (supervisor " +
                              std::to_string(job.supervisor_pid) + ")");
  if (job.stop_requested && !protocol::is_final(job.state))
    line("stopping:    ", "asked to stop");
}

// -- the commands -------------------------------------------------------------

struct common_cli {
  std::string address;
  std::string format = "table";
};

void add_common(CLI::App* app, common_cli& o) {
  app->add_option("--address", o.address,
                  "The head, HOST:PORT (default: PRISM_ADDRESS, then the "
                  "head started on this host)");
  app->add_option("--format", o.format, "table or json")
      ->check(CLI::IsMember({"table", "json"}));
}

submitted_job one_job(head_connection& head, const std::string& id) {
  auto reply = head.ask<protocol::submitted_jobs>(
      protocol::get_submitted_jobs{id}, "asking for the job");
  check(reply);
  if (reply.jobs.size() != 1)
    throw error(errc::internal, "the head answered with " +
                                    std::to_string(reply.jobs.size()) +
                                    " jobs for one id");
  return reply.jobs.front();
}

struct submit_cli : common_cli {
  std::string name;
  std::string working_dir;
  std::vector<std::string> env;
  std::vector<std::string> argv;
};

int submit(const submit_cli& o) {
  auto path = program_file(o.argv.empty() ? "" : o.argv.front());
  for (auto& entry : o.env)
    if (auto eq = entry.find('='); eq == std::string::npos || eq == 0)
      throw invalid_argument_error("--env " + entry + " is not NAME=value");
  auto digest = actors::digest_file(path);
  if (!digest.error.empty())
    throw invalid_argument_error("cannot read " + path + ": " + digest.error);
  head_connection head{o.address, "job"};
  upload(head, path, digest);
  protocol::submit_job msg{o.name,      o.argv,        digest.sha256,
                           digest.size, o.working_dir, o.env};
  auto reply = head.ask<protocol::submitted_jobs>(msg, "submitting the job",
                                                  submit_timeout);
  check(reply);
  if (reply.jobs.empty())
    throw error(errc::internal, "the head answered with no job");
  auto& job = reply.jobs.front();
  if (o.format == "json") {
    std::cout << json_of(job).dump(2) << std::endl;
  } else if (job.state == protocol::submitted_job_state::failed) {
    std::cerr << "prism job submit: job " << job.id
              << " did not start: " << job.message << std::endl;
  } else {
    std::cout << "Job " << job.id << " submitted: " << to_string(job.state)
              << " (driver pid " << job.driver_pid << " on the head's host)\n"
              << "  status: prism job status " << job.id << "\n"
              << "  logs:   prism job logs -f " << job.id << "\n"
              << "  stop:   prism job stop " << job.id << std::endl;
  }
  return job.state == protocol::submitted_job_state::failed ? 1 : 0;
}

struct status_cli : common_cli {
  std::string id;
};

int status(const status_cli& o) {
  head_connection head{o.address, "job"};
  auto job = one_job(head, o.id);
  if (o.format == "json")
    std::cout << json_of(job).dump(2) << std::endl;
  else
    print_job(std::cout, job);
  return 0;
}

int list(const common_cli& o) {
  head_connection head{o.address, "job"};
  auto reply = head.ask<protocol::submitted_jobs>(
      protocol::get_submitted_jobs{}, "listing the jobs");
  check(reply);
  if (o.format == "json") {
    json all = json::array();
    for (auto& job : reply.jobs)
      all.push_back(json_of(job));
    std::cout << all.dump(2) << std::endl;
    return 0;
  }
  std::vector<std::vector<std::string>> rows;
  for (auto& job : reply.jobs)
    rows.push_back({job.id, job.name, to_string(job.state),
                    job.exit_code >= 0 ? std::to_string(job.exit_code) : "",
                    internal::iso_time(job.submit_ms),
                    internal::iso_time(job.end_ms), command_line(job)});
  std::cout << reply.jobs.size() << " jobs\n";
  print_table(std::cout,
              {"job_id", "name", "state", "exit_code", "submit_time",
               "end_time", "command"},
              rows);
  return 0;
}

struct logs_cli {
  std::string address;
  std::string id;
  bool err = false;
  bool follow = false;
};

int logs(const logs_cli& o) {
  head_connection head{o.address, "job"};
  std::uint64_t offset = 0;
  for (;;) {
    auto part = head.ask<protocol::job_output>(
        protocol::read_job_output{o.id, o.err, offset, 0}, "reading the logs");
    check(part);
    std::cout << part.bytes << std::flush;
    offset = part.offset + part.bytes.size();
    // More to read now (a read that got nothing asks again after a pause).
    if (offset < part.size && !part.bytes.empty())
      continue;
    if (!o.follow || part.ended)
      return 0;
    std::this_thread::sleep_for(poll_interval);
  }
}

struct stop_cli : common_cli {
  std::string id;
  std::uint32_t grace_ms = 5000;
  bool no_wait = false;
};

int stop(const stop_cli& o) {
  head_connection head{o.address, "job"};
  auto reply = head.ask<protocol::submitted_jobs>(
      protocol::stop_submitted_job{o.id, o.grace_ms}, "stopping the job");
  check(reply);
  auto job = reply.jobs.at(0);
  if (protocol::is_final(job.state)) {
    std::cout << "Job " << job.id
              << " had ended already: " << to_string(job.state) << " ("
              << job.message << ")" << std::endl;
    return 0;
  }
  if (o.no_wait) {
    std::cout << "Job " << job.id << " is asked to stop" << std::endl;
    return 0;
  }
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::milliseconds{o.grace_ms} +
                  std::chrono::seconds{10};
  while (!protocol::is_final(job.state)) {
    if (std::chrono::steady_clock::now() >= deadline)
      throw error(errc::timeout, "job " + job.id + " did not stop within " +
                                     std::to_string(o.grace_ms) +
                                     " ms and 10 s more");
    std::this_thread::sleep_for(poll_interval);
    job = one_job(head, o.id);
  }
  std::cout << "Job " << job.id << " " << to_string(job.state)
            << ": its driver " << job.message << std::endl;
  return 0;
}

} // namespace job_cli

} // namespace

void add_job_command(CLI::App& app, command_list& commands) {
  using namespace job_cli;
  auto* job = app.add_subcommand(
      "job", "Programs the cluster runs as drivers on the head's host");
  job->require_subcommand(1);

  auto so = std::make_shared<submit_cli>();
  auto* sub = job->add_subcommand(
      "submit", "Upload a program and run it as a driver on the head's "
                "host; prints the job's id at once");
  add_common(sub, *so);
  sub->add_option("--name", so->name, "What to call the job");
  sub->add_option("--working-dir", so->working_dir,
                  "The directory the driver runs in, on the head's host "
                  "(default: the job's own directory in the head's session)");
  sub->add_option("--env", so->env,
                  "NAME=value for the driver's environment (repeatable)");
  sub->add_option("command", so->argv,
                  "-- PROGRAM [ARGS...]: the program, a file on this host, "
                  "and its arguments")
      ->required();
  commands.push_back(
      {sub,
       [so] { return guarded("job submit", [&] { return submit(*so); }); }});

  auto sto = std::make_shared<status_cli>();
  auto* st =
      job->add_subcommand("status", "A job's state, exit code and times");
  add_common(st, *sto);
  st->add_option("id", sto->id, "The job's id (job-...)")->required();
  commands.push_back(
      {st,
       [sto] { return guarded("job status", [&] { return status(*sto); }); }});

  auto lo = std::make_shared<logs_cli>();
  auto* lg = job->add_subcommand("logs", "A job's driver output");
  lg->add_option("--address", lo->address,
                 "The head, HOST:PORT (default: PRISM_ADDRESS, then the "
                 "head started on this host)");
  lg->add_option("id", lo->id, "The job's id (job-...)")->required();
  lg->add_flag("--err", lo->err, "Its stderr instead of its stdout");
  lg->add_flag("-f,--follow", lo->follow,
               "Follow the output until the job ends");
  commands.push_back(
      {lg, [lo] { return guarded("job logs", [&] { return logs(*lo); }); }});

  auto po = std::make_shared<stop_cli>();
  auto* sp = job->add_subcommand(
      "stop", "End a job's driver (SIGTERM to its process group, SIGKILL "
              "after the grace); waits until it ended");
  add_common(sp, *po);
  sp->add_option("id", po->id, "The job's id (job-...)")->required();
  sp->add_option("--grace-ms", po->grace_ms,
                 "How long the driver may take to end before it is killed")
      ->capture_default_str();
  sp->add_flag("--no-wait", po->no_wait, "Return once the stop is asked");
  commands.push_back(
      {sp, [po] { return guarded("job stop", [&] { return stop(*po); }); }});

  auto li = std::make_shared<common_cli>();
  auto* ls = job->add_subcommand("list", "Every job, the newest first");
  add_common(ls, *li);
  commands.push_back(
      {ls, [li] { return guarded("job list", [&] { return list(*li); }); }});
}

} // namespace prism::tools
