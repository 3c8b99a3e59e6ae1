#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "control_store.hpp"
#include "prism/internal/histogram.hpp"
#include "prism/internal/thread_annotations.hpp"

namespace prism::actors {

/// The control store's tables on disk, written by a thread of its own so
/// that an fsync never blocks a scheduler thread. Changes queue up and
/// commit in groups: every change queued while one commit runs goes into the
/// next, so a slow disk costs latency, not throughput. Each commit is
/// reported to the listener, which acknowledges the requests it covers.
///
/// A change that finds the writer idle commits at once. Changes that queued
/// while a commit ran show a burst: the writer gathers for up to
/// `gather_window` more (or until `gather_limit` changes wait) before it
/// commits them, so that a burst commits in a few large groups, each
/// reported once, rather than in many small ones.
class gcs_storage {
public:
  /// How long a burst's next commit waits for more changes.
  static constexpr std::chrono::microseconds gather_window{500};
  /// How many waiting changes end that wait early.
  static constexpr std::size_t gather_limit = 4096;

  /// Called on the writer thread after each commit: every change numbered
  /// `up_to` or lower is durable, or, if `failure` is not empty, the changes
  /// since the last report failed.
  using listener =
      std::function<void(std::uint64_t up_to, std::string failure)>;

  /// Opens the store at `path` (creating it if missing) and reads its
  /// tables. Throws `persistence::store_error` if the store is corrupt, of
  /// another schema version, or unreadable.
  static std::shared_ptr<gcs_storage> open(const std::string& path, bool sync);

  /// As above, with every store option (e.g. a file system of its own).
  static std::shared_ptr<gcs_storage>
  open(const persistence::store_options& opts);

  ~gcs_storage();

  gcs_storage(const gcs_storage&) = delete;
  gcs_storage& operator=(const gcs_storage&) = delete;

  /// The tables as recovered by `open`, and what recovery repaired; moved
  /// out by the first call.
  persistence::recovery take_recovered();

  /// Sets who hears of commits. Thread-safe.
  void set_listener(listener l);

  /// Queues `b` and returns its number; numbers count up from 1. Changes
  /// commit in the order they were queued. Thread-safe.
  std::uint64_t submit(persistence::write_batch b);

  /// The number of the last change queued.
  std::uint64_t last_submitted() const;

  /// Seconds each write to the store took so far, and the writes that
  /// failed.
  std::pair<internal::histogram, std::uint64_t> write_figures() const;

  /// Commits what is queued and closes the store. Idempotent.
  void close();

  /// Closes the store as a crash of the control store would: what is queued
  /// and not yet committed is dropped (none of it was acknowledged).
  void crash();

  const std::string& path() const noexcept {
    return path_;
  }

private:
  gcs_storage(persistence::control_store store, std::string path);

  void run();
  void stop(bool drain);

  std::string path_;
  persistence::control_store store_;
  persistence::recovery recovered_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<persistence::write_batch> queue_ GUARDED_BY(mu_);
  std::uint64_t submitted_ GUARDED_BY(mu_) = 0;
  internal::histogram
      write_latency_ GUARDED_BY(mu_) = internal::histogram::of_latency();
  std::uint64_t writes_failed_ GUARDED_BY(mu_) = 0;
  listener listener_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  bool drain_ GUARDED_BY(mu_) = true;
  /// The writer is gathering a burst: a change wakes it only at the limit.
  bool gathering_ GUARDED_BY(mu_) = false;
  /// The first write failure; set and read by the writer thread only.
  std::string failed_;
  std::thread writer_;
};

} // namespace prism::actors
