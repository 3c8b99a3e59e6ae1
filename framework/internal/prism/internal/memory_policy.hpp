#pragma once

// What a node's memory monitor decides: whether the memory in use passed
// its threshold, and which worker to kill to bring it back, before the
// kernel kills the node. Plain values in, a choice out; the raylet samples
// the memory and carries the kill out.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace prism::internal {

/// A worker the memory monitor may kill.
struct oom_candidate {
  /// Whom its work is for (its lease's owner); workers of one owner form
  /// a group.
  std::uint64_t owner = 0;
  /// Whether its work runs again if it is killed (a task with retries
  /// left).
  bool retriable = true;
  /// When its work started, in any increasing order: larger is newer.
  std::uint64_t started = 0;
};

/// Whether `used` bytes of `limit` pass `threshold` (a share, 0 to 1);
/// never for a `threshold` of 0 or less, or an unknown `limit` (0).
bool memory_over(std::uint64_t used, std::uint64_t limit, double threshold);

/// Which of `candidates` to kill, as an index; nothing if there are none.
/// As Ray's policy by owner:
/// - retriable work goes before work that would fail for good;
/// - of those, work of the owner running the most, so that each owner
///   keeps at least one running while another runs two or more (with every
///   owner down to one, the newest of all goes);
/// - of that owner's, the newest.
std::optional<std::size_t>
choose_oom_victim(const std::vector<oom_candidate>& candidates);

} // namespace prism::internal
