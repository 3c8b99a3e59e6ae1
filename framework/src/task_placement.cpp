#include "prism/internal/task_placement.hpp"

#include <algorithm>

namespace prism::internal {

namespace {

std::string never_fits(const node_id& node, const resource_set& request,
                       const resource_set& has) {
  return "node " + node.hex() + " can never fit {" + request.to_string() +
         "}; it has {" + has.to_string() + "}";
}

// A pin that cannot be honoured: a soft one is dropped, a hard one refused.
affinity_verdict drop_pin(const placement_request& request, std::string why) {
  if (request.affinity_soft)
    return {affinity_action::unpin, 0, {}};
  return {affinity_action::refuse, 0, std::move(why)};
}

} // namespace

std::optional<std::size_t> spill_target(const std::vector<cluster_node>& nodes,
                                        const node_id& here,
                                        const resource_set& request,
                                        std::size_t turn) {
  std::vector<std::size_t> candidates;
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].alive && nodes[i].id != here &&
        nodes[i].total.contains(request))
      candidates.push_back(i);
  if (candidates.empty())
    return std::nullopt;
  return candidates[turn % candidates.size()];
}

affinity_verdict apply_affinity(const placement_request& request,
                                const cluster_node& here,
                                const std::vector<cluster_node>& nodes) {
  if (request.affinity.nil())
    return {affinity_action::here, 0, {}};
  if (request.affinity == here.id) {
    if (!here.total.contains(request.resources))
      return drop_pin(
          request, never_fits(request.affinity, request.resources, here.total));
    return {affinity_action::here, 0, {}};
  }
  auto n = std::find_if(nodes.begin(), nodes.end(), [&](const auto& n) {
    return n.id == request.affinity;
  });
  if (n == nodes.end()) {
    // An unknown node is no better than a dead one for a soft pin.
    if (request.affinity_soft)
      return {affinity_action::unpin, 0, {}};
    return {affinity_action::wait, 0, {}};
  }
  if (!n->alive)
    return drop_pin(request, "node " + request.affinity.hex() +
                                 ", which the task must run on, is dead");
  if (!n->total.contains(request.resources))
    return drop_pin(request,
                    never_fits(request.affinity, request.resources, n->total));
  auto at = static_cast<std::size_t>(n - nodes.begin());
  return {affinity_action::send, at, {}};
}

lease_verdict schedule(const placement_request& request,
                       const cluster_node& here, const resource_set& available,
                       const std::vector<cluster_node>& nodes,
                       std::size_t turn) {
  if (!request.affinity.nil()) {
    // Pinned here: it waits for room on this node.
  } else if (!here.total.contains(request.resources)) {
    // This node can never run it: send it to one that can, if any.
    if (auto other = spill_target(nodes, here.id, request.resources, turn))
      return {lease_action::spill, *other};
    return {lease_action::infeasible, 0};
  }
  if (!available.contains(request.resources))
    return {lease_action::no_room, 0};
  return {lease_action::grant, 0};
}

} // namespace prism::internal
