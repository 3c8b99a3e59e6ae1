#include "prism/internal/memory_policy.hpp"

#include <unordered_map>

namespace prism::internal {

bool memory_over(std::uint64_t used, std::uint64_t limit, double threshold) {
  if (threshold <= 0 || limit == 0)
    return false;
  return static_cast<double>(used) >= threshold * static_cast<double>(limit);
}

std::optional<std::size_t>
choose_oom_victim(const std::vector<oom_candidate>& candidates) {
  bool any_retriable = false;
  for (const auto& c : candidates)
    any_retriable = any_retriable || c.retriable;
  auto eligible = [&](const oom_candidate& c) {
    return c.retriable == any_retriable;
  };
  std::unordered_map<std::uint64_t, std::size_t> running;
  for (const auto& c : candidates)
    if (eligible(c))
      ++running[c.owner];
  // The owner running the most; of equals, the one whose newest is newest
  // (the newest of all, once every owner is down to one).
  std::optional<std::size_t> victim;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const auto& c = candidates[i];
    if (!eligible(c))
      continue;
    if (!victim) {
      victim = i;
      continue;
    }
    const auto& v = candidates[*victim];
    auto mine = running[c.owner];
    auto theirs = running[v.owner];
    if (mine > theirs || (mine == theirs && c.started > v.started))
      victim = i;
  }
  return victim;
}

} // namespace prism::internal
