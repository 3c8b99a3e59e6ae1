#pragma once

// What the autoscaler decides, as pure functions of what it sees: which node
// types to launch and how many, which instances to cancel or stop, and which
// demand no node type can serve. The reconciler gathers the view and carries
// the plan out.
//
// The order of constraints: each node type's minimum first, then the maximum
// per type and for all types, then the demand, bin-packed onto the nodes
// there are, the nodes pending, and new nodes of the type it packs best.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "prism/config.hpp"
#include "prism/internal/autoscaler_config.hpp"
#include "prism/internal/instance_state.hpp"
#include "prism/internal/resource_set.hpp"

namespace prism::internal {

/// One node of the cluster or one active instance, as the planner sees it.
struct capacity_node {
  /// The autoscaler's instance id; empty for a node it does not manage (the
  /// head, a node started by hand), which it never stops.
  std::string instance_id;
  std::string node_type;
  /// `running` for a node in the cluster; a pending state otherwise.
  instance_state state = instance_state::running;
  /// What is free on it now; for a pending instance, its type's resources.
  resource_map free;
  /// Whether nothing runs on it, and since when.
  bool idle = false;
  autoscaler_time idle_since{};
  /// When it entered its state: the newest pending ones go first.
  autoscaler_time since{};
};

/// What the planner decides from.
struct scaling_view {
  autoscaler_time now{};
  std::vector<capacity_node> nodes;
  /// Resource requests of tasks and actors waiting for a node.
  std::vector<resource_map> demand;
  /// Node types not to launch now (backing off after failures).
  std::set<std::string> backed_off;
};

/// What to do.
struct scaling_plan {
  /// New instances wanted, by node type.
  std::map<std::string, int> launch;
  /// Instances to cancel (pending) or stop (running), each with why.
  std::vector<std::pair<std::string, std::string>> stop;
  /// Demand no node type can ever serve, by shape: how many requests.
  std::vector<std::pair<resource_map, int>> infeasible;
  /// Demand only node types backed off or at a maximum could serve now.
  std::vector<std::pair<resource_map, int>> waiting;
};

/// Decides launches and stops; see the order above.
scaling_plan plan_scaling(const autoscaler_config& cfg,
                          const scaling_view& view);

/// The node type, among those `can_launch` allows, that one new node of
/// which `shape` packs best: the highest mean share of the type's resources
/// used by as many copies of `shape` as fit (at most `copies`), then the
/// most copies, then the first name. Nothing if no allowed type fits
/// `shape` once.
std::optional<std::string>
pick_node_type(const autoscaler_config& cfg, const resource_map& shape,
               int copies, const std::set<std::string>& can_launch);

/// How many copies of `need` fit into `free` (INT_MAX if `need` is empty).
int copies_that_fit(const resource_set& free, const resource_set& need);

/// Whether some node type of `cfg` fits `shape` at all.
bool fits_some_type(const autoscaler_config& cfg, const resource_map& shape);

} // namespace prism::internal
