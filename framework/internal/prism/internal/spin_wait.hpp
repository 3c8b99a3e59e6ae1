#pragma once

// Waiting awake, shared by Prism's thread pools (CAF's scheduler threads in
// actors/common/shared_queue_policy.hpp, the threads that run actors' code
// in actors/common/executor.hpp) and by threads that wait for an object
// (memory_store): an idle or waiting thread looks for what it waits for a
// short while before it sleeps, because waking a sleeping thread costs the
// one handing over the work a futex call and an interrupt of another core.
// A pool's thread does so only while it pays (`idle_gauge`).

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

/// Whether an idle thread of a pool spins before it sleeps: only while
/// spinning has been paying, that is while about one in eight or more of
/// its recent waits for work ended within the spin. A thread whose work
/// comes seldom (most threads of a process that hosts one actor, which
/// idles between calls) then sleeps at once, rather than spinning for
/// nothing after every job; one in a busy exchange of requests and
/// responses keeps spinning, and so does one whose short waits come mixed
/// with long ones.
class idle_gauge {
public:
  using clock = std::chrono::steady_clock;

  explicit idle_gauge(std::chrono::microseconds spin_time)
      : spin_time_(spin_time) {
    // nop
  }

  /// Whether the thread, out of work, should spin first.
  bool spins() const noexcept {
    return hits_ >= scale / 8;
  }

  /// The thread found work `waited` after it ran out: a wait within the
  /// spin is a hit. Each wait moves the share of hits an eighth of the way
  /// towards itself.
  void found_work_after(clock::duration waited) noexcept {
    if (waited < spin_time_)
      hits_ += (scale - hits_) / 8;
    else
      hits_ -= hits_ / 8;
  }

private:
  /// The share of hits that stands for all of them.
  static constexpr unsigned scale = 1024;

  clock::duration spin_time_;
  /// The recent share of hits, out of `scale`: none at first.
  unsigned hits_ = 0;
};

} // namespace prism::internal
