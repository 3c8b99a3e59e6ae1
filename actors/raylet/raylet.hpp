#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/atom.hpp>

#include "common/executor.hpp"
#include "owner/owner_directory.hpp"
#include "prism/ids.hpp"
#include "prism/internal/object_arena.hpp"
#include "prism/internal/resource_set.hpp"
#include "raylet/process_launcher.hpp"

namespace prism::actors {

struct raylet_config {
  node_id node;
  internal::resource_set resources;
  caf::actor gcs;
  std::shared_ptr<owner_directory> directory;
  /// Workers started at once, unbound to any job.
  std::uint32_t prestart_workers = 0;
  /// Upper bound on live workers, blocked ones included.
  std::uint32_t max_workers = 256;
  /// Task results and puts larger than this many bytes are kept in the
  /// node's object store.
  std::size_t max_inline_bytes = 100 * 1024;
  /// Threads that run actor methods on this node.
  std::shared_ptr<executor> actor_pool;

  // -- the object store -------------------------------------------------------

  /// Without an arena: the payload bytes the node's store keeps in memory at
  /// most (0: no bound). With one, the arena bounds it.
  std::uint64_t store_capacity = 0;
  /// Where the store spills objects it cannot hold (shared with other nodes;
  /// see raylet/spill_directory.hpp); empty: nothing spills.
  std::string spill_dir;
  /// A result or put that finds the store full, and spilling unable to make
  /// room, waits this long for room before it fails.
  std::chrono::milliseconds store_full_timeout{10000};

  // -- the memory monitor -----------------------------------------------------

  /// The share of the memory where the node runs past which the node kills
  /// one worker process at a time; 0: no monitor.
  double memory_threshold = 0;
  /// How often the monitor samples the memory in use.
  std::chrono::milliseconds memory_interval{250};

  // -- worker processes -------------------------------------------------------

  /// Set: the node's store keeps objects in this shared memory, which the
  /// node's worker processes and drivers map to read them in place.
  std::shared_ptr<internal::object_arena> object_arena;
  /// Set: the node's workers are processes this launcher starts, each bound
  /// to one job from its start; not set: they are threads of this process.
  std::shared_ptr<process_launcher> launcher;
  /// Reads the worker processes' output (the launcher's too); the raylet
  /// sends its lines on to their jobs' drivers.
  std::shared_ptr<worker_output> output;
  /// What worker processes of every job run (the embedded cluster: the
  /// program of this process); empty: each job's own program, which the
  /// control store names and this host must hold (see job_programs.cpp).
  worker_program program;
  /// The actor worker processes register through, and the address it is
  /// published at ("127.0.0.1:PORT").
  caf::actor door;
  std::string door_address;
  /// A worker process that has not registered this long after its start is
  /// killed.
  std::chrono::milliseconds worker_start_timeout{10000};
  /// Idle worker processes above the node's CPUs go after this long.
  std::chrono::milliseconds idle_worker_timeout{1000};
  /// A program's fork server outlives the last job that ran the program by
  /// this long, so that the next job of the program forks its workers.
  std::chrono::milliseconds fork_server_grace{10000};
  /// Worker processes starting at once; 0 is the node's CPUs (at least 1),
  /// and four per CPU while actors wait for processes of their own.
  std::uint32_t max_starting_workers = 0;
  /// An actor of its own process is hosted by a worker process of its job
  /// that hosts others too, its instance in a process forked for it alone
  /// (an instance process: worker/instance_wire.hpp), which costs a fork,
  /// not a worker's start. False: in a worker process of its own.
  bool instance_processes = true;
  /// Where the node keeps the programs it fetched from the control store,
  /// by SHA-256 (see job_programs.cpp); a directory of this user's alone.
  std::string program_cache;
  /// What the node says of itself when it joins (`add_node::labels`).
  std::map<std::string, std::string> labels;
  /// How often the node reports to the control store that it is there and
  /// what it has free (`protocol::node_report`); 0: never.
  std::chrono::milliseconds report_interval{1000};
};

/// Spawns the raylet of one node: it owns the node's resources and worker
/// pool, grants worker leases to owners in the order they ask, lends the CPU
/// of a worker blocked in `get` to other work, tells a lease's owner when its
/// worker dies, and hosts the actors the control store places on the node.
/// Its workers and actors die with it.
caf::actor spawn_raylet(caf::actor_system& sys, raylet_config cfg);

/// Spawns a door for a raylet's worker processes: it passes their hellos
/// and registrations to the raylet named by a `door_target` message, and
/// nothing else, and ends with that raylet.
caf::actor spawn_worker_door(caf::actor_system& sys);

} // namespace prism::actors
