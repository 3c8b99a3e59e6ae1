#pragma once

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

namespace prism::actors {

class gcs_storage;

/// How a control store comes up.
enum class gcs_start {
  /// With the cluster: the storage is new, or left by a cluster that
  /// stopped. No node or driver of the tables is alive; detached actors are
  /// created again as soon as nodes can host them, without using a restart.
  fresh_cluster,
  /// After the control store alone died: nodes, actor instances and owners
  /// are alive and report back; what does not report within the grace period
  /// is treated as dead.
  restart,
};

struct gcs_config {
  /// Where the tables live; null keeps them in memory only.
  std::shared_ptr<gcs_storage> storage;
  gcs_start start = gcs_start::fresh_cluster;
  /// After a restart: how long nodes and owners have to report back.
  std::chrono::milliseconds recovery_grace{2000};
  /// How many dead actors it keeps; it forgets those that died first.
  std::size_t max_dead_actors = 100000;
  /// The keeper of jobs' programs (gcs/program_store.hpp), which gets the
  /// programs' messages; none: programs are not kept, and reads of them
  /// fail.
  caf::actor programs;
  /// The task event store (gcs/task_event_store.hpp), which gets owners'
  /// task events and the questions about tasks; none: they are dropped,
  /// and questions refused.
  caf::actor task_events;
  /// The head's job runner (gcs/job_runner.hpp), which gets the messages of
  /// `prism job`; none: they are refused.
  caf::actor jobs;
};

/// Spawns the control store: the registry of nodes, jobs, actors and the
/// user key-value table. It watches every raylet, actor host and owner of a
/// non-detached actor, writes every change to its storage, and acknowledges
/// a request only once the change it made is durable. A client write that
/// carries a `protocol::request_id` is applied at most once: its id is
/// stored with the change, and the same write arriving again, also after a
/// restart, gets the first answer.
caf::actor spawn_gcs(caf::actor_system& sys, gcs_config cfg);

/// Spawns the control store's stable address: it forwards every message to
/// the control store attached now (`protocol::gcs_attach`), buffers messages
/// while none is (answering a request with an error once `wait` passes), and
/// tells its watchers (`protocol::watch_gcs`) when a new one takes over.
caf::actor spawn_gcs_endpoint(caf::actor_system& sys,
                              std::chrono::milliseconds wait);

struct gcs_keeper_config {
  /// The endpoint that each new control store attaches to.
  caf::actor endpoint;
  /// Opens the storage again after a stop or a failure; throws if it cannot.
  std::function<std::shared_ptr<gcs_storage>()> open_storage;
  /// After a restart: how long nodes and owners have to report back.
  std::chrono::milliseconds recovery_grace{2000};
  /// How many dead actors each control store keeps.
  std::size_t max_dead_actors = 100000;
  /// The longest wait between two attempts to open a failed storage.
  std::chrono::milliseconds max_backoff{1000};
  /// How the first control store comes up: `restart` when nodes and
  /// drivers of the stored cluster may still run (a head process that
  /// died and started again).
  gcs_start first_start = gcs_start::fresh_cluster;
  /// The keeper of jobs' programs, for every control store it starts.
  caf::actor programs;
  /// The task event store, for every control store it starts.
  caf::actor task_events;
  /// The job runner, for every control store it starts.
  caf::actor jobs;
};

/// Spawns the control store's supervisor (its messages are in
/// protocol/gcs_keeper.hpp), on a thread of its own (opening
/// the storage reads the disk). It starts a control store on `storage` as
/// `gcs_start::fresh_cluster`, and whenever one dies unasked (its storage
/// failed a write, or it crashed) it opens the storage again and starts a
/// new one, retrying with backoff while the storage cannot be opened.
/// Messages wait at the endpoint meanwhile.
caf::actor spawn_gcs_keeper(caf::actor_system& sys, gcs_keeper_config cfg,
                            std::shared_ptr<gcs_storage> storage);

} // namespace prism::actors
