#pragma once

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include "prism/internal/actor_spec.hpp"

namespace prism::actors {

/// Spawns the stand-in a supervisor watches for one Prism actor: it creates
/// the actor from `spec` (named, owned by the stand-in, no restarts of its
/// own), lives while the actor lives, and exits when it dies: normally if the
/// actor called `exit_actor` (the control store's death kind `exited`),
/// abnormally otherwise. It answers `protocol::await_started` once the actor
/// is alive (its constructor ran), or with `start_failed` if it dies first.
/// Asked to exit, it kills the actor first; killed outright, the control
/// store kills the actor with it, since the actor shares fate with its owner.
caf::actor spawn_actor_child(caf::actor_system& sys, internal::actor_spec spec,
                             caf::actor gcs);

} // namespace prism::actors
