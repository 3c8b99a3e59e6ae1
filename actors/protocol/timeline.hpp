#pragma once

// What `prism timeline` asks of the control store's task event store: its
// tasks with their attempts, a page at a time, oldest first, and the object
// transfers between nodes it keeps, with the first page.

#include <cstdint>
#include <string>
#include <vector>

#include "prism/ids.hpp"
#include "prism/internal/task_events.hpp"

namespace prism::internal {

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, task_attempt& x) {
  return f(x.attempt, x.state, static_cast<unique_id&>(x.node),
           static_cast<unique_id&>(x.worker), x.pid, x.start_us, x.end_us,
           x.error);
}

} // namespace prism::internal

namespace prism::protocol {

/// anyone -> gcs (-> its task event store): the tasks from `cursor` on
/// (0: the oldest kept), at most `limit`, of job `job` (0: every job),
/// submitted, started or ended at `since_us` or later, or running then.
/// Answered with `timeline_page`.
struct timeline_query {
  std::uint32_t job = 0;
  std::int64_t since_us = 0;
  std::uint64_t cursor = 0;
  std::uint64_t limit = 20000;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, timeline_query& x) {
  return f(x.job, x.since_us, x.cursor, x.limit);
}

struct timeline_entry {
  task_id id;
  std::string name;
  std::int64_t submit_us = 0;
  std::vector<internal::task_attempt> attempts;
  /// The actor whose method it calls; nil for a task.
  actor_id actor;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, timeline_entry& x) {
  return f(x.id, x.name, x.submit_us, x.attempts,
           static_cast<unique_id&>(x.actor));
}

struct timeline_page {
  std::vector<timeline_entry> tasks;
  /// The cursor of the next page; 0 after the last.
  std::uint64_t next = 0;
  /// As a task list says (`state::page`): the timeline is whole only while
  /// both are 0.
  std::uint64_t dropped_events = 0;
  std::uint64_t forgotten_tasks = 0;
  /// On the first page (cursor 0): the object transfers kept, of the job
  /// and since the time asked, oldest first; and how many the store
  /// forgot to stay within its bound.
  std::vector<internal::transfer_event> transfers;
  std::uint64_t forgotten_transfers = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, timeline_page& x) {
  return f(x.tasks, x.next, x.dropped_events, x.forgotten_tasks, x.transfers,
           x.forgotten_transfers);
}

} // namespace prism::protocol
