#pragma once

// What a worker process's metrics (`prism/metrics.hpp`) become on its node:
// every interval, the series that changed since the last, sent to the
// node's raylet (`protocol::user_metrics`).

#include <chrono>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include "prism/ids.hpp"

namespace prism::actors {

/// Spawns the shipper of this process's metrics to `raylet`, as worker
/// `worker`. It ends with `raylet` (it monitors it) or with the process.
caf::actor spawn_metrics_shipper(
    caf::actor_system& sys, caf::actor raylet, worker_id worker,
    std::chrono::milliseconds interval = std::chrono::milliseconds{1000});

} // namespace prism::actors
