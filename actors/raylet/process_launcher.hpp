#pragma once

// Starting and reaping a node's worker processes. No CAF here: the raylet
// learns of an exit through the callback given at launch.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include <sys/types.h>

#include "common/processes.hpp"
#include "prism/ids.hpp"
#include "prism/internal/thread_annotations.hpp"
#include "raylet/worker_output.hpp"

namespace prism::actors {

/// What a worker process runs: a job's executable and its arguments.
struct worker_program {
  /// Path of the executable.
  std::string path;
  /// Its arguments, argv[0] included.
  std::vector<std::string> argv;
  /// The SHA-256 of the executable, if known: two programs at one path
  /// with other contents (a rebuilt binary) are told apart by it.
  std::string sha256;

  bool empty() const noexcept {
    return path.empty();
  }

  friend bool operator==(const worker_program&,
                         const worker_program&) = default;
};

/// The program of the calling process, as /proc/self gives it: the
/// executable even if its file was replaced since, and its arguments.
worker_program this_program();

/// Starts worker processes and reaps them. A thread of its own waits for
/// them (by pidfd, so no other process this one started is reaped), answers
/// each launch and reports each exit once.
///
/// With fork servers, the first launch of a program also starts a fork
/// server of it (worker/fork_server.hpp), and once that serves, each
/// worker of the program is forked from it: a millisecond instead of a
/// start of the program. The server reports how its processes end; a
/// program whose server cannot serve, or does not answer within
/// `fork_answer_timeout`, starts its workers by exec.
///
/// A launch never waits for a fork server: its answer comes later, on the
/// launcher's thread, so a node's actor thread is never held by a server
/// that hangs.
///
/// A fork server keeps `spares` processes forked ahead of requests, which
/// prepare to serve while they wait (worker/fork_server.hpp): they have
/// the environment entries every worker of the node gets (`common_env`),
/// and a launch's own entries come with its request.
///
/// With an `output`, each process's stdout and stderr are pipes that it
/// reads (raylet/worker_output.hpp), a fork server's too, and Prism's own
/// log of the process goes to this process's stderr (descriptor
/// `output_log_fd_variable` names in the process).
class process_launcher {
public:
  /// Called on the launcher's thread with the pid and `describe_exit`.
  using exit_callback = std::function<void(pid_t, const std::string&)>;

  /// A process launched, and how.
  struct launched {
    pid_t pid = 0;
    /// Forked from its program's fork server, not started by exec.
    bool forked = false;
    /// Of those, one its server forked and prepared ahead of the launch.
    bool spare = false;
    /// Why no process started; empty if one did.
    std::string error;
  };

  /// Called on the launcher's thread, once per launch, before the exit
  /// callback of the same launch can be.
  using start_callback = std::function<void(const launched&)>;

  /// The default time a launch waits for a fork server's answer.
  static constexpr std::chrono::milliseconds default_fork_answer_timeout{1000};

  explicit process_launcher(bool fork_servers = true,
                            std::chrono::milliseconds fork_answer_timeout =
                                default_fork_answer_timeout,
                            std::vector<std::string> common_env = {},
                            std::size_t spares = 0,
                            std::shared_ptr<worker_output> output = nullptr);

  /// Kills (SIGKILL) every process still running, the fork servers too,
  /// reaps those it can, and stops its thread. Neither exit callbacks nor
  /// the start callbacks of launches still waiting are called.
  ~process_launcher();

  process_launcher(const process_launcher&) = delete;
  process_launcher& operator=(const process_launcher&) = delete;

  /// Starts `program` with the calling process's environment plus the
  /// common entries and `env` ("NAME=value" entries, which override, the
  /// last most), with default signal
  /// dispositions and an empty signal mask. Returns at once; `on_started`
  /// says later which process started, or why none did. Its output's
  /// lines go to the driver of `job`. A `fresh` one is never a fork
  /// server's spare.
  void launch(const worker_program& program,
              const std::vector<std::string>& env, exit_callback on_exit,
              start_callback on_started, job_id job = {}, bool fresh = false);

  /// The same, waiting for the answer (up to `fork_answer_timeout` and a
  /// start by exec): for tests and tools, never on an actor's thread.
  /// Throws `prism::error` if no process started.
  launched launch(const worker_program& program,
                  const std::vector<std::string>& env, exit_callback on_exit);

  /// Sends SIGKILL to a worker that still runs; false if it is not one.
  bool kill(pid_t pid);

  /// No job needs `program` any more: its fork server ends once the
  /// workers it forked have. A later launch starts another.
  void forget(const worker_program& program);

  /// Worker processes started and not yet reaped (fork servers not
  /// counted).
  std::size_t running() const;

private:
  struct running_process {
    int pidfd = -1;
    exit_callback on_exit;
    /// The pid of the fork server it came from; 0 if started by exec.
    pid_t server = 0;
    /// Its server is gone, and with it the way to learn its exit status.
    bool orphaned = false;
    /// It is a fork server itself.
    bool is_server = false;
  };

  struct fork_server {
    pid_t pid = 0;
    /// This side of its socket; -1 once closed.
    int fd = -1;
    bool ready = false;
    /// No job needs it: it is closed when its last worker ends.
    bool retiring = false;
  };

  /// A launch: what to start, and whom to tell.
  struct launch_request {
    worker_program program;
    std::vector<std::string> env;
    exit_callback on_exit;
    start_callback on_started;
    job_id job;
    /// Its stdout and stderr, if `output_` reads them.
    std::shared_ptr<worker_output::pipes> pipes;
    /// Forked for it, never a spare.
    bool fresh = false;
  };

  /// A fork request awaiting its server's answer.
  struct fork_request {
    pid_t server = 0;
    std::chrono::steady_clock::time_point deadline;
    launch_request launch;
  };

  /// Callbacks to run, in order, once the lock is released.
  using reports = std::vector<std::function<void()>>;

  pid_t spawn(const worker_program& program,
              const std::vector<std::string>& env,
              const std::vector<std::pair<int, int>>& fds = {});
  void start_by_exec(launch_request r);
  /// `output_` reads the process `pid` that `pipes` (if any) were made for.
  void watch_output(const std::shared_ptr<worker_output::pipes>& pipes,
                    pid_t pid, const std::string& name, job_id job);
  void start_server(const std::string& key, const worker_program& program)
      EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool ask_fork(fork_server& server, launch_request& r)
      EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void read_server(const std::string& key, reports& out)
      EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void close_server(const std::string& key) EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void close_if_retired(pid_t server) EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void give_up_late_servers(std::chrono::steady_clock::time_point now)
      EXCLUSIVE_LOCKS_REQUIRED(mu_);
  int poll_timeout(std::chrono::steady_clock::time_point now) const
      EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void reap_loop();
  void reap(pid_t pid, reports& out) EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void wake();

  const bool fork_servers_;
  const std::chrono::milliseconds fork_answer_timeout_;
  const std::vector<std::string> common_env_;
  const std::size_t spares_;
  const std::shared_ptr<worker_output> output_;
  mutable std::mutex mu_;
  std::unordered_map<pid_t, running_process> processes_ GUARDED_BY(mu_);
  /// By program (see `program_key`).
  std::unordered_map<std::string, fork_server> servers_ GUARDED_BY(mu_);
  /// Programs whose fork server could not serve, and why.
  std::unordered_map<std::string, std::string> refused_ GUARDED_BY(mu_);
  std::unordered_map<std::uint64_t, fork_request> requests_ GUARDED_BY(mu_);
  std::uint64_t next_request_ GUARDED_BY(mu_) = 0;
  /// Answers of launches to give, in order, before any exit is reported.
  reports answers_ GUARDED_BY(mu_);
  /// Launches whose fork server went or did not answer: they start by exec,
  /// on the launcher's thread.
  std::vector<launch_request> by_exec_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  /// Written to when processes_, servers_ or the queues change, so the
  /// reaper polls the new set.
  int wake_fd_ = -1;
  std::thread reaper_;
};

} // namespace prism::actors
