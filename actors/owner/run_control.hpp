#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>

#include "prism/ids.hpp"
#include "prism/internal/pipelining.hpp"
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
    ++begins_;
    if (!early_.empty()) {
      // A cancellation that came after its run ended: its task would have
      // begun by now (see `early_`).
      while (!early_.empty() &&
             begins_ - early_.front().begins > internal::max_pipeline_depth)
        early_.pop_front();
      if (auto i = std::find_if(early_.begin(), early_.end(),
                                [&](const auto& e) { return e.task == task; });
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
    // Asked again (a forced cancellation after a plain one): once is enough.
    if (std::none_of(early_.begin(), early_.end(),
                     [&](const auto& e) { return e.task == task; }))
      early_.push_back({task, begins_});
    return false;
  }

  /// The flag of the run in progress.
  const std::atomic<bool>* flag() const noexcept {
    return &cancelled_;
  }

private:
  /// A task cancelled before it began, and how many runs had begun here
  /// when the cancellation came.
  struct early_cancel {
    task_id task;
    std::uint64_t begins = 0;
  };

  std::mutex mu_;
  task_id running_ GUARDED_BY(mu_);
  std::atomic<bool> cancelled_{false};
  /// Runs begun here, skipped ones too.
  std::uint64_t begins_ GUARDED_BY(mu_) = 0;
  /// Tasks cancelled while they had not begun here, oldest first. Each was
  /// pushed to this worker before its cancellation was sent, and a worker
  /// has one lease at a time, with at most `max_pipeline_depth` of its
  /// tasks pushed and not ended: so a task cancelled before it began does
  /// so within that many runs. One not begun by then had ended before its
  /// cancellation came (its owner had not yet heard), and goes.
  std::deque<early_cancel> early_ GUARDED_BY(mu_);
};

} // namespace prism::actors
