#pragma once

#include <map>
#include <memory>
#include <string>

#include <caf/actor.hpp>
#include <caf/actor_addr.hpp>
#include <caf/actor_system.hpp>

#include "common/executor.hpp"
#include "owner/owner_client.hpp"
#include "prism/internal/actor_spec.hpp"

namespace prism::actors {

/// The owner-client settings of the actors that one process hosts for its
/// node: its node, raylet, control store, owner directory and inline limit,
/// and an actor's namespace. Made once for each namespace and shared by the
/// actors in it, so that an idle actor keeps a pointer to them, not a copy
/// (some 170 bytes and its namespace's text); each actor's client adds its
/// own id and job when it is made. Used by one actor (the raylet or the
/// worker that starts hosts), so not locked.
class actor_client_settings {
public:
  /// The settings of the actors that `raylet` places on `node`, whose
  /// control store is `gcs`.
  actor_client_settings(const node_id& node, caf::actor raylet, caf::actor gcs,
                        std::shared_ptr<owner_directory> directory,
                        std::size_t max_inline_bytes);

  /// The settings of an actor in namespace `ns`.
  std::shared_ptr<const owner_client::config> of(const std::string& ns);

private:
  owner_client::config common_;
  /// Gone once the last actor of a namespace is: a namespace per job comes
  /// and goes with its jobs.
  std::map<std::string, std::weak_ptr<const owner_client::config>> by_ns_;
};

struct actor_host_config {
  internal::actor_spec spec;
  std::int32_t incarnation = 0;
  /// The settings of the actor's owner client (`actor_client_settings`),
  /// which name its node, raylet and control store too.
  std::shared_ptr<const owner_client::config> client;
  std::shared_ptr<executor> pool;
  /// The actor of the host's process that reports its start to the control
  /// store together with others; none (or gone): the host reports itself.
  caf::actor_addr reporter;
  /// The instance runs in a process of its own, which the host has its
  /// node start (worker/instance_process.hpp), not in the host's process.
  bool instance_process = false;
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
