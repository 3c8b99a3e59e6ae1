#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <deque>
#include <mutex>

#include "prism/ids.hpp"
#include "prism/internal/thread_annotations.hpp"

namespace prism::actors {

/// The cancellation of the tasks one worker runs, one at a time: its owner
/// actor marks a task cancelled (`cancel`), from the thread of a message,
/// while the worker's thread runs it or has it waiting in its mailbox.
/// The running task sees its flag (`prism::is_cancelled`, and the waits of
/// `get`); one that has not started is skipped.
class run_control {
public:
  /// The worker starts `task`. Returns false if it was cancelled before it
  /// started: it must not run.
  bool begin(const task_id& task) {
    std::lock_guard<std::mutex> guard{mu_};
    if (!early_.empty()) {
      if (auto i = std::find(early_.begin(), early_.end(), task);
          i != early_.end()) {
        early_.erase(i);
        return false;
      }
    }
    running_ = task;
    cancelled_.store(false, std::memory_order_release);
    return true;
  }

  /// The run that `begin` started ended.
  void end() {
    std::lock_guard<std::mutex> guard{mu_};
    running_ = task_id{};
    cancelled_.store(false, std::memory_order_release);
  }

  /// Asks the run of `task` to stop, or, if it has not started, never to
  /// start. Returns whether it runs now (its waits need waking).
  bool cancel(const task_id& task) {
    std::lock_guard<std::mutex> guard{mu_};
    if (running_ == task) {
      cancelled_.store(true, std::memory_order_release);
      return true;
    }
    // A task that ended already is never begun: the oldest of these go
    // once there are many.
    if (early_.size() == max_early)
      early_.pop_front();
    early_.push_back(task);
    return false;
  }

  /// The flag of the run in progress.
  const std::atomic<bool>* flag() const noexcept {
    return &cancelled_;
  }

private:
  static constexpr std::size_t max_early = 1024;

  std::mutex mu_;
  task_id running_ GUARDED_BY(mu_);
  std::atomic<bool> cancelled_{false};
  /// Tasks cancelled before they began.
  std::deque<task_id> early_ GUARDED_BY(mu_);
};

} // namespace prism::actors
