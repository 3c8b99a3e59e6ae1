#pragma once

// The parts every way of running Prism starts the same way: the control
// store behind its endpoint, and a node's raylet. The embedded cluster
// starts them in one process; `prism start` starts them in the processes of
// a cluster.

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include "common/executor.hpp"
#include "gcs/gcs.hpp"
#include "join/head_link.hpp"
#include "owner/owner_directory.hpp"
#include "prism/config.hpp"
#include "prism/ids.hpp"
#include "protocol/raylet_gcs.hpp"
#include "raylet/raylet.hpp"

namespace prism::actors {

/// How long a request to another component of this process may take
/// (the control store's keeper, a raylet, an owner).
inline constexpr auto control_timeout = std::chrono::seconds{10};

/// `resources` completed from `cfg`: "CPU" is `cfg.num_cpus` (or the number
/// of hardware threads) unless given. Throws `invalid_argument_error` on a
/// negative or unnamed resource.
resource_map node_resources(const config& cfg, resource_map resources);

/// The control store of a cluster: the endpoint everyone talks to, which
/// stays the same across restarts of the control store, and the keeper
/// that starts and restarts the control store behind it.
struct control_store {
  caf::actor endpoint;
  caf::actor keeper;
  /// The keeper of jobs' programs, if it keeps them.
  caf::actor programs;
  /// The task event store.
  caf::actor task_events;
  std::string storage_path;
  /// Whether `storage_path` is a temporary directory to remove at the end.
  bool temporary_storage = false;
};

/// Opens the storage at `cfg.storage_path` (a new temporary directory if
/// empty) and starts the control store on it, coming up as `first`; with
/// `keep_programs`, it keeps jobs' programs in the storage's `programs`
/// directory (a head of a cluster, whose nodes may not hold a driver's
/// program). The control store hands `prism job`'s messages to `jobs`, if
/// given. Throws a Prism error naming the path if the storage cannot be
/// used.
control_store start_control_store(caf::actor_system& sys, const config& cfg,
                                  gcs_start first = gcs_start::fresh_cluster,
                                  bool keep_programs = false,
                                  caf::actor jobs = {});

/// Stops the control store, closing its storage, and removes a temporary
/// storage. What it stored stays as it is: detached actors come back when a
/// control store starts again on the same storage.
void close_control_store(caf::actor_system& sys, control_store& cs);

/// What a node's workers are.
enum class worker_kind {
  /// Threads of this process (or, with `config::worker_processes`,
  /// processes of this process's program): the embedded cluster.
  as_configured,
  /// Processes of each job's own program, which the control store names:
  /// the nodes of `prism start`, which have none of the jobs' code.
  job_programs,
};

/// Spawns the raylet of a new node with `resources` (completed by
/// `node_resources`) that registers with the control store at `gcs`.
/// Returns its node id and handle. With `worker_kind::job_programs`, the
/// node keeps programs it fetched from the control store in
/// `program_cache` (empty: `default_program_cache()`).
std::pair<node_id, caf::actor>
start_raylet(caf::actor_system& sys, const config& cfg,
             const resource_map& resources, caf::actor gcs,
             std::shared_ptr<owner_directory> directory,
             std::shared_ptr<executor> actor_pool,
             worker_kind workers = worker_kind::as_configured,
             const std::string& program_cache = {},
             std::map<std::string, std::string> labels = {});

/// Where nodes keep the programs they fetched unless told otherwise:
/// `prism-<uid>/programs` in the system's temporary directory.
std::string default_program_cache();

/// Spawns the control store's owner on a node: it adopts durable objects
/// whose owner died (see `owner_directory::adopter`). It stops with the
/// other owners of `directory`.
void start_adopter(caf::actor_system& sys, const node_id& node,
                   caf::actor raylet, caf::actor gcs,
                   const std::shared_ptr<owner_directory>& directory);

/// Asks the keeper `what` (see protocol/gcs_keeper.hpp) and waits for the
/// answer; false if it does not answer.
bool ask_keeper_bool(caf::actor_system& sys, const caf::actor& keeper,
                     caf::atom_value what);

/// Makes the workers of the raylet `rc` configures processes that run
/// `program`, or each job's own program if `program` is empty: a launcher,
/// and a door published on loopback for them to register through. Throws
/// `prism::error` if no port can be opened.
void use_worker_processes(caf::actor_system& sys, const config& cfg,
                          raylet_config& rc, worker_program program);

/// The program of this process as a job's worker processes run it: its
/// path, arguments and SHA-256 (read once, on the first call).
protocol::job_program this_job_program();

/// The scheduler threads of a process: `cfg.scheduler_threads`, or one per
/// hardware thread (at least two).
std::size_t scheduler_threads(const config& cfg);

/// Threads that run actor methods in one process: at least one per core,
/// and more whenever all are busy (methods may block in `get`).

/// This process's endpoint of a head's control store, the link that keeps
/// it connected, and the head's process (to tell its actors from others).
struct head_connection {
  caf::actor endpoint;
  caf::actor link;
  caf::node_id head_process;
};

/// Connects to the head at `where` (see `connect_to_head`), and spawns an
/// endpoint whose requests wait up to `wait` while the head is away, and a
/// head link that gives up (calling `lost`, which may be empty) after
/// `give_up_after` without the head.
head_connection connect_head(caf::actor_system& sys, const host_port& where,
                             const head_entry& entry,
                             std::chrono::milliseconds wait,
                             std::chrono::milliseconds give_up_after,
                             std::function<void(const std::string&)> lost);

/// What a process of Prism runs, to stop at its end (`stop_process`).
struct process_parts {
  /// The owners of its drivers and workers.
  owner_directory* owners = nullptr;
  /// The control store it runs (a head, an embedded cluster); null if none.
  control_store* control = nullptr;
  /// The raylets it runs.
  std::vector<caf::actor> nodes;
  /// Its links to other processes and the control store: a head link, a
  /// door, an endpoint, a program upload, the job runner.
  std::vector<caf::actor> links;
};

/// Stops what a process runs, in the one order every process uses:
/// owners first, whose stores fail pending objects so that a task blocked
/// in `get` returns; then the control store, closed while its nodes still
/// run, so what it stored stays as it was (detached actors come back when
/// a control store starts again on the storage) instead of recording their
/// nodes' deaths; then the nodes, with their workers and actors; then the
/// links; then the connections to peers. Returns once no actor runs.
void stop_process(caf::actor_system& sys, process_parts parts);

} // namespace prism::actors
