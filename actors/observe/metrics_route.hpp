#pragma once

// The `/metrics` route of a process's HTTP port: asks the process's node,
// control store and task event store for their figures, each within a
// timeout, and answers them as Prometheus text (`metrics_page`).

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <caf/actor.hpp>

#include "http/http_server.hpp"

namespace caf {
class actor_system;
} // namespace caf

namespace prism::actors {

struct metrics_sources {
  caf::actor_system* sys = nullptr;
  /// This process's node (its raylet, or whoever hands the question on to
  /// it); invalid: none.
  caf::actor node;
  /// Head: the control store; invalid on a node.
  caf::actor gcs;
  /// Head: the autoscaler's instances by state; empty: no autoscaler.
  std::function<std::vector<std::pair<std::string, std::uint64_t>>()>
      autoscaler;
  /// How long each source may take to answer.
  std::chrono::milliseconds timeout{2000};
};

/// The route. Each scrape asks every source; one that does not answer in
/// time is left out, and `prism_metrics_source_up` says which.
http_route metrics_route(metrics_sources sources);

} // namespace prism::actors
