#pragma once

// Starting a submitted job's driver under a supervisor of its own, and
// reading how it ended. No CAF here: the job runner (gcs/job_runner.hpp)
// calls these from its own thread.
//
// The supervisor is a process in a session of its own, forked from the head
// and not its child (it outlives a head that dies, and no signal to the
// head's process group reaches it). It starts the driver in a process group
// of its own, with stdout and stderr to the job's files, waits for it, and
// writes how it ended to the job's directory, where a head (this one, or
// one started again) reads it. On SIGTERM, SIGINT or SIGHUP it ends the
// driver's process group: SIGTERM, then SIGKILL after a grace period. A
// supervisor that is killed takes its driver with it (the driver's parent
// death signal), which would otherwise run unwatched.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

namespace prism::actors {

/// The files of a submitted job, in its directory.
struct job_files {
  std::string dir;

  std::string out() const {
    return dir + "/driver.out";
  }
  std::string err() const {
    return dir + "/driver.err";
  }
  /// How the driver ended, once it did (see `read_job_exit`).
  std::string exit_record() const {
    return dir + "/exit";
  }
};

/// What to run, and where.
struct job_launch {
  job_files files;
  /// The executable.
  std::string program;
  /// Its arguments, argv[0] included.
  std::vector<std::string> argv;
  /// Its whole environment ("NAME=value").
  std::vector<std::string> env;
  /// The directory it runs in.
  std::string working_dir;
  /// The supervisor's pid file in the session ("" none), which `prism stop`
  /// reads: written at its start, removed at its end.
  std::string pid_file;
};

/// A supervisor started, or why none.
struct job_launched {
  pid_t supervisor = 0;
  /// The supervisor's start time (`process_start_time`).
  std::uint64_t supervisor_start = 0;
  pid_t driver = 0;
  /// Why the driver did not start ("cannot run ./a: Permission denied");
  /// empty if it runs.
  std::string error;
};

/// Starts the supervisor of `what`, which starts the driver. Returns once
/// the driver runs (its exec succeeded) or failed to start, or after 10 s
/// without word from the supervisor. Blocks: not on a scheduler thread.
job_launched launch_job(const job_launch& what);

/// How a driver ended, as its supervisor wrote it.
struct job_exit {
  /// The `waitpid` status; -1 if the supervisor could not learn it.
  int status = 0;
  /// The supervisor was asked to stop the driver before it ended.
  bool stopped = false;
  /// When, in milliseconds since the epoch.
  std::int64_t end_ms = 0;
};

/// How the driver of the job in `files` ended; none while it runs (or if
/// the file is not a supervisor's).
std::optional<job_exit> read_job_exit(const job_files& files);

/// When process `pid` started, in clock ticks after boot (/proc/PID/stat);
/// 0 if there is no such process or it is a zombie.
std::uint64_t process_start_time(pid_t pid);

/// Asks the supervisor `pid` (started at `start`) to end its driver, with
/// `grace_ms` between SIGTERM and SIGKILL. False if that process is gone.
bool stop_supervised_driver(pid_t pid, std::uint64_t start,
                            std::uint32_t grace_ms);

} // namespace prism::actors
