#include "gcs/job_runner.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <caf/all.hpp>

#include "common/default_handlers.hpp"
#include "common/log.hpp"
#include "common/processes.hpp"
#include "common/program_file.hpp"
#include "gcs/job_launch.hpp"
#include "prism/error.hpp"
#include "prism/internal/task_events.hpp"
#include "protocol/kv.hpp"
#include "protocol/submitted_jobs.hpp"

namespace prism::actors {

// Named, not anonymous: in a unity build this file shares its unit with
// the control store's, whose anonymous names would collide.
namespace job_running {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using protocol::submitted_job;
using protocol::submitted_job_state;

using runner_load_atom = caf::atom_constant<caf::atom("jr_load")>;
using runner_tick_atom = caf::atom_constant<caf::atom("jr_tick")>;
using runner_retry_atom = caf::atom_constant<caf::atom("jr_retry")>;

/// How long the control store may take to answer.
constexpr auto gcs_timeout = 10s;

/// How often running jobs are looked at.
constexpr auto tick_interval = 250ms;

/// How long a submission waits for its program, which another submitter
/// may still be uploading.
constexpr auto program_wait = 60s;
constexpr auto program_poll = 200ms;

/// The most bytes of a driver's output one read answers.
constexpr std::uint64_t max_output_read = std::uint64_t{1} << 20;

/// The first byte of a stored record: its layout.
constexpr char record_version = 1;

/// A submission whose program is not in the control store yet.
struct waiting_submission {
  protocol::submit_job msg;
  caf::response_promise promise;
  std::chrono::steady_clock::time_point give_up_at;
};

struct job_runner_state {
  static inline const char* name = "prism.job_runner";

  job_runner_config cfg;
  job_runner_start start;
  std::shared_ptr<spdlog::logger> log;
  std::map<std::string, submitted_job> jobs;
  std::deque<waiting_submission> waiting;
  /// Jobs whose last change the control store did not take yet.
  std::set<std::string> unsaved;
  bool ticking = false;
  /// The records are read, and requests answered.
  bool ready = false;
  /// Counts the attempts to read the records: answers to an earlier one
  /// are ignored.
  std::uint64_t load_round = 0;
};

using runner_actor = caf::stateful_actor<job_runner_state>;

std::int64_t now_ms() {
  return internal::unix_us_now() / 1000;
}

std::string new_job_id() {
  static constexpr char hex[] = "0123456789abcdef";
  std::random_device rd;
  std::string id = "job-";
  for (int i = 0; i < 12; ++i)
    id += hex[rd() % 16];
  return id;
}

job_files files_of(const job_runner_state& st, const std::string& id) {
  return {jobs_dir_of(st.cfg) + "/" + id};
}

std::string pid_file_of(const job_runner_state& st, const std::string& id) {
  return st.cfg.session_dir + "/" + id + ".pid";
}

/// The live supervisor of job `id`, as its pid file names it; 0 if none.
pid_t supervisor_of(const job_runner_state& st, const std::string& id) {
  std::ifstream in{pid_file_of(st, id)};
  pid_t pid = 0;
  if (!(in >> pid) || process_start_time(pid) == 0)
    return 0;
  return pid;
}

detail::error_info refusal(std::string text) {
  return {errc::invalid_argument, std::move(text), "", ""};
}

protocol::submitted_jobs answer_of(const submitted_job& job) {
  return {{job}, {}};
}

// -- the stored records -------------------------------------------------------

std::string encode(caf::actor_system& sys, const submitted_job& job) {
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  auto copy = job;
  if (auto err = sink(copy))
    return "";
  std::string result(1, record_version);
  result.append(buf.begin(), buf.end());
  return result;
}

std::optional<submitted_job> decode(caf::actor_system& sys,
                                    const std::string& bytes) {
  if (bytes.empty() || bytes[0] != record_version)
    return std::nullopt;
  std::vector<char> buf(bytes.begin() + 1, bytes.end());
  caf::binary_deserializer source{sys, buf};
  submitted_job job;
  if (auto err = source(job))
    return std::nullopt;
  return job;
}

/// Writes `job` to the control store; `then(true)` once it is durable,
/// `then(false)` if the control store did not take it (the job is saved
/// again on a later tick).
void save(runner_actor* self, const submitted_job& job,
          std::function<void(bool)> then = {}) {
  auto& st = self->state;
  auto id = job.id;
  st.unsaved.erase(id);
  self->request(st.start.gcs, gcs_timeout,
                protocol::kv_put{submitted_jobs_namespace,
                                 id,
                                 encode(self->system(), job),
                                 true,
                                 {}})
      .then(
          [then](bool) {
            if (then)
              then(true);
          },
          [self, id, then](caf::error& err) {
            auto& st = self->state;
            st.log->warn("the control store did not record job {}: {}", id,
                         self->system().render(err));
            st.unsaved.insert(id);
            if (then)
              then(false);
          });
}

// -- how jobs end -------------------------------------------------------------

void ensure_tick(runner_actor* self);

/// Records how job `job` ended.
void finish(runner_actor* self, submitted_job& job,
            const std::optional<job_exit>& exit) {
  auto& st = self->state;
  job.end_ms = exit ? exit->end_ms : now_ms();
  if (!exit) {
    job.state = job.stop_requested ? submitted_job_state::stopped
                                   : submitted_job_state::failed;
    job.message = "its supervisor (pid " + std::to_string(job.supervisor_pid) +
                  ") ended and left no word of how the driver did";
  } else {
    bool known = exit->status != -1;
    bool exited = known && WIFEXITED(exit->status);
    job.exit_code = exited ? WEXITSTATUS(exit->status) : -1;
    job.message = known ? describe_exit(exit->status)
                        : "ended; its supervisor could not learn how";
    // Asked to stop, the driver may have ended by itself first: the
    // supervisor knows which.
    if (exit->stopped)
      job.state = submitted_job_state::stopped;
    else if (exited && job.exit_code == 0)
      job.state = submitted_job_state::succeeded;
    else
      job.state = submitted_job_state::failed;
  }
  st.log->info("job {} {}: its driver {}", job.id, to_string(job.state),
               job.message);
  std::error_code ec;
  fs::remove(pid_file_of(st, job.id), ec);
  save(self, job);
}

/// Looks at each running job: whether its supervisor wrote how it ended,
/// or is gone without a word.
void tick(runner_actor* self) {
  auto& st = self->state;
  st.ticking = false;
  for (auto& [id, job] : st.jobs) {
    if (job.state != submitted_job_state::running)
      continue;
    // A head that adopts orphans (a container's first process, a
    // subreaper) is the parent of supervisors that outlived their head:
    // it reaps them. Any other head has no such child, and this does
    // nothing.
    if (job.supervisor_pid > 0)
      ::waitpid(job.supervisor_pid, nullptr, WNOHANG);
    auto files = files_of(st, id);
    if (auto exit = read_job_exit(files)) {
      finish(self, job, exit);
      continue;
    }
    if (job.supervisor_start == 0 ||
        process_start_time(job.supervisor_pid) != job.supervisor_start)
      // Its last word may have landed just now.
      finish(self, job, read_job_exit(files));
  }
  for (auto id : std::set<std::string>{st.unsaved}) {
    if (auto i = st.jobs.find(id); i != st.jobs.end())
      save(self, i->second);
    else
      st.unsaved.erase(id); // a submission that was refused
  }
  ensure_tick(self);
}

void ensure_tick(runner_actor* self) {
  auto& st = self->state;
  if (st.ticking)
    return;
  bool needed = !st.unsaved.empty();
  for (auto& [id, job] : st.jobs)
    needed = needed || job.state == submitted_job_state::running;
  if (!needed)
    return;
  st.ticking = true;
  self->delayed_send(self, tick_interval, runner_tick_atom::value);
}

// -- starting a job -----------------------------------------------------------

/// Why `msg` cannot be run, or "".
std::string check_submission(const protocol::submit_job& msg) {
  if (msg.argv.empty() || msg.argv.front().empty())
    return "no program to run";
  if (!is_sha256_hex(msg.sha256))
    return "the program's SHA-256 is not 64 lower-case hex digits";
  for (auto& entry : msg.env) {
    auto eq = entry.find('=');
    if (eq == std::string::npos || eq == 0)
      return "the environment entry '" + entry + "' is not NAME=value";
  }
  if (!msg.working_dir.empty()) {
    std::error_code ec;
    if (fs::path{msg.working_dir}.is_relative())
      return "the working directory " + msg.working_dir +
             " is not an absolute path on the head's host";
    if (!fs::is_directory(msg.working_dir, ec))
      return "the working directory " + msg.working_dir +
             " is not a directory on the head's host";
  }
  return "";
}

/// The program with SHA-256 `sha256` where a driver can run it: a copy of
/// the control store's, executable, in the runner's directory (copied once
/// per program). Returns its path, or "" and sets `error`.
std::string driver_program(const job_runner_state& st,
                           const std::string& sha256, std::uint64_t size,
                           std::string& error) {
  auto dir = jobs_dir_of(st.cfg) + "/programs";
  auto path = dir + "/" + sha256;
  if (check_program_file(path, sha256, size).empty())
    return path;
  std::error_code ec;
  fs::create_directories(dir, ec);
  int in = ::open((st.start.programs_dir + "/" + sha256).c_str(),
                  O_RDONLY | O_CLOEXEC);
  if (in < 0) {
    error = "the control store keeps no program " + sha256.substr(0, 12) +
            ": " + std::strerror(errno);
    return "";
  }
  program_file_writer file;
  error = file.open(dir + "/." + sha256 + ".partial", 0755);
  std::vector<char> buf(std::size_t{4} << 20);
  std::uint64_t offset = 0;
  while (error.empty()) {
    auto n = read_at(in, buf.data(), buf.size(), offset);
    if (n == 0)
      break;
    error = file.append(buf.data(), n);
    offset += n;
  }
  ::close(in);
  if (error.empty())
    error = file.commit(sha256, path, 0755, /*sync=*/false);
  if (!error.empty()) {
    error = "cannot copy the program for its driver: " + error;
    return "";
  }
  remember_program_file(path, sha256);
  return path;
}

/// Starts the driver of `job`, recorded as pending, and answers `promise`
/// once its start is recorded too.
void launch(runner_actor* self, submitted_job job,
            std::vector<std::string> user_env, std::uint64_t size,
            caf::response_promise promise) {
  auto& st = self->state;
  std::string error;
  auto program = driver_program(st, job.sha256, size, error);
  job_launched started;
  if (program.empty()) {
    started.error = error;
  } else {
    auto env = st.start.driver_env;
    env.push_back("PRISM_SUBMITTED_JOB=" + job.id);
    env.insert(env.end(), user_env.begin(), user_env.end());
    job_launch what{
        files_of(st, job.id),    program,         job.argv,
        merged_environment(env), job.working_dir, pid_file_of(st, job.id)};
    started = launch_job(what);
  }
  job.supervisor_pid = started.supervisor;
  job.supervisor_start = started.supervisor_start;
  job.driver_pid = started.driver;
  job.start_ms = now_ms();
  if (started.error.empty()) {
    job.state = submitted_job_state::running;
    st.log->info("job {} runs: driver pid {} ({}), supervisor pid {}", job.id,
                 job.driver_pid, job.argv.front(), job.supervisor_pid);
  } else {
    job.state = submitted_job_state::failed;
    job.end_ms = job.start_ms;
    job.message = started.error;
    st.log->warn("job {} did not start: {}", job.id, started.error);
  }
  st.jobs[job.id] = job;
  save(self, job,
       [promise, job](bool) mutable { promise.deliver(answer_of(job)); });
  ensure_tick(self);
}

/// Records `msg` as a pending job, then starts it.
void begin(runner_actor* self, protocol::submit_job msg,
           caf::response_promise promise) {
  auto& st = self->state;
  submitted_job job;
  do
    job.id = new_job_id();
  while (st.jobs.count(job.id) > 0);
  job.name = msg.name;
  job.argv = msg.argv;
  job.sha256 = msg.sha256;
  auto files = files_of(st, job.id);
  job.working_dir = msg.working_dir.empty() ? files.dir : msg.working_dir;
  for (auto& entry : msg.env)
    job.env_names.push_back(entry.substr(0, entry.find('=')));
  job.submit_ms = now_ms();
  std::error_code ec;
  fs::create_directories(files.dir, ec);
  if (ec) {
    promise.deliver(
        protocol::submitted_jobs{{},
                                 refusal("cannot make the job's directory " +
                                         files.dir + ": " + ec.message())});
    return;
  }
  st.jobs[job.id] = job;
  // Recorded before it starts: a head that dies meanwhile leaves a record
  // its successor reports.
  save(self, job, [self, job, msg = std::move(msg), promise](bool ok) mutable {
    if (!ok) {
      self->state.jobs.erase(job.id);
      promise.deliver(protocol::submitted_jobs{
          {},
          {errc::gcs_unavailable,
           "the control store did not record the job; nothing runs", "", ""}});
      return;
    }
    launch(self, std::move(job), std::move(msg.env), msg.size,
           std::move(promise));
  });
}

/// Starts the submissions whose program arrived, and refuses those that
/// waited too long for theirs.
void retry_waiting(runner_actor* self) {
  auto& st = self->state;
  auto now = std::chrono::steady_clock::now();
  std::deque<waiting_submission> still;
  for (auto& w : st.waiting) {
    std::error_code ec;
    if (fs::exists(st.start.programs_dir + "/" + w.msg.sha256, ec))
      begin(self, std::move(w.msg), std::move(w.promise));
    else if (now >= w.give_up_at)
      w.promise.deliver(protocol::submitted_jobs{
          {},
          refusal("the program " + w.msg.sha256.substr(0, 12) +
                  " was not uploaded to the control store within " +
                  std::to_string(program_wait.count()) + " s")});
    else
      still.push_back(std::move(w));
  }
  st.waiting = std::move(still);
  if (!st.waiting.empty())
    self->delayed_send(self, program_poll, runner_retry_atom::value);
}

caf::result<protocol::submitted_jobs> submit(runner_actor* self,
                                             protocol::submit_job& msg) {
  auto& st = self->state;
  if (auto why = check_submission(msg); !why.empty())
    return protocol::submitted_jobs{{}, refusal(why)};
  auto promise = self->make_response_promise<protocol::submitted_jobs>();
  std::error_code ec;
  if (fs::exists(st.start.programs_dir + "/" + msg.sha256, ec)) {
    begin(self, std::move(msg), promise);
    return promise;
  }
  // Another submitter may be uploading the same program.
  bool first = st.waiting.empty();
  st.waiting.push_back({std::move(msg), promise,
                        std::chrono::steady_clock::now() + program_wait});
  if (first)
    self->delayed_send(self, program_poll, runner_retry_atom::value);
  return promise;
}

// -- questions ----------------------------------------------------------------

const submitted_job* find(const job_runner_state& st, const std::string& id) {
  auto i = st.jobs.find(id);
  return i == st.jobs.end() ? nullptr : &i->second;
}

detail::error_info unknown_job(const std::string& id) {
  return refusal("no job '" + id + "' (`prism job list` shows the jobs)");
}

protocol::submitted_jobs get(const job_runner_state& st,
                             const protocol::get_submitted_jobs& msg) {
  protocol::submitted_jobs result;
  if (!msg.id.empty()) {
    if (auto* job = find(st, msg.id))
      result.jobs.push_back(*job);
    else
      result.error = unknown_job(msg.id);
    return result;
  }
  for (auto& [id, job] : st.jobs)
    result.jobs.push_back(job);
  std::stable_sort(
      result.jobs.begin(), result.jobs.end(),
      [](const auto& a, const auto& b) { return a.submit_ms > b.submit_ms; });
  return result;
}

protocol::submitted_jobs stop(runner_actor* self,
                              const protocol::stop_submitted_job& msg) {
  auto& st = self->state;
  auto i = st.jobs.find(msg.id);
  if (i == st.jobs.end())
    return {{}, unknown_job(msg.id)};
  auto& job = i->second;
  if (job.state == submitted_job_state::pending)
    return {{}, refusal("job " + msg.id + " is still starting; try again")};
  if (protocol::is_final(job.state) || job.stop_requested)
    return answer_of(job);
  job.stop_requested = true;
  save(self, job);
  if (stop_supervised_driver(job.supervisor_pid, job.supervisor_start,
                             msg.grace_ms))
    st.log->info("job {}: stopping its driver (pid {})", job.id,
                 job.driver_pid);
  // Else its supervisor is gone: the next tick records the end.
  return answer_of(job);
}

protocol::job_output read_output(const job_runner_state& st,
                                 const protocol::read_job_output& msg) {
  protocol::job_output result;
  auto* job = find(st, msg.id);
  if (job == nullptr) {
    result.error = unknown_job(msg.id);
    return result;
  }
  // Whether it ended, before the size: all its output is in the file then.
  result.ended = protocol::is_final(job->state);
  auto files = files_of(st, msg.id);
  auto path = msg.err ? files.err() : files.out();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno != ENOENT)
      result.error =
          refusal("cannot read " + path + ": " + std::strerror(errno));
    return result;
  }
  struct stat info {};
  if (::fstat(fd, &info) == 0)
    result.size = static_cast<std::uint64_t>(info.st_size);
  result.offset = std::min(msg.offset, result.size);
  auto want = std::min({result.size - result.offset,
                        msg.max_bytes == 0 ? max_output_read : msg.max_bytes,
                        max_output_read});
  result.bytes.resize(want);
  result.bytes.resize(read_at(fd, result.bytes.data(), want, result.offset));
  ::close(fd);
  return result;
}

// -- coming up ----------------------------------------------------------------

caf::behavior running(runner_actor* self) {
  return {
      [self](protocol::submit_job& msg) { return submit(self, msg); },
      [self](const protocol::get_submitted_jobs& msg) {
        return get(self->state, msg);
      },
      [self](const protocol::stop_submitted_job& msg) {
        return stop(self, msg);
      },
      [self](const protocol::read_job_output& msg) {
        return read_output(self->state, msg);
      },
      [self](runner_tick_atom) { tick(self); },
      [self](runner_retry_atom) { retry_waiting(self); },
  };
}

/// The records are read: jobs that were starting when a head died are
/// settled, and the runner answers.
void loaded(runner_actor* self) {
  auto& st = self->state;
  std::size_t running_jobs = 0;
  for (auto& [id, job] : st.jobs) {
    if (job.state == submitted_job_state::pending) {
      if (auto exit = read_job_exit(files_of(st, id))) {
        finish(self, job, exit);
      } else if (auto pid = supervisor_of(st, id); pid > 0) {
        // The head died after the supervisor started, before it recorded
        // the job as running.
        job.state = submitted_job_state::running;
        job.supervisor_pid = pid;
        job.supervisor_start = process_start_time(pid);
        job.start_ms = now_ms();
        save(self, job);
      } else {
        job.state = submitted_job_state::failed;
        job.end_ms = now_ms();
        job.message = "the head stopped while it started the job";
        save(self, job);
      }
    }
    running_jobs += job.state == submitted_job_state::running ? 1 : 0;
  }
  st.log->info("{} jobs on record, {} of them running", st.jobs.size(),
               running_jobs);
  st.ready = true;
  install_default_handlers(self, st.log);
  self->become(running(self));
  ensure_tick(self);
}

/// Reads every job's record from the control store.
void load(runner_actor* self) {
  auto& st = self->state;
  auto round = ++st.load_round;
  // Whether an answer belongs to this attempt, and the records still wait.
  auto current = [self, round] {
    return !self->state.ready && self->state.load_round == round;
  };
  auto retry = [self, current](caf::error& err) {
    if (!current())
      return;
    self->state.log->warn("cannot read the jobs' records: {}; again in 1 s",
                          self->system().render(err));
    self->state.jobs.clear();
    self->delayed_send(self, 1s, runner_load_atom::value);
  };
  self->request(st.start.gcs, gcs_timeout,
                protocol::kv_keys{submitted_jobs_namespace, ""})
      .then(
          [self, retry, current](std::vector<std::string>& keys) {
            if (!current())
              return;
            if (keys.empty()) {
              loaded(self);
              return;
            }
            auto left = std::make_shared<std::size_t>(keys.size());
            auto failed = std::make_shared<bool>(false);
            for (auto& key : keys)
              self->request(self->state.start.gcs, gcs_timeout,
                            protocol::kv_get{submitted_jobs_namespace, key})
                  .then(
                      [self, key, left, failed,
                       current](protocol::kv_value& v) {
                        if (!current())
                          return;
                        auto job = decode(self->system(), v.value);
                        if (v.found && job && job->id == key)
                          self->state.jobs[key] = std::move(*job);
                        else if (v.found)
                          self->state.log->warn("ignored a damaged record of "
                                                "job {}",
                                                key);
                        if (--*left == 0 && !*failed)
                          loaded(self);
                      },
                      [left, failed, retry](caf::error& err) mutable {
                        --*left;
                        if (!*failed) {
                          *failed = true;
                          retry(err);
                        }
                      });
          },
          retry);
}

caf::behavior job_runner(runner_actor* self, job_runner_config cfg) {
  auto& st = self->state;
  st.cfg = std::move(cfg);
  st.log = component_logger("jobs");
  install_default_handlers(self, st.log);
  // Until the records are read, other messages wait in the mailbox.
  self->set_default_handler(caf::skip);
  return {
      [self](job_runner_start& start) {
        self->state.start = std::move(start);
        load(self);
      },
      [self](runner_load_atom) { load(self); },
  };
}

} // namespace job_running

caf::actor spawn_job_runner(caf::actor_system& sys, job_runner_config cfg) {
  std::error_code ec;
  std::filesystem::create_directories(jobs_dir_of(cfg), ec);
  if (ec)
    throw invalid_argument_error("cannot create the jobs' directory " +
                                 jobs_dir_of(cfg) + ": " + ec.message());
  return sys.spawn<caf::detached>(job_running::job_runner, std::move(cfg));
}

} // namespace prism::actors
