#pragma once

// The scheduling policy of Prism's CAF scheduler: one queue that every
// scheduler thread takes from, and idle threads that spin briefly on it
// before they sleep, while work has been coming to them quickly.
//
// CAF's work-stealing policy steals from the tail of another thread's queue,
// and in CAF 0.17 that walks the whole queue under both of its locks. When
// thousands of actors are ready at once (a burst of actor creations, each
// new host scheduled as it starts) every steal walks thousands of entries and
// blocks the owner of the queue meanwhile: on 2 cores that pipeline ran at
// about a tenth of the speed it does with one shared queue. CAF's own sharing
// policy has no such walk, but its idle threads sleep at once, so every
// request/response hop pays a futex wake-up. This policy keeps the shared
// queue and adds the short spin.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>

#include <caf/actor_system_config.hpp>
#include <caf/policy/unprofiled.hpp>
#include <caf/resumable.hpp>
#include <caf/scheduler/coordinator.hpp>

#include "prism/internal/spin_wait.hpp"
#include "prism/internal/thread_annotations.hpp"

namespace prism::actors {

class shared_queue_policy : public caf::policy::unprofiled {
public:
  /// How long an idle scheduler thread looks for work before it sleeps. Long
  /// enough that the next hop of a request/response chain finds it awake,
  /// short enough that an idle cluster sleeps.
  static constexpr std::chrono::microseconds spin_time{200};

  struct coordinator_data {
    explicit coordinator_data(caf::scheduler::abstract_coordinator*) {
      // nop
    }

    std::mutex mu;
    std::condition_variable cv;
    std::deque<caf::resumable*> queue GUARDED_BY(mu);
    std::size_t sleepers GUARDED_BY(mu) = 0;
    /// The size of `queue`, read without the lock by spinning threads.
    std::atomic<std::size_t> size{0};
    /// Threads looking for work without sleeping: a job enqueued meanwhile
    /// needs no wake-up.
    std::atomic<std::size_t> spinners{0};
  };

  struct worker_data {
    explicit worker_data(caf::scheduler::abstract_coordinator*) {
      // nop
    }

    /// Whether this thread spins when it runs out of work.
    internal::idle_gauge gauge{spin_time};
  };

  // -- enqueueing -------------------------------------------------------------

  template <class Coordinator>
  void central_enqueue(Coordinator* self, caf::resumable* job) {
    push(d(self), job);
  }

  template <class Worker>
  void external_enqueue(Worker* self, caf::resumable* job) {
    push(d(self->parent()), job);
  }

  template <class Worker>
  void internal_enqueue(Worker* self, caf::resumable* job) {
    push(d(self->parent()), job);
  }

  template <class Worker>
  void resume_job_later(Worker* self, caf::resumable* job) {
    push(d(self->parent()), job);
  }

  // -- dequeueing -------------------------------------------------------------

  template <class Worker>
  caf::resumable* dequeue(Worker* self) {
    auto& q = d(self->parent());
    auto& gauge = d(self).gauge;
    if (q.size.load(std::memory_order_relaxed) > 0) {
      std::lock_guard<std::mutex> guard{q.mu};
      if (!q.queue.empty()) {
        gauge.found_work_after({});
        return take(q);
      }
    }
    auto idle_since = std::chrono::steady_clock::now();
    caf::resumable* job = gauge.spins() ? spin(q) : nullptr;
    if (job == nullptr) {
      std::unique_lock<std::mutex> guard{q.mu};
      ++q.sleepers;
      q.cv.wait(guard, [&] { return !q.queue.empty(); });
      --q.sleepers;
      job = take(q);
    }
    gauge.found_work_after(std::chrono::steady_clock::now() - idle_since);
    return job;
  }

  template <class Worker, class F>
  void foreach_resumable(Worker*, F) {
    // nop: workers keep no queue of their own
  }

  template <class Coordinator, class F>
  void foreach_central_resumable(Coordinator* self, F f) {
    auto& q = d(self);
    std::unique_lock<std::mutex> guard{q.mu};
    while (!q.queue.empty())
      f(pop(q));
  }

private:
  static void push(coordinator_data& q, caf::resumable* job) {
    std::lock_guard<std::mutex> guard{q.mu};
    q.queue.push_back(job);
    q.size.fetch_add(1);
    if (q.sleepers > 0 && q.spinners.load() == 0)
      q.cv.notify_one();
  }

  // REQUIRES: q.mu held, q.queue not empty.
  static caf::resumable* pop(coordinator_data& q) {
    auto* job = q.queue.front();
    q.queue.pop_front();
    q.size.fetch_sub(1);
    return job;
  }

  /// Pops a job for this thread, and wakes a sleeping thread if more work
  /// is queued: a job pushed while this thread was spinning woke no one.
  // REQUIRES: q.mu held, q.queue not empty.
  static caf::resumable* take(coordinator_data& q) {
    auto* job = pop(q);
    if (!q.queue.empty() && q.sleepers > 0)
      q.cv.notify_one();
    return job;
  }

  /// Looks for work for up to `spin_time`; nullptr if there was none. A
  /// thread leaves the spinners before it takes the lock to sleep, so a job
  /// pushed after that wakes it, and one pushed before is seen under the lock.
  static caf::resumable* spin(coordinator_data& q) {
    q.spinners.fetch_add(1);
    auto deadline = std::chrono::steady_clock::now() + spin_time;
    while (internal::spin_until_queued(q.size, deadline)) {
      std::lock_guard<std::mutex> guard{q.mu};
      if (!q.queue.empty()) {
        q.spinners.fetch_sub(1);
        return take(q);
      }
    }
    q.spinners.fetch_sub(1);
    return nullptr;
  }
};

/// Makes `cfg`'s actor system schedule its actors with the policy above.
inline void use_shared_queue_scheduler(caf::actor_system_config& cfg) {
  cfg.module_factories.push_back(
      [](caf::actor_system& sys) -> caf::actor_system::module* {
        return new caf::scheduler::coordinator<shared_queue_policy>(sys);
      });
}

} // namespace prism::actors
