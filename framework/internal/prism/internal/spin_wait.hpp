#pragma once

// Waiting awake, shared by Prism's thread pools (CAF's scheduler threads in
// actors/common/shared_queue_policy.hpp, the threads that run actors' code
// in actors/common/executor.hpp) and by threads that wait for an object
// (memory_store): an idle or waiting thread looks for what it waits for a
// short while before it sleeps, because waking a sleeping thread costs the
// one handing over the work a futex call and an interrupt of another core.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <thread>

namespace prism::internal {

/// Returns true as soon as `done()` does, or false once `deadline` has
/// passed. `done` is read without a lock; the thread yields now and then:
/// other threads (user code, storage) may need this core meanwhile.
template <class Done>
bool spin_until(Done done, std::chrono::steady_clock::time_point deadline) {
  for (std::size_t n = 1;; ++n) {
    if (done())
      return true;
    if (n % 64 == 0) {
      if (std::chrono::steady_clock::now() > deadline)
        return false;
      std::this_thread::yield();
    }
  }
}

/// Returns true as soon as `queued` is above zero, or false once `deadline`
/// has passed.
inline bool spin_until_queued(const std::atomic<std::size_t>& queued,
                              std::chrono::steady_clock::time_point deadline) {
  return spin_until([&] { return queued.load(std::memory_order_relaxed) > 0; },
                    deadline);
}

} // namespace prism::internal
