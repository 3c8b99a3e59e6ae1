#pragma once

// Waiting awake for work, shared by Prism's two thread pools: CAF's
// scheduler threads (common/shared_queue_policy.hpp) and the threads that
// run actors' code (common/executor.hpp). An idle thread of either looks
// for work for a short while before it sleeps, because waking a sleeping
// thread costs the one handing over the work a futex call and an interrupt
// of another core.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <thread>

namespace prism::actors {

/// Returns true as soon as `queued` is above zero, or false once `deadline`
/// has passed. Reads `queued` without a lock, and yields now and then: other
/// threads (user code, storage) may need this core meanwhile.
inline bool spin_until_queued(const std::atomic<std::size_t>& queued,
                              std::chrono::steady_clock::time_point deadline) {
  for (std::size_t n = 1;; ++n) {
    if (queued.load(std::memory_order_relaxed) > 0)
      return true;
    if (n % 64 == 0) {
      if (std::chrono::steady_clock::now() > deadline)
        return false;
      std::this_thread::yield();
    }
  }
}

} // namespace prism::actors
