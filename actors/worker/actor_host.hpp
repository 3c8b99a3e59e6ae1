#pragma once

#include <memory>

#include <caf/actor.hpp>
#include <caf/actor_addr.hpp>
#include <caf/actor_system.hpp>

#include "common/executor.hpp"
#include "owner/owner_directory.hpp"
#include "prism/internal/actor_spec.hpp"

namespace prism::actors {

struct actor_host_config {
  internal::actor_spec spec;
  std::int32_t incarnation = 0;
  node_id node;
  caf::actor raylet;
  caf::actor gcs;
  std::shared_ptr<owner_directory> directory;
  std::shared_ptr<executor> pool;
  /// `put` values larger than this go to the node's object store.
  std::size_t max_inline_bytes = 100 * 1024;
  /// The actor of the host's process that reports its start to the control
  /// store together with others; none (or gone): the host reports itself.
  caf::actor_addr reporter;
};

/// Spawns the host of one actor instance: an event-based CAF actor (no
/// thread of its own) that constructs the instance with the actor's factory
/// and runs its methods on the executor's threads, in arrival order and at
/// most `max_concurrency` at once. It reports to the control store when the
/// instance is up and when it ends for good (its factory threw, or a method
/// called `exit_actor`). Tasks and objects the actor makes are owned by an
/// owner of its own, started on first use.
caf::actor spawn_actor_host(caf::actor_system& sys, actor_host_config cfg);

} // namespace prism::actors
