#pragma once

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

namespace prism::actors {

/// Spawns the control store: the registry of nodes and jobs. It watches
/// every raylet and marks a node dead when its raylet goes down.
caf::actor spawn_gcs(caf::actor_system& sys);

} // namespace prism::actors
