#pragma once

// Where a lease request runs: the decisions a raylet takes for the requests
// queued at its node, as pure functions of what it knows (its own resources
// and the cluster's nodes as the control store last reported them). No actors
// and no messages: the raylet gathers the inputs, calls these and carries the
// verdict out (grants a lease, sends the request on, refuses it, or keeps it
// queued).

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "prism/ids.hpp"
#include "prism/internal/resource_set.hpp"

namespace prism::internal {

/// A node of the cluster as placement sees it.
struct cluster_node {
  node_id id;
  /// Everything the node has, taken or not.
  resource_set total;
  bool alive = true;
};

/// What a lease request asks of placement.
struct placement_request {
  resource_set resources;
  /// The node the work must (or, if `affinity_soft`, should) run on; nil
  /// for any.
  node_id affinity;
  bool affinity_soft = false;
};

// -- spillback ----------------------------------------------------------------

/// Returns the position in `nodes` of a live node other than `here` whose
/// resources could ever fit `request`, picked round robin among the
/// candidates: the one at `turn` modulo their number, in the order of
/// `nodes`. Nothing if no other node fits. The caller advances `turn` each
/// time it gets a node.
std::optional<std::size_t> spill_target(const std::vector<cluster_node>& nodes,
                                        const node_id& here,
                                        const resource_set& request,
                                        std::size_t turn);

// -- node affinity ------------------------------------------------------------

/// What a request's node affinity asks of the raylet of one node.
enum class affinity_action {
  /// No pin, or a pin to this node, which can fit it: place it here (a
  /// request without a pin may still be sent to a node that fits).
  here,
  /// A soft pin that cannot be honoured (its node is dead, unknown or can
  /// never fit it): drop the pin and place the request as one without.
  unpin,
  /// Pinned to another live node that can fit it: send it there.
  send,
  /// A hard pin that can never be honoured: refuse the request as
  /// unschedulable.
  refuse,
  /// Pinned (hard) to a node nobody knows yet: keep it queued.
  wait,
};

/// An `affinity_action` and what carrying it out needs.
struct affinity_verdict {
  affinity_action action = affinity_action::here;
  /// The position in the nodes of the node to send the request to (`send`).
  std::size_t node = 0;
  /// Why the request can never run (`refuse`), for its owner.
  std::string why;
};

/// Decides what the raylet of `here` does with `request`'s node affinity:
/// a request pinned to another node goes there; one pinned to a dead node,
/// or to a node that can never fit it, is refused (hard) or loses its pin
/// (soft); one pinned to an unknown node waits (hard) or loses its pin
/// (soft).
affinity_verdict apply_affinity(const placement_request& request,
                                const cluster_node& here,
                                const std::vector<cluster_node>& nodes);

// -- scheduling ---------------------------------------------------------------

/// What the raylet of a node does now with a queued request whose affinity
/// was applied.
enum class lease_action {
  /// There is room here now: lease it a worker (if one can be had).
  grant,
  /// It can run here, but not now: keep it queued until resources free up.
  no_room,
  /// This node can never run it: send it to another node that can.
  spill,
  /// No known node can ever run it: keep it queued until one that fits
  /// joins.
  infeasible,
};

/// A `lease_action` and the position in the nodes of the node to send the
/// request to (`spill`).
struct lease_verdict {
  lease_action action = lease_action::no_room;
  std::size_t node = 0;
};

/// Decides whether `request` can be granted at `here` now, given what is
/// `available` there, or else where it goes. A request pinned to `here` waits
/// for room at `here`; one without a pin that `here` can never fit goes to
/// `spill_target(nodes, here.id, request.resources, turn)`.
/// REQUIRES: `apply_affinity` said `here` (or `unpin`, and the pin is gone).
lease_verdict schedule(const placement_request& request,
                       const cluster_node& here, const resource_set& available,
                       const std::vector<cluster_node>& nodes,
                       std::size_t turn);

} // namespace prism::internal
