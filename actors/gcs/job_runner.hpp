#pragma once

// The head's job runner: it runs the programs `prism job submit` hands the
// cluster as drivers on the head's host (gcs/job_launch.hpp), answers
// `prism job status|logs|stop|list` (protocol/submitted_jobs.hpp), and keeps
// each job's record in the control store's key-value table, so that a head
// started again reports the jobs it did not start: running ones until they
// end, and how each ended.

#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

namespace prism::actors {

/// The key-value namespace of the jobs' records, one per job id.
inline constexpr const char* submitted_jobs_namespace = "prism.jobs";

struct job_runner_config {
  /// The head's session directory. Each job's directory is
  /// `<session>/jobs/<id>` (its driver's stdout and stderr, how it ended),
  /// the programs drivers run are in `<session>/jobs/programs`, and each
  /// job's supervisor has a pid file `<session>/job-<id>.pid`, so that
  /// `prism stop` ends it with the cluster.
  std::string session_dir;
};

/// Where the jobs of `cfg` keep their files: `<session>/jobs`.
inline std::string jobs_dir_of(const job_runner_config& cfg) {
  return cfg.session_dir + "/jobs";
}

/// What a job runner needs once the head runs; it answers nothing before.
struct job_runner_start {
  /// The control store's endpoint.
  caf::actor gcs;
  /// Where the control store keeps uploaded programs, by SHA-256.
  std::string programs_dir;
  /// What each driver gets in its environment ("NAME=value"): the head's
  /// address, the cluster token, the TLS files.
  std::vector<std::string> driver_env;
};

/// Never crosses processes; CAF wants it inspectable all the same.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, job_runner_start& x) {
  return f(x.gcs, x.programs_dir, x.driver_env);
}

/// Spawns the job runner, on a thread of its own (it starts processes and
/// reads files). Send it a `job_runner_start`; messages before it wait.
caf::actor spawn_job_runner(caf::actor_system& sys, job_runner_config cfg);

} // namespace prism::actors
