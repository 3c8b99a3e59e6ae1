#pragma once

// What a process's metrics port (`/metrics`) asks of its actors, and the
// report each raylet sends the control store every second: the figures of
// the node, the control store and the task event store, exact as of the
// moment they answer.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "prism/ids.hpp"
#include "prism/internal/histogram.hpp"
#include "prism/internal/resource_set.hpp"
#include "prism/internal/user_metrics.hpp"
#include "prism/state.hpp"

namespace prism::protocol {

/// A count of something by a name, e.g. worker processes by state.
using named_counts = std::vector<std::pair<std::string, std::uint64_t>>;

/// anyone -> raylet: the node's figures. Answered with `node_metrics`.
struct query_node_metrics {
  std::uint32_t unused = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, query_node_metrics& x) {
  return f(x.unused);
}

struct node_metrics {
  node_id node;
  internal::resource_set total;
  internal::resource_set available;
  /// Workers by state ("IDLE", "LEASED", "STARTING", "ACTOR_HOST"), and
  /// whether each is a process or a thread: "STATE/process".
  named_counts workers;
  /// Requests for a lease waiting at the node, and those no node can fit.
  std::uint64_t leases_waiting = 0;
  std::uint64_t leases_infeasible = 0;
  std::uint64_t leases_granted = 0;
  /// Actor instances the node hosts.
  std::uint64_t actors_hosted = 0;
  /// The node's object store: values and their payload bytes.
  std::uint64_t objects = 0;
  std::uint64_t object_bytes = 0;
  /// Of those bytes, the ones in memory; the objects and bytes only on disk
  /// (spilled); and since the node started, the objects spilled, those read
  /// back, and the puts and results that waited for room or failed for
  /// want of it.
  std::uint64_t object_memory_bytes = 0;
  std::uint64_t spilled_objects = 0;
  std::uint64_t spilled_bytes = 0;
  std::uint64_t spills = 0;
  std::uint64_t restores = 0;
  std::uint64_t store_full_waits = 0;
  std::uint64_t store_full_errors = 0;
  /// The memory in use where the node runs and the most there is (the
  /// host's, or its cgroup's), as the memory monitor last sampled it; and
  /// the workers it killed since the node started.
  std::uint64_t memory_used = 0;
  std::uint64_t memory_limit = 0;
  std::uint64_t memory_kills = 0;
  /// Lines of worker output dropped before their driver took them.
  std::uint64_t output_lines_dropped = 0;
  /// Worker processes started since the node started, and those that ended
  /// by a signal or a non-zero exit.
  std::uint64_t worker_processes_started = 0;
  std::uint64_t worker_processes_failed = 0;
  /// The metrics of the program's own its worker processes shipped
  /// (`prism/metrics.hpp`), summed over them; and the series dropped.
  std::vector<internal::user_series> user;
  std::uint64_t user_dropped = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, node_metrics& x) {
  return f(static_cast<unique_id&>(x.node), x.total, x.available, x.workers,
           x.leases_waiting, x.leases_infeasible, x.leases_granted,
           x.actors_hosted, x.objects, x.object_bytes, x.object_memory_bytes,
           x.spilled_objects, x.spilled_bytes, x.spills, x.restores,
           x.store_full_waits, x.store_full_errors, x.memory_used,
           x.memory_limit, x.memory_kills, x.output_lines_dropped,
           x.worker_processes_started, x.worker_processes_failed, x.user,
           x.user_dropped);
}

/// worker process -> its raylet, every second while any changed: the
/// series of the program's metrics that changed, with their values so far.
struct user_metrics {
  worker_id worker;
  std::vector<internal::user_series> series;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, user_metrics& x) {
  return f(static_cast<unique_id&>(x.worker), x.series);
}

/// raylet -> gcs, every `raylet_config::report_interval`: the node is there,
/// and what it has free. Its age is a node's heartbeat age.
struct node_report {
  node_id node;
  internal::resource_set available;
  std::uint64_t objects = 0;
  std::uint64_t object_bytes = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, node_report& x) {
  return f(static_cast<unique_id&>(x.node), x.available, x.objects,
           x.object_bytes);
}

/// anyone -> gcs: the control store's figures. Answered with
/// `control_metrics`.
struct query_control_metrics {
  std::uint32_t unused = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f,
                                        query_control_metrics& x) {
  return f(x.unused);
}

/// A node as the control store sees it.
struct node_health {
  node_id node;
  /// "ALIVE", "DEAD", ...
  std::string state;
  internal::resource_set total;
  /// As its last report said; `total` before its first.
  internal::resource_set available;
  /// Milliseconds since its last report (or its registration); -1 for a
  /// dead node.
  std::int64_t heartbeat_age_ms = -1;
  std::uint64_t objects = 0;
  std::uint64_t object_bytes = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, node_health& x) {
  return f(static_cast<unique_id&>(x.node), x.state, x.total, x.available,
           x.heartbeat_age_ms, x.objects, x.object_bytes);
}

struct control_metrics {
  std::vector<node_health> nodes;
  /// Actors by class and state.
  std::vector<state::count> actors;
  /// Jobs by state.
  named_counts jobs;
  /// Seconds each write to the storage took (a group commit each).
  internal::histogram write_latency;
  std::uint64_t writes_failed = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, control_metrics& x) {
  return f(x.nodes, x.actors, x.jobs, x.write_latency, x.writes_failed);
}

/// anyone -> gcs (-> its task event store): the tasks' figures. Answered
/// with `task_metrics`; with no task event store, an error.
struct query_task_metrics {
  std::uint32_t unused = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, query_task_metrics& x) {
  return f(x.unused);
}

struct task_metrics {
  /// Tasks by function and state, of those the store keeps.
  std::vector<state::count> tasks;
  /// Seconds from submission to the first attempt's start, and from an
  /// attempt's start to its end.
  internal::histogram scheduling;
  internal::histogram running;
  std::uint64_t events_dropped = 0;
  std::uint64_t tasks_forgotten = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, task_metrics& x) {
  return f(x.tasks, x.scheduling, x.running, x.events_dropped,
           x.tasks_forgotten);
}

} // namespace prism::protocol
