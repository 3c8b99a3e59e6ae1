#pragma once

// Starting and reaping a node's worker processes. No CAF here: the raylet
// learns of an exit through the callback given at launch.

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <sys/types.h>

#include "prism/internal/thread_annotations.hpp"

namespace prism::actors {

/// What a worker process runs: a job's executable and its arguments.
struct worker_program {
  /// Path of the executable.
  std::string path;
  /// Its arguments, argv[0] included.
  std::vector<std::string> argv;

  bool empty() const noexcept {
    return path.empty();
  }
};

/// The program of the calling process, as /proc/self gives it: the
/// executable even if its file was replaced since, and its arguments.
worker_program this_program();

/// "exited with code 3", "was killed by signal 11 (SIGSEGV)": how a process
/// ended, from a `waitpid` status.
std::string describe_exit(int status);

/// Starts processes and reaps them. A thread of its own waits for the
/// children it started (by pidfd, so no other child of the process is
/// reaped) and reports each exit once.
class process_launcher {
public:
  /// Called on the reaper's thread with the pid and `describe_exit`.
  using exit_callback = std::function<void(pid_t, const std::string&)>;

  process_launcher();

  /// Kills (SIGKILL) every child still running, reaps it, and stops the
  /// reaper. Exit callbacks are not called for these.
  ~process_launcher();

  process_launcher(const process_launcher&) = delete;
  process_launcher& operator=(const process_launcher&) = delete;

  /// Starts `program` with the calling process's environment plus `env`
  /// ("NAME=value" entries, which override), with default signal
  /// dispositions and an empty signal mask. Returns its pid; throws
  /// `prism::error` if it cannot start.
  pid_t launch(const worker_program& program,
               const std::vector<std::string>& env, exit_callback on_exit);

  /// Sends SIGKILL to a child that still runs; false if it is not one.
  bool kill(pid_t pid);

  /// Children started and not yet reaped.
  std::size_t running() const;

private:
  struct child {
    int pidfd = -1;
    exit_callback on_exit;
  };

  void reap_loop();
  void wake();

  mutable std::mutex mu_;
  std::unordered_map<pid_t, child> children_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  /// Written to when children_ changes, so the reaper polls the new set.
  int wake_fd_ = -1;
  std::thread reaper_;
};

} // namespace prism::actors
