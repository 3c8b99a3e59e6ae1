#pragma once

// The jobs of the cluster: which driver started each, and whether it runs.

#include <cstdint>
#include <string>
#include <unordered_map>

#include <caf/response_promise.hpp>

#include "gcs/gcs_actor.hpp"
#include "prism/ids.hpp"
#include "protocol/output.hpp"
#include "protocol/raylet_gcs.hpp"

namespace prism::actors::gcs_detail {

struct job_entry {
  worker_id driver;
  std::string ns;
  bool running = true;
  std::int64_t start_ms = 0;
  /// What its worker processes run.
  protocol::job_program program;
};

struct job_table {
  std::unordered_map<job_id, job_entry> entries;
  std::uint32_t next_job = 1;
  /// Who takes each job's output (its driver), while it runs; not stored:
  /// a driver asks again after a restart.
  std::unordered_map<job_id, caf::actor> output_sinks;
  /// The owners of the drivers it watches (`protocol::watch_driver`), and
  /// the job each drives; not stored: a driver reports again after a
  /// restart.
  std::unordered_map<caf::actor_addr, job_id> drivers;
};

/// Writes job `id` to the storage.
void save_job(gcs_actor* self, job_id id, const job_entry& j);

/// A driver starts a job; answers its id once durable.
caf::response_promise start_job(gcs_actor* self,
                                const protocol::start_job& msg);

/// The program a job's worker processes run; empty if the job is unknown.
protocol::job_program job_program_of(gcs_actor* self,
                                     const protocol::get_job_program& msg);

/// A job ends: its non-detached actors die, its lineage goes, every raylet
/// hears of it.
caf::response_promise finish_job(gcs_actor* self,
                                 const protocol::finish_job& msg);

/// Watches the owner of a job's driver, so that the job ends with it.
void watch_driver(gcs_actor* self, const protocol::watch_driver& msg);

/// The owner `source` went down (`reason`): if it drove a job that still
/// runs, the job ends. False if it drove none.
bool driver_gone(gcs_actor* self, const caf::actor_addr& source,
                 const caf::error& reason);

/// After a restart's grace period: each job still running whose driver did
/// not report back ends.
void end_unwatched_jobs(gcs_actor* self);

/// A driver takes its job's output from now on.
void subscribe_output(gcs_actor* self, protocol::subscribe_output& msg);

/// Hands a node's output lines to their job's driver, which answers the
/// node; answers `true` itself if no driver takes them.
caf::result<caf::message> forward_output(gcs_actor* self,
                                         protocol::output_lines& msg);

/// Asks every live node to send on `msg.job`'s output; answers once all
/// did (or did not answer in time).
caf::result<bool> flush_output(gcs_actor* self,
                               const protocol::flush_output& msg);

/// Forgets the output sink `source`; false if it was none.
bool output_sink_gone(gcs_actor* self, const caf::actor_addr& source);

} // namespace prism::actors::gcs_detail
