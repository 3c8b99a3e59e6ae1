#pragma once

// What the metrics (`prism/metrics.hpp`) of a worker process, or of a
// driver attached to a cluster, become on its node: every interval, the
// series that changed since the last, sent to the node's raylet
// (`protocol::user_metrics`).

#include <chrono>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include "prism/ids.hpp"

namespace prism::actors {

/// Spawns the shipper of this process's metrics to `raylet`, as worker (or
/// driver) `worker`. It ends with `raylet` (it monitors it) or with the
/// process.
caf::actor spawn_metrics_shipper(
    caf::actor_system& sys, caf::actor raylet, worker_id worker,
    std::chrono::milliseconds interval = std::chrono::milliseconds{1000});

/// Ships what changed now, and returns once the raylet has it (true), or
/// false past `timeout`: a driver's last updates before it ends.
bool ship_metrics_now(caf::actor_system& sys, const caf::actor& shipper,
                      std::chrono::milliseconds timeout);

} // namespace prism::actors
