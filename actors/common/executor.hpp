#pragma once

#include "prism/internal/thread_annotations.hpp"
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace prism::actors {

/// Threads for user code of actors. Actors themselves are event-based CAF
/// actors without a thread of their own; their methods run here, off CAF's
/// scheduler, because a method may block (a `get` on a task's result). The
/// pool keeps `min_threads` threads runnable: a thread that blocks in
/// Prism's `get` or `wait` says so (`blocking_scope`), and a new thread starts
/// if work is queued, up to `max_threads`. A watchdog adds a thread when
/// queued work makes no progress for a while (user code blocked elsewhere).
class executor {
public:
  using job = std::function<void()>;

  executor(std::size_t min_threads, std::size_t max_threads);

  /// Finishes the queued jobs and joins every thread.
  ~executor();

  executor(const executor&) = delete;
  executor& operator=(const executor&) = delete;

  /// Runs `j` on one of the threads.
  void submit(job j);

  /// Threads started so far.
  std::size_t num_threads() const;

  /// Idle threads that stopped looking for work and sleep until a job is
  /// submitted.
  std::size_t num_sleeping() const;

  /// How many times an idle thread spun for work before it slept.
  std::uint64_t num_spins() const;

  /// Marks the calling thread, if it belongs to a pool, as blocked for its
  /// lifetime, so that the pool may start another thread meanwhile.
  class blocking_scope {
  public:
    blocking_scope();
    ~blocking_scope();
    blocking_scope(const blocking_scope&) = delete;
    blocking_scope& operator=(const blocking_scope&) = delete;

  private:
    executor* pool_;
  };

private:
  void run();
  void watch();
  void grow_if_starved() EXCLUSIVE_LOCKS_REQUIRED(mu_);
  /// Looks for a queued job without sleeping, for up to `spin_time`.
  /// Returns with mu_ held.
  void spin(std::unique_lock<std::mutex>& guard);

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::condition_variable watch_cv_;
  std::deque<job> jobs_ GUARDED_BY(mu_);
  std::vector<std::thread> threads_ GUARDED_BY(mu_);
  std::size_t idle_ GUARDED_BY(mu_) = 0;
  std::size_t sleepers_ GUARDED_BY(mu_) = 0;
  /// The size of jobs_, read without the lock by spinning threads.
  std::atomic<std::size_t> queued_{0};
  /// Idle threads looking for work awake: a job submitted meanwhile needs
  /// no wake-up.
  std::atomic<std::size_t> spinners_{0};
  std::atomic<std::uint64_t> spins_{0};
  std::size_t blocked_ GUARDED_BY(mu_) = 0;
  std::uint64_t started_jobs_ GUARDED_BY(mu_) = 0;
  bool stopping_ GUARDED_BY(mu_) = false;
  /// The watchdog sleeps until `submit` queues work no idle thread takes.
  bool watchdog_parked_ GUARDED_BY(mu_) = false;
  std::size_t min_threads_;
  std::size_t max_threads_;
  std::thread watchdog_;
};

/// The threads that run actor methods in one process: at least one per
/// core (two at least), growing up to 1024 while methods block.
std::shared_ptr<executor> make_actor_pool();

} // namespace prism::actors
