#pragma once

// The conversation between an owner and a worker it leased: tasks go in,
// results come back to the owner named in the push.

#include <cstdint>
#include <string>

#include <caf/actor.hpp>

#include "prism/detail/runtime.hpp"
#include "prism/internal/task_spec.hpp"

namespace prism::protocol {

/// owner -> worker: run `spec` under lease `lease_id`, reply to `reply_to`.
struct push_task {
  internal::task_spec spec;
  std::uint64_t lease_id = 0;
  caf::actor reply_to;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, push_task& x) {
  return f(x.spec, x.lease_id, x.reply_to);
}

/// owner -> the owner actor of the worker a task was pushed to (the
/// worker's own actor is busy running tasks): the task is cancelled. A run
/// of it is asked to stop, and one not started yet never starts; with
/// `recursive`, the tasks it submitted are cancelled too, with `force` as
/// given.
struct cancel_run {
  task_id task;
  bool force = false;
  bool recursive = true;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, cancel_run& x) {
  return f(x.task, x.force, x.recursive);
}

/// worker -> owner: how one run of a task ended.
struct task_done {
  task_id task;
  std::int32_t attempt = 0;
  std::uint64_t lease_id = 0;
  worker_id worker;
  bool ok = false;
  detail::value result;
  detail::error_info error;
  /// The task threw an exception of one of its spec's
  /// `retry_exception_types` (the worker alone can tell: it holds the
  /// exception).
  bool retry_listed = false;
  /// Time the function ran, for the owner's pipelining; -1 if it did not.
  std::int64_t run_ns = 0;
  /// When the run began, in microseconds since the Unix epoch by the
  /// worker's clock: the task's events tell it.
  std::int64_t start_us = 0;
  /// Set when the result is large: the node whose object store keeps it
  /// (`result` is then empty), that node's raylet, and its contact.
  node_id stored_at;
  caf::actor store;
  std::string store_contact;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, task_done& x) {
  return f(x.task, x.attempt, x.lease_id, static_cast<unique_id&>(x.worker),
           x.ok, x.result, x.error, x.retry_listed, x.run_ns, x.start_us,
           static_cast<unique_id&>(x.stored_at), x.store, x.store_contact);
}

} // namespace prism::protocol
