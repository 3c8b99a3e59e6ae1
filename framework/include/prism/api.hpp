#pragma once

#include <chrono>
#include <cstddef>
#include <type_traits>
#include <vector>

#include "prism/config.hpp"
#include "prism/detail/runtime.hpp"
#include "prism/ids.hpp"
#include "prism/object_ref.hpp"

namespace prism {

/// Starts Prism. With no `cfg.address`, starts an embedded cluster (control
/// store, one node and its workers) inside this process. Throws
/// `registration_error` if `PRISM_REMOTE` registrations conflicted,
/// `invalid_argument_error` for a bad config, and `error` if already running.
///
/// In a worker process (see `is_worker_process`) it never returns: it
/// serves as that worker, as `serve_if_worker` does. Call it first in
/// `main`: what runs before it runs in each node's fork server of the
/// program, of which forked workers are copies, and in workers started by
/// exec (README, "Worker processes").
void init(const config& cfg = {});

/// Whether a raylet started this process as a worker process: it is the
/// job's own program, run again with the environment variable
/// PRISM_WORKER_TOKEN set (and PRISM_WORKER_DOOR, where to register), or
/// as the fork server of that program (PRISM_WORKER_FORK_SERVER set),
/// whose workers are forked from it.
bool is_worker_process() noexcept;

/// In a worker process, serves as that worker and never returns: the
/// process runs the tasks its raylet gives it and exits when the raylet
/// stops it or dies. In a fork server, serves its raylet's requests for
/// forks, and goes on as a worker only in each forked process. Elsewhere
/// returns at once. `init` calls it first; call
/// it yourself at the top of a `main` that cannot call `init` first (a test
/// framework's, say).
void serve_if_worker();

/// Stops Prism and the embedded cluster, if any. Waits for running tasks to
/// return. It is not an error if Prism is not running.
void shutdown();

/// Whether `init` has been called and `shutdown` has not.
bool is_initialized() noexcept;

/// Stores `x` in the object store and returns a reference to it. The caller
/// owns the object.
template <class T>
object_ref<std::decay_t<T>> put(const T& x) {
  using D = std::decay_t<T>;
  return object_ref<D>{detail::current_runtime().put(detail::encode<D>(x))};
}

namespace detail {

inline void require_valid(const ref_token* token) {
  if (token == nullptr)
    throw invalid_argument_error("get or wait on an empty object_ref");
}

} // namespace detail

/// Returns the value of `ref`, waiting until it is ready. Throws the error the
/// object holds (e.g. `task_error`, `worker_crashed_error`), or
/// `timeout_error` if `timeout` (when not negative) passes first.
template <class T>
T get(const object_ref<T>& ref,
      std::chrono::milliseconds timeout = detail::wait_forever) {
  detail::require_valid(ref.token());
  auto v = detail::current_runtime().get(*ref.token(), timeout);
  if constexpr (std::is_void_v<T>) {
    if (v.tag != detail::void_tag)
      detail::throw_type_mismatch(detail::void_tag, v.tag, "object");
  } else {
    return detail::decode<T>(v, "object");
  }
}

/// Returns the values of `refs` in order; `timeout` bounds the whole call.
template <class T>
std::vector<T> get(const std::vector<object_ref<T>>& refs,
                   std::chrono::milliseconds timeout = detail::wait_forever) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::vector<T> result;
  result.reserve(refs.size());
  for (const auto& ref : refs) {
    result.push_back(get(ref, detail::time_left(timeout, deadline)));
  }
  return result;
}

/// Waits for every ref in `refs` (of `void` tasks); throws as `get` does.
void get(const std::vector<object_ref<void>>& refs,
         std::chrono::milliseconds timeout = detail::wait_forever);

/// The refs a `wait` found ready, and the rest, each in their original order.
template <class T>
struct wait_result {
  std::vector<object_ref<T>> ready;
  std::vector<object_ref<T>> not_ready;
};

/// Waits until `num_returns` of `refs` are ready (done, with a value or an
/// error) or `timeout` passes. A negative timeout waits forever. Throws
/// `invalid_argument_error` if `num_returns` exceeds the number of refs.
template <class T>
wait_result<T> wait(const std::vector<object_ref<T>>& refs,
                    std::size_t num_returns,
                    std::chrono::milliseconds timeout = detail::wait_forever) {
  if (num_returns > refs.size())
    throw invalid_argument_error(
        "wait: num_returns exceeds the number of refs");
  std::vector<const detail::ref_token*> tokens;
  tokens.reserve(refs.size());
  for (const auto& ref : refs) {
    detail::require_valid(ref.token());
    tokens.push_back(ref.token());
  }
  auto ready = detail::current_runtime().wait(tokens, num_returns, timeout);
  wait_result<T> result;
  for (std::size_t i = 0; i < refs.size(); ++i)
    (ready[i] ? result.ready : result.not_ready).push_back(refs[i]);
  return result;
}

/// How `cancel` stops a task.
struct cancel_options {
  /// Kill the worker that runs the task instead of asking the task to stop.
  /// A worker process dies at once, and its resources are free. A worker
  /// thread (embedded mode without worker processes) cannot be killed: it
  /// leaves the pool at once, with its resources, and the task's code runs
  /// on until it returns, its result thrown away. Not for actor calls
  /// (kill the actor instead): `cancel` throws `invalid_argument_error`.
  bool force = false;
  /// Cancel the tasks the task submitted too, and theirs, transitively.
  bool recursive = true;
};

/// Cancels the task or actor call whose result `ref` names. One that has
/// not started never runs; a running one is asked to stop: `is_cancelled`
/// turns true inside it, and a `get` or `wait` it blocks in throws
/// `task_cancelled_error`. Either way `get(ref)` throws
/// `task_cancelled_error` from now on, and the task is never retried. A
/// task that has ended already keeps its result. Returns at once.
template <class T>
void cancel(const object_ref<T>& ref, cancel_options opts = {}) {
  detail::require_valid(ref.token());
  detail::current_runtime().cancel(*ref.token(), opts.force, opts.recursive);
}

/// Whether the task or actor call the calling thread runs was cancelled;
/// false outside of one. Long-running code checks it now and then, and
/// returns (or throws) when it turns true.
bool is_cancelled() noexcept;

/// Where the calling code runs.
struct runtime_context {
  job_id job;
  worker_id worker;
  node_id node;
  /// The task being run; nil on the driver.
  task_id task;
  /// 0 for a task's first run, 1 for its first retry, and so on.
  std::int32_t attempt = 0;
};

/// Returns where the calling code runs. Throws `not_initialized_error` when
/// Prism is not running.
runtime_context get_runtime_context();

} // namespace prism
