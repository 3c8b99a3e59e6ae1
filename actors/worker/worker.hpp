#pragma once

#include <memory>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include "common/executor.hpp"
#include "owner/owner_directory.hpp"
#include "prism/ids.hpp"

namespace prism::actors {

struct worker_config {
  worker_id id;
  node_id node;
  caf::actor raylet;
  caf::actor gcs;
  std::shared_ptr<owner_directory> directory;
  /// Results larger than this many bytes stay in the node's object store;
  /// smaller ones go to their owner with the report.
  std::size_t max_inline_bytes = 100 * 1024;
  /// Threads for the methods of an actor instance the worker hosts (worker
  /// processes only: a raylet of worker threads hosts actors itself).
  std::shared_ptr<executor> actor_pool;
  /// The job a worker process is bound to; 0 for a worker thread, which
  /// serves every job.
  job_id job{};
};

/// A worker's actor, and its owner actor, which takes the cancellations of
/// the tasks pushed to it (`protocol::cancel_run`) while the worker runs.
struct spawned_worker {
  caf::actor worker;
  caf::actor control;
};

/// Spawns a worker: an actor on a thread of its own (user code may block),
/// with an owner of its own for the tasks its tasks submit. It runs the tasks
/// pushed to it one at a time, in order, and reports each to the owner named
/// in the push. It ends when its raylet does. A worker process started for
/// an actor instance hosts it instead (`protocol::host_actor`, answered
/// with the host), and ends with it.
spawned_worker spawn_worker(caf::actor_system& sys, worker_config cfg);

} // namespace prism::actors
