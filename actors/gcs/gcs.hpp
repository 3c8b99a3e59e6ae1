#pragma once

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include <cstdint>

namespace prism::actors {

struct gcs_config {
  /// The id the first job gets; later jobs count up from it.
  std::uint32_t first_job = 1;
};

/// Spawns the control store: the registry of nodes and jobs. It watches
/// every raylet and marks a node dead when its raylet goes down.
caf::actor spawn_gcs(caf::actor_system& sys, gcs_config cfg = {});

} // namespace prism::actors
