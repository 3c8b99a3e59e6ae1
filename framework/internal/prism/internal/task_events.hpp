#pragma once

// Task events, without an actor: what an owner records when one of its
// tasks changes state, the bounded buffer it records them into (a full
// buffer counts what it drops), and the table the control store's side
// keeps of them: one record per task with its attempts, bounded too, the
// tasks recorded first forgotten first and counted.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "prism/ids.hpp"
#include "prism/internal/histogram.hpp"
#include "prism/internal/task_state.hpp"

namespace prism::internal {

/// What an owner knows of one attempt of a task when it records it: its
/// state then, and what it learned so far. An owner records a task when it
/// sends a batch (the state it is in then) and when an attempt ends, so a
/// task that runs and ends between two batches takes one event.
struct task_event {
  task_id task;
  std::int32_t attempt = 0;
  task_state state = task_state::waiting_args;
  /// Times in microseconds since the Unix epoch; 0 while unknown.
  std::int64_t submit_us = 0;
  std::int64_t start_us = 0;
  std::int64_t end_us = 0;
  /// On a task's first event: what it runs (empty: the name of the event
  /// before it in its batch that had one), and its job.
  std::string name;
  job_id job;
  /// The actor whose method it calls; nil for a task.
  actor_id actor;
  /// Once it runs: where.
  node_id node;
  worker_id worker;
  std::int32_t pid = 0;
  /// When it failed: why.
  std::string error;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, task_event& x) {
  return f(x.task, x.attempt, x.state, x.submit_us, x.start_us, x.end_us,
           x.name, x.job, static_cast<unique_id&>(x.actor),
           static_cast<unique_id&>(x.node), static_cast<unique_id&>(x.worker),
           x.pid, x.error);
}

/// A read of an object from another node's object store, as the owner
/// that read it recorded it once the read ended: what `prism timeline`
/// draws on the reading node's row of object transfers.
struct transfer_event {
  object_id object;
  /// The job of the process that read it; 0 if it serves every job.
  job_id job;
  node_id from;
  node_id to;
  /// The payload bytes that arrived.
  std::uint64_t bytes = 0;
  /// Microseconds since the Unix epoch.
  std::int64_t start_us = 0;
  std::int64_t end_us = 0;
  /// Why it stopped short; empty if the whole value arrived.
  std::string error;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, transfer_event& x) {
  return f(x.object, x.job, static_cast<unique_id&>(x.from),
           static_cast<unique_id&>(x.to), x.bytes, x.start_us, x.end_us,
           x.error);
}

/// How many object transfers an owner keeps until it sends them with its
/// next batch of task events; past it, they are dropped and counted with
/// the dropped task events.
inline constexpr std::size_t max_transfer_events = 10'000;

/// How many events an owner sends in one batch, at most: a batch this
/// full goes at once. Small enough (about 190 KB) that a batch stays in
/// the caches of the owner that fills it and of the control store that
/// applies it, and that the allocator hands back the same memory for the
/// next one: batches of 10,000 (1.8 MB, fresh pages each time, moved as
/// they grew) cost `single_client_tasks_async` about 9%, where batches of
/// 1,024 cost it about 1%.
inline constexpr std::size_t task_event_batch = 1024;

/// Microseconds since the Unix epoch, now.
std::int64_t unix_us_now() noexcept;

/// Microseconds since the Unix epoch at the clock's last tick: up to a few
/// milliseconds behind `unix_us_now`, and a third of its cost.
std::int64_t unix_us_coarse() noexcept;

/// The events one process records until it sends them on: at most
/// `capacity`; past it, events are dropped and counted.
class task_event_buffer {
public:
  explicit task_event_buffer(std::size_t capacity) : capacity_(capacity) {}

  /// Keeps `e`, or counts it as dropped; returns whether it kept it.
  bool add(task_event e) {
    if (events_.size() >= capacity_) {
      ++dropped_;
      return false;
    }
    if (events_.empty())
      events_.reserve(std::min(capacity_, task_event_batch));
    events_.push_back(std::move(e));
    return true;
  }

  std::size_t size() const noexcept {
    return events_.size();
  }

  /// Counts an event kept elsewhere (an object transfer) that did not fit.
  void count_dropped() noexcept {
    ++dropped_;
  }

  /// The events kept and the count dropped since the last take.
  std::pair<std::vector<task_event>, std::uint64_t> take() {
    std::pair<std::vector<task_event>, std::uint64_t> result{std::move(events_),
                                                             dropped_};
    events_.clear();
    dropped_ = 0;
    return result;
  }

private:
  std::size_t capacity_;
  std::vector<task_event> events_;
  std::uint64_t dropped_ = 0;
};

/// One attempt of a task, as its events told it.
struct task_attempt {
  std::int32_t attempt = 0;
  task_state state = task_state::queued;
  node_id node;
  worker_id worker;
  std::int32_t pid = 0;
  std::int64_t start_us = 0;
  std::int64_t end_us = 0;
  std::string error;
};

/// A task as its events told it.
struct task_record {
  task_id id;
  /// Index into the table's names; past them while it has none.
  std::uint32_t name = 0xffffffff;
  task_state state = task_state::waiting_args;
  job_id job;
  /// The actor whose method it calls; nil for a task.
  actor_id actor;
  std::int64_t submit_us = 0;
  /// The attempt with the highest number.
  task_attempt latest;
  /// The attempts before `latest`, oldest first: empty unless it was
  /// retried, as most tasks never are.
  std::vector<task_attempt> earlier;

  /// Calls `f(attempt)` for each attempt, oldest first.
  template <class F>
  void each_attempt(F&& f) const {
    for (const auto& a : earlier)
      f(a);
    f(latest);
  }

  std::size_t attempt_count() const noexcept {
    return earlier.size() + 1;
  }
};

/// The tasks of the cluster as their events told them: at most
/// `max_tasks`; past it the task recorded first is forgotten, and counted.
///
/// Records sit in a ring in the order they were made, so forgetting the
/// oldest is overwriting it, and an open-addressing index finds a task's
/// record: one event costs a probe of a compact array and the record it
/// changes, and no allocation unless it carries a new name or an error.
class task_table {
public:
  explicit task_table(std::size_t max_tasks);

  /// Applies `e` to its task's record, making the record if it is new.
  /// A new task's event without a name has the name of the last event of
  /// `apply_batch` that had one.
  void apply(const task_event& e);

  /// Applies a batch of one owner, in order. The index slots that the
  /// events a few places on will probe, and those of the records they will
  /// make room by forgetting, are fetched into the cache while the events
  /// before them apply: each is a cache miss of its own otherwise.
  void apply_batch(const std::vector<task_event>& batch);

  /// Counts events dropped before they arrived (by an owner's buffer).
  void add_dropped(std::uint64_t n) noexcept {
    dropped_ += n;
  }

  /// Events owners dropped, their buffers full.
  std::uint64_t dropped() const noexcept {
    return dropped_;
  }

  /// Seconds from a task's submission to its first attempt's start, and
  /// from an attempt's start to its end, as events told them.
  const histogram& scheduling() const noexcept {
    return scheduling_;
  }
  const histogram& running() const noexcept {
    return running_;
  }

  /// Tasks forgotten, the table full.
  std::uint64_t forgotten() const noexcept {
    return forgotten_;
  }

  std::size_t size() const noexcept {
    return size_;
  }

  /// The name of `r`'s function; empty while no event named it.
  const std::string& name_of(const task_record& r) const {
    static const std::string none;
    return r.name < names_.size() ? names_[r.name] : none;
  }

  const task_record* find(const task_id& id) const;

  /// Calls `f(record)` for every task, the oldest first.
  template <class F>
  void each(F&& f) const {
    for (std::size_t i = 0; i < size_; ++i)
      f(at((oldest_ + i) % size_));
  }

  /// Calls `f(record)` for the tasks from the `first`-th oldest on (0 is
  /// the oldest kept), while it returns true.
  template <class F>
  void each_from(std::size_t first, F&& f) const {
    for (std::size_t i = first; i < size_; ++i)
      if (!f(at((oldest_ + i) % size_)))
        return;
  }

private:
  /// A slot of the index: the low 32 bits of its task's hash (0 never
  /// stands for a task: see `tag_of`) and where its record is.
  struct slot {
    std::uint32_t tag = 0;
    std::uint32_t pos = 0;
  };

  static constexpr std::uint32_t no_name = 0xffffffff;
  static constexpr std::size_t no_pos = static_cast<std::size_t>(-1);
  /// Records per chunk of the ring; chunks never move.
  static constexpr std::size_t chunk_bits = 12;
  static constexpr std::size_t chunk_size = std::size_t{1} << chunk_bits;

  static std::uint32_t tag_of(const task_id& id) noexcept;

  task_record& at(std::size_t pos) noexcept {
    return chunks_[pos >> chunk_bits][pos & (chunk_size - 1)];
  }

  const task_record& at(std::size_t pos) const noexcept {
    return chunks_[pos >> chunk_bits][pos & (chunk_size - 1)];
  }

  /// The slot of `id`'s record, or `no_pos`.
  std::size_t slot_of(const task_id& id, std::uint32_t tag) const noexcept;

  /// A record for new task `id`, forgetting the oldest if the table is
  /// full; `no_pos` if it keeps none.
  std::size_t make_record(const task_id& id, std::uint32_t tag);

  void index(std::uint32_t tag, std::size_t pos) noexcept;
  void unindex(std::size_t slot) noexcept;
  void grow_index();

  std::uint32_t name_index(const std::string& name);

  std::size_t max_tasks_;
  std::vector<std::unique_ptr<task_record[]>> chunks_;
  std::size_t size_ = 0;
  /// Where the oldest record is, once the ring is full.
  std::size_t oldest_ = 0;
  /// A power of two in size, at most half full.
  std::vector<slot> index_;
  std::vector<std::string> names_;
  std::unordered_map<std::string, std::uint32_t> name_indices_;
  std::uint32_t last_name_ = 0;
  /// The name of the last event of the batch being applied that had one.
  std::uint32_t batch_name_ = no_name;
  std::uint64_t dropped_ = 0;
  std::uint64_t forgotten_ = 0;
  histogram scheduling_ = histogram::of_latency();
  histogram running_ = histogram::of_latency();
};

} // namespace prism::internal
