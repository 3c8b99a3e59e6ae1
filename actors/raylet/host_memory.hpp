#pragma once

// The memory in use where a node runs: the host's, or its container's
// (the cgroup's limit), whichever is fuller. No CAF here.

#include <cstdint>
#include <string>

namespace prism::actors {

/// Memory in use and the most there is, in bytes.
struct memory_use {
  std::uint64_t used = 0;
  /// 0 if unknown.
  std::uint64_t limit = 0;
  /// "host", or "cgroup" when a container's limit is the tighter one.
  std::string scope;

  double share() const noexcept {
    return limit == 0 ? 0.0
                      : static_cast<double>(used) / static_cast<double>(limit);
  }
};

/// Samples the memory in use now: the host's (`MemTotal` less
/// `MemAvailable`), and, under a cgroup memory limit (v2 `memory.max`, v1
/// `memory.limit_in_bytes`), the cgroup's use less its inactive file
/// cache, as the kernel would reclaim that first. Returns the fuller of
/// the two.
memory_use sample_memory_use();

/// The memory this process may use: the host's, or its cgroup's limit if
/// that is lower; 0 if unknown.
std::uint64_t memory_limit_here();

} // namespace prism::actors
