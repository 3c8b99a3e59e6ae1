#pragma once

// The timeline of tasks as Chrome's trace-event JSON, which Perfetto and
// chrome://tracing load (`prism timeline`):
//
// - a process per node and a thread per worker (and a process "drivers"
//   with a thread per driver), named by metadata events;
// - a slice per attempt of a task or actor call, named by its function,
//   with its attempt and node in `args`;
// - an arrow from each task's submission to its first attempt (a flow,
//   version 2): each submitter's row holds a 1 µs "submit" slice at its
//   first submission of every 10 ms, and the arrows of the tasks it
//   submitted in those 10 ms leave from it;
// - on each node's process, a row of the objects read from other nodes'
//   stores into it: an async slice per read ("object transfer"), so that
//   reads at the same time overlap, with the object, the node read from,
//   the bytes and the rate in `args`.
//
// Written as it goes, a task at a time, so that a million tasks take no
// more memory than their rows' names: about 135 bytes a task.

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "prism/ids.hpp"
#include "prism/internal/task_events.hpp"

namespace prism::internal {

/// A task as the timeline draws it.
struct timeline_task {
  task_id id;
  std::string name;
  std::int64_t submit_us = 0;
  /// Its attempts, oldest first; one without a start is not drawn.
  std::vector<task_attempt> attempts;
  /// The actor whose method it calls; nil for a task. A call's attempts
  /// are drawn on the actor's row.
  actor_id actor{};
};

class chrome_trace_writer {
public:
  /// How long the arrows of one submitter leave from one "submit" slice.
  static constexpr std::int64_t submit_window_us = 10'000;

  /// Writes to `out`; times are drawn from `base_us` (microseconds since
  /// the Unix epoch) on.
  chrome_trace_writer(std::ostream& out, std::int64_t base_us);

  /// Draws `t`.
  void add(const timeline_task& t);

  /// Draws the object transfer `t` on the row of the node that read it.
  void add(const transfer_event& t);

  /// Ends the document. REQUIRES: called once, last.
  void finish();

  /// Tasks, attempts (slices) and arrows drawn so far.
  std::uint64_t tasks() const noexcept {
    return tasks_;
  }
  std::uint64_t slices() const noexcept {
    return slices_;
  }
  std::uint64_t arrows() const noexcept {
    return arrows_;
  }
  std::uint64_t transfers() const noexcept {
    return transfers_;
  }

private:
  struct row {
    int pid = 0;
    std::uint64_t tid = 0;
  };
  struct window {
    std::int64_t start_us = 0;
    std::uint64_t id = 0;
  };
  /// The process of node `n`, named when first seen.
  int node_process(const node_id& n);
  /// A new row on node `n`'s process, named "`kind` <id> (pid `os_pid`)".
  row new_row(const node_id& n, const char* kind, const unique_id& id,
              std::int32_t os_pid);
  /// The row of worker `w` on node `n`, named when first seen.
  row worker_row(const node_id& n, const worker_id& w, std::int32_t os_pid);
  /// The row of actor `a`'s instance in process `os_pid` on node `n`,
  /// named when first seen.
  row actor_row(const node_id& n, const actor_id& a, std::int32_t os_pid);
  /// The row of `w` as a submitter: its own if it ran anything, else a
  /// driver's row.
  row submitter_row(const worker_id& w);
  /// The id of the "submit" slice the arrow of a task that `w` submitted at
  /// `submit_us` leaves from, drawn if new.
  std::uint64_t submit_slice(const worker_id& w, std::int64_t submit_us);
  void begin_event();

  std::ostream& out_;
  std::int64_t base_us_;
  bool first_ = true;
  std::unordered_map<node_id, int> nodes_;
  std::unordered_map<worker_id, row> workers_;
  /// By actor and process: a restarted actor's instance runs elsewhere.
  std::map<std::tuple<actor_id, node_id, std::int32_t>, row> actors_;
  std::unordered_map<worker_id, row> drivers_;
  std::unordered_map<worker_id, window> windows_;
  std::uint64_t next_tid_ = 1;
  std::uint64_t next_flow_ = 1;
  std::uint64_t tasks_ = 0;
  std::uint64_t slices_ = 0;
  std::uint64_t arrows_ = 0;
  std::uint64_t transfers_ = 0;
};

} // namespace prism::internal
