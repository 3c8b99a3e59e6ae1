#pragma once

#include <memory>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include "owner/actor_routes.hpp"
#include "owner/owner_directory.hpp"
#include "owner/run_control.hpp"
#include "prism/ids.hpp"
#include "prism/internal/memory_store.hpp"

namespace prism::actors {

/// What an owner needs to know at its start.
struct owner_config {
  worker_id self;
  node_id node;
  /// The raylet of the owner's node, which leases it workers.
  caf::actor raylet;
  /// The memory store shared with the owner's API threads.
  std::shared_ptr<internal::memory_store> store;
  std::shared_ptr<owner_directory> directory;
  /// The owner's calls to actors, shared with its API threads.
  std::shared_ptr<actor_routes> routes;
  /// The control store, which keeps durable tasks' lineage.
  caf::actor gcs;
  /// The job this owner drives (`protocol::watch_driver`); 0 for a
  /// worker's owner.
  job_id drives{};
  /// The cancellation of the tasks its worker runs; null for an owner that
  /// runs none (a driver's, an actor's).
  std::shared_ptr<run_control> runs{};
  /// The job of the process this owner serves (a driver's, or the one a
  /// worker process is bound to); 0 for one that serves every job.
  job_id job{};
};

/// Spawns the owner of one driver or worker: it resolves task arguments,
/// leases workers, pushes tasks to them, stores results, retries tasks whose
/// worker died (up to `max_retries`) or that threw (with `retry_exceptions`),
/// and serves its objects to borrowers. It cancels its tasks when asked,
/// and the tasks its worker runs when their owners ask.
caf::actor spawn_owner(caf::actor_system& sys, owner_config cfg);

/// How many rebuilds of lost objects the owners of this process started.
std::uint64_t objects_rebuilt();

/// How many reads of objects in other nodes' stores the owners of this
/// process finished over those nodes' bulk ports.
std::uint64_t bulk_reads();

} // namespace prism::actors
