#pragma once

// The tasks of a simulated cluster, for the autoscaler's tests and
// benchmarks: they wait for resources, run for a while on a node, and run
// again elsewhere if their node goes. What it reports is what the control
// store reports to the autoscaler: nodes with their free resources and
// idleness, and the demand that waits.

#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "prism/config.hpp"
#include "prism/internal/fake_cloud.hpp"
#include "prism/internal/reconciler.hpp"
#include "prism/internal/resource_set.hpp"

namespace prism::internal {

class fake_workload {
public:
  /// A cluster with a head node of `head` resources (none if empty), which
  /// no autoscaler manages.
  explicit fake_workload(resource_map head, autoscaler_time start);

  /// Adds `count` tasks that each need `shape` for `duration`.
  void submit(const resource_map& shape, int count,
              std::chrono::milliseconds duration);

  /// Moves to `now` with `nodes` in the cluster: tasks done end, those of
  /// nodes gone wait again, and waiting ones are placed (first fit).
  void advance(autoscaler_time now, const std::vector<fake_node>& nodes);

  /// Nodes, their free resources and idleness; the demand that waits.
  cluster_view view() const;

  std::size_t waiting() const;
  std::size_t running() const noexcept {
    return running_;
  }
  std::size_t finished() const noexcept {
    return finished_;
  }

private:
  struct task {
    resource_set shape;
    std::chrono::milliseconds duration;
    autoscaler_time ends{};
  };
  struct node {
    resource_set total;
    resource_set free;
    std::vector<task> tasks;
    autoscaler_time idle_since{};
  };

  void place();

  autoscaler_time now_;
  /// By cloud id; the head is "".
  std::map<std::string, node> nodes_;
  /// Waiting tasks by shape.
  std::map<resource_map, std::vector<task>> waiting_;
  std::size_t running_ = 0;
  std::size_t finished_ = 0;
};

} // namespace prism::internal
