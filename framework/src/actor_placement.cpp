#include "prism/internal/actor_placement.hpp"

namespace prism::internal {

const char* to_string(placement_verdict x) noexcept {
  switch (x) {
  case placement_verdict::place:
    return "place";
  case placement_verdict::wait:
    return "wait";
  }
  return "unknown";
}

placement place_actor(const std::vector<placement_candidate>& candidates,
                      const resource_set& request) {
  const placement_candidate* best = nullptr;
  for (const auto& n : candidates) {
    if (!n.alive || !n.available.contains(request))
      continue;
    if (best == nullptr || n.num_actors < best->num_actors)
      best = &n;
  }
  if (best == nullptr)
    return placement{placement_verdict::wait, node_id{}};
  return placement{placement_verdict::place, best->node};
}

} // namespace prism::internal
