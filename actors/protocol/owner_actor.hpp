#pragma once

// The conversation between a caller's owner and an actor host: calls go in,
// in the order the caller sent them; results go to the caller's owner.

#include <cstdint>
#include <string>
#include <vector>

#include <caf/actor.hpp>

#include "prism/detail/runtime.hpp"

namespace prism::protocol {

/// caller -> actor host: run `method` with `args` (all values).
struct actor_task {
  task_id task;
  std::string method;
  std::vector<detail::task_arg> args;
  /// The caller's owner, which receives the `actor_task_done`.
  caf::actor reply_to;
  /// When the caller made it (microseconds since the Unix epoch), if its
  /// owner records task events; then the host times the call. 0 otherwise.
  std::int64_t submit_us = 0;
  /// The concurrency group the caller chose; empty for the method's own.
  std::string group;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, actor_task& x) {
  return f(x.task, x.method, x.args, x.reply_to, x.submit_us, x.group);
}

/// caller's owner -> actor host: the call `task` is cancelled. One still
/// queued is answered at once with `task_cancelled`; a running one is asked
/// to stop (`prism::is_cancelled`).
struct cancel_call {
  task_id task;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, cancel_call& x) {
  return f(x.task);
}

/// actor host -> caller's owner: how one call ended.
struct actor_task_done {
  actor_id actor;
  task_id task;
  std::int32_t incarnation = 0;
  bool ok = false;
  detail::value result;
  detail::error_info error;
  /// When the method began and ended (microseconds since the Unix epoch),
  /// for a call whose `submit_us` was set; 0 otherwise.
  std::int64_t start_us = 0;
  std::int64_t end_us = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, actor_task_done& x) {
  return f(static_cast<unique_id&>(x.actor), x.task, x.incarnation, x.ok,
           x.result, x.error, x.start_us, x.end_us);
}

/// actor host -> caller's owner: how several calls of one caller ended, in
/// the order they ran. A host sends the answers of calls that ran back to
/// back together, so that an owner takes one message for many.
using actor_tasks_done = std::vector<actor_task_done>;

} // namespace prism::protocol
