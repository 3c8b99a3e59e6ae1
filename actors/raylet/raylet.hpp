#pragma once

#include <cstdint>
#include <memory>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/atom.hpp>

#include "owner/owner_directory.hpp"
#include "prism/ids.hpp"
#include "prism/internal/resource_set.hpp"
#include "worker/executor.hpp"

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
};

/// Spawns the raylet of one node: it owns the node's resources and worker
/// pool, grants worker leases to owners in the order they ask, lends the CPU
/// of a worker blocked in `get` to other work, tells a lease's owner when its
/// worker dies, and hosts the actors the control store places on the node.
/// Its workers and actors die with it.
caf::actor spawn_raylet(caf::actor_system& sys, raylet_config cfg);

} // namespace prism::actors
