#pragma once

// Where the control store hosts an actor, apart from any actor: the choice
// among the nodes it knows, from plain data. No CAF.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "prism/ids.hpp"
#include "prism/internal/resource_set.hpp"

namespace prism::internal {

/// One node as actor placement sees it.
struct placement_candidate {
  node_id node;
  /// A dead node hosts nothing.
  bool alive = false;
  /// What actors may still reserve on the node.
  resource_set available;
  /// How many actors the node hosts or is starting now.
  std::size_t num_actors = 0;
};

/// What placement decided for an actor.
enum class placement_verdict : std::uint8_t {
  /// Host it on `placement::node`.
  place,
  /// No live node has the resources it needs: it waits until one can.
  wait,
};

/// Returns a short, stable name, e.g. "wait".
const char* to_string(placement_verdict x) noexcept;

/// The outcome of `place_actor`.
struct placement {
  placement_verdict verdict = placement_verdict::wait;
  /// For `place`: the chosen node; nil for `wait`.
  node_id node;

  friend bool operator==(const placement&, const placement&) = default;
};

/// Chooses the node to host an actor that needs `request`: among the live
/// candidates whose available resources contain it, the one hosting the
/// fewest actors, the first in `candidates` order among equals. Returns
/// `wait` if no candidate fits.
[[nodiscard]] placement
place_actor(const std::vector<placement_candidate>& candidates,
            const resource_set& request);

} // namespace prism::internal
