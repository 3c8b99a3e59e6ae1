#pragma once

// Jobs run by the cluster: `prism job submit|status|logs|stop|list` -> the
// control store, which hands each message to the head's job runner
// (gcs/job_runner.hpp). The runner starts each submitted program as a driver
// process on the head's host, under a supervisor of its own that outlives a
// restart of the head, and keeps each job's record in the control store.

#include <cstdint>
#include <string>
#include <vector>

#include "prism/detail/runtime.hpp"

namespace prism::protocol {

/// Where a submitted job is.
enum class submitted_job_state : std::uint8_t {
  /// Recorded; its driver is being started.
  pending,
  running,
  /// Its driver exited with code 0.
  succeeded,
  /// Its driver exited with another code or was killed, or it never ran.
  failed,
  /// `prism job stop` ended it.
  stopped,
};

/// "PENDING", "RUNNING", ...: how `prism job` prints a state.
inline const char* to_string(submitted_job_state s) {
  switch (s) {
  case submitted_job_state::pending:
    return "PENDING";
  case submitted_job_state::running:
    return "RUNNING";
  case submitted_job_state::succeeded:
    return "SUCCEEDED";
  case submitted_job_state::failed:
    return "FAILED";
  case submitted_job_state::stopped:
    return "STOPPED";
  }
  return "UNKNOWN";
}

/// Whether a job in state `s` has ended.
inline bool is_final(submitted_job_state s) {
  return s != submitted_job_state::pending && s != submitted_job_state::running;
}

/// A submitted job, as the control store keeps it.
struct submitted_job {
  /// "job-" and 12 hex digits.
  std::string id;
  /// What the submitter called it ("" if nothing).
  std::string name;
  submitted_job_state state = submitted_job_state::pending;
  /// The command line as given; the program is `argv[0]`.
  std::vector<std::string> argv;
  /// The SHA-256 of the program's bytes, as uploaded.
  std::string sha256;
  /// Where the driver runs, on the head's host.
  std::string working_dir;
  /// The names of the environment entries given (never their values,
  /// which may be secrets).
  std::vector<std::string> env_names;
  /// Milliseconds since the epoch; 0 until it happened.
  std::int64_t submit_ms = 0;
  std::int64_t start_ms = 0;
  std::int64_t end_ms = 0;
  /// The driver's exit code; -1 if it did not exit by itself (killed, or
  /// never started).
  std::int32_t exit_code = -1;
  /// How it ended ("exited with code 3", "was killed by signal 9
  /// (SIGKILL)") or why it did not run.
  std::string message;
  /// The supervisor process, and its start time in clock ticks after boot
  /// (from /proc: a pid reused by another process is not taken for it).
  std::int32_t supervisor_pid = 0;
  std::uint64_t supervisor_start = 0;
  std::int32_t driver_pid = 0;
  /// `prism job stop` asked for its end.
  bool stop_requested = false;

  friend bool operator==(const submitted_job&, const submitted_job&) = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, submitted_job& x) {
  return f(x.id, x.name, x.state, x.argv, x.sha256, x.working_dir, x.env_names,
           x.submit_ms, x.start_ms, x.end_ms, x.exit_code, x.message,
           x.supervisor_pid, x.supervisor_start, x.driver_pid,
           x.stop_requested);
}

/// `prism job submit` -> gcs: run the program with SHA-256 `sha256`,
/// uploaded before (`offer_program`), as a driver on the head's host.
/// Answered with `submitted_jobs` holding the job, running.
struct submit_job {
  std::string name;
  /// The command line; `argv[0]` names the program as the submitter gave
  /// it (the driver sees it so).
  std::vector<std::string> argv;
  std::string sha256;
  std::uint64_t size = 0;
  /// A directory on the head's host; "" takes the job's own directory.
  std::string working_dir;
  /// "NAME=value" entries for the driver, on top of what the head gives it.
  std::vector<std::string> env;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, submit_job& x) {
  return f(x.name, x.argv, x.sha256, x.size, x.working_dir, x.env);
}

/// `prism job status|list` -> gcs: the job `id`, or every job if `id` is
/// empty (the newest first). Answered with `submitted_jobs`.
struct get_submitted_jobs {
  std::string id;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, get_submitted_jobs& x) {
  return f(x.id);
}

/// `prism job stop` -> gcs: end the driver of job `id` (SIGTERM to its
/// process group, SIGKILL after `grace_ms`). Answered with
/// `submitted_jobs` holding the job as it is when asked; it stops later.
struct stop_submitted_job {
  std::string id;
  std::uint32_t grace_ms = 5000;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, stop_submitted_job& x) {
  return f(x.id, x.grace_ms);
}

/// The jobs asked for, or why none (`error.code` is not ok: an unknown id,
/// a program that cannot run).
struct submitted_jobs {
  std::vector<submitted_job> jobs;
  detail::error_info error;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, submitted_jobs& x) {
  return f(x.jobs, x.error);
}

/// `prism job logs` -> gcs: at most `max_bytes` of the driver's stdout (or
/// stderr if `err`) of job `id`, from `offset` on. Answered with
/// `job_output`.
struct read_job_output {
  std::string id;
  bool err = false;
  std::uint64_t offset = 0;
  std::uint64_t max_bytes = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, read_job_output& x) {
  return f(x.id, x.err, x.offset, x.max_bytes);
}

struct job_output {
  std::string bytes;
  /// Where `bytes` start, and the file's size now.
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  /// The job ended: the file grows no more.
  bool ended = false;
  detail::error_info error;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, job_output& x) {
  return f(x.bytes, x.offset, x.size, x.ended, x.error);
}

} // namespace prism::protocol
