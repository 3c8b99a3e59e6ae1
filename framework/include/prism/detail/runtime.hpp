#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "prism/config.hpp"
#include "prism/detail/value.hpp"
#include "prism/error.hpp"
#include "prism/ids.hpp"
#include "prism/state.hpp"

namespace prism::detail {

/// An error as it travels between components: the kind, and enough text to
/// rebuild the typed exception on the other side.
struct error_info {
  errc code = errc::ok;
  std::string message;
  std::string exception_type;
  std::string function_name;

  friend bool operator==(const error_info&, const error_info&) = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, error_info& x) {
  return f(x.code, x.message, x.exception_type, x.function_name);
}

/// Throws the typed exception that `info` describes.
[[noreturn]] void throw_error(const error_info& info);

/// One argument of a task: a value, or a reference to an object that the task
/// receives as a value once it is ready.
struct task_arg {
  bool by_ref = false;
  value inline_value;
  object_id ref;
  worker_id owner;
  /// Where `owner` is (by-ref arguments).
  owner_address address;

  friend bool operator==(const task_arg&, const task_arg&) = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, task_arg& x) {
  return f(x.by_ref, x.inline_value, x.ref, static_cast<unique_id&>(x.owner),
           x.address);
}

/// Options a caller sets on a task.
struct task_options {
  std::string name;
  resource_map resources{{"CPU", 1.0}};
  std::int32_t max_retries = 3;
  bool retry_exceptions = false;
  /// With `retry_exceptions`: only exceptions of these types (or types
  /// derived from them) are retried, each named by `exception_type_key`;
  /// empty retries any.
  std::vector<std::string> retry_exception_types;
  /// The node the task should run on; nil for any.
  node_id affinity;
  /// Whether another node may run it if `affinity` is dead or can never fit
  /// it.
  bool affinity_soft = false;
  /// Whether the control store keeps the task's lineage (see `durable()`).
  bool durable = false;
};

/// Options a caller sets on an actor.
struct actor_options {
  std::string name;
  /// Namespace of the name; empty means the creating job's namespace.
  std::string ns;
  bool detached = false;
  std::int32_t max_restarts = 0;
  std::int32_t max_task_retries = 0;
  std::int32_t max_concurrency = 1;
  resource_map resources;
  /// Hosted in a process its node shares among actors of its job, not in a
  /// process of its own (worker processes only).
  bool shared_host = false;
  /// With a name: the live actor of that name if there is one, else this
  /// new one, decided atomically by the control store.
  bool get_if_exists = false;
  /// Groups of methods besides the default one (`max_concurrency`).
  std::vector<concurrency_group> concurrency_groups;
};

/// Options a caller sets on one actor call.
struct call_options {
  /// The concurrency group the call runs in; empty for the method's own
  /// (see `PRISM_CONCURRENCY_GROUP`), or the actor's default group.
  std::string concurrency_group;
};

/// Where the calling code runs inside an actor, for `exit_actor` and
/// `was_current_actor_restarted`.
struct actor_context {
  actor_id actor;
  std::int32_t num_restarts = 0;
};

/// The actor whose method the calling thread runs, or nullptr.
const actor_context* current_actor() noexcept;

/// Sets the actor of the calling thread (actor hosts only).
void set_current_actor(const actor_context* ctx) noexcept;

/// The cancellation flag of the task or actor call the calling thread runs
/// (`prism::is_cancelled`), or nullptr outside of one.
const std::atomic<bool>* current_cancel_flag() noexcept;

/// Sets the cancellation flag of the calling thread (workers and actor
/// hosts, around each run).
void set_current_cancel_flag(const std::atomic<bool>* flag) noexcept;

/// Thrown by `exit_actor` to end the actor after the current call; the
/// actor host catches it. Not a `std::exception`, so that user code that
/// catches those lets it through.
struct actor_exit_signal {};

/// A deadline for a wait; negative milliseconds wait forever.
using wait_duration = std::chrono::milliseconds;
inline constexpr wait_duration wait_forever{-1};

/// What is left of `timeout`, started so as to end at `deadline`: never
/// negative, and `wait_forever` stays `wait_forever`.
inline wait_duration time_left(wait_duration timeout,
                               std::chrono::steady_clock::time_point deadline) {
  if (timeout.count() < 0)
    return timeout;
  auto left = std::chrono::duration_cast<wait_duration>(
      deadline - std::chrono::steady_clock::now());
  return std::max(wait_duration{0}, left);
}

class runtime;

/// One local reference to an object. The last copy of an `object_ref` going
/// away drops it, which lets the owner free the object.
class ref_token {
public:
  ref_token(object_id id, worker_id owner, owner_address address,
            std::weak_ptr<runtime> rt)
      : id_(id), owner_(owner), address_(std::move(address)),
        runtime_(std::move(rt)) {}

  ~ref_token();

  ref_token(const ref_token&) = delete;
  ref_token& operator=(const ref_token&) = delete;

  const object_id& id() const noexcept {
    return id_;
  }

  const worker_id& owner() const noexcept {
    return owner_;
  }

  /// Where the owner is; empty for a ref read outside a running Prism.
  const owner_address& address() const noexcept {
    return address_;
  }

private:
  object_id id_;
  worker_id owner_;
  owner_address address_;
  std::weak_ptr<runtime> runtime_;
};

using ref_ptr = std::shared_ptr<ref_token>;

/// What a driver or a worker does on behalf of the API: submits tasks, keeps
/// and fetches objects. One per driver and per worker; the embedded cluster
/// and cluster mode provide it.
class runtime : public std::enable_shared_from_this<runtime> {
public:
  virtual ~runtime();

  /// Submits a call of the function registered as `function`.
  virtual ref_ptr submit_task(const std::string& function,
                              std::vector<task_arg> args,
                              const task_options& opts) = 0;

  /// Stores `v` as a new object owned by this runtime.
  virtual ref_ptr put(value v) = 0;

  /// Returns the value of the object `ref` names, or throws its error, or
  /// `timeout_error`.
  virtual value get(const ref_token& ref, wait_duration timeout) = 0;

  /// Waits until `num_returns` of `refs` are ready or `timeout` passes, and
  /// returns which are ready.
  virtual std::vector<bool> wait(const std::vector<const ref_token*>& refs,
                                 std::size_t num_returns,
                                 wait_duration timeout) = 0;

  /// Creates an actor with the factory registered as `factory`, whose class
  /// has tag `class_tag`. Throws `invalid_argument_error` if the name is taken.
  virtual actor_id create_actor(const std::string& factory,
                                std::uint64_t class_tag,
                                std::vector<task_arg> args,
                                const actor_options& opts) = 0;

  /// Calls the method registered as `method` on actor `actor`.
  virtual ref_ptr submit_actor_task(const actor_id& actor,
                                    const std::string& method,
                                    std::vector<task_arg> args,
                                    const call_options& opts) = 0;

  /// Looks up a named actor; `ns` nullptr means the caller's namespace.
  /// Throws `type_mismatch_error` if the actor's class is not `class_tag`.
  virtual std::optional<actor_id> find_actor(const std::string& name,
                                             const std::string* ns,
                                             std::uint64_t class_tag) = 0;

  /// Cancels the task or actor call whose result `ref` names (see
  /// `prism::cancel`).
  virtual void cancel(const ref_token& ref, bool force, bool recursive) = 0;

  /// Kills an actor; with `no_restart` false it restarts if it may.
  virtual void kill_actor(const actor_id& actor, bool no_restart) = 0;

  // -- the key-value table (an empty `ns` is the caller's namespace) --------

  /// Sets `key`; returns whether it existed. With `overwrite` false an
  /// existing key keeps its value.
  virtual bool kv_put(const std::string& ns, const std::string& key,
                      const std::string& value, bool overwrite) = 0;
  virtual std::optional<std::string> kv_get(const std::string& ns,
                                            const std::string& key) = 0;
  /// Removes `key`; returns whether it existed.
  virtual bool kv_del(const std::string& ns, const std::string& key) = 0;
  /// The keys that start with `prefix`, in byte order.
  virtual std::vector<std::string> kv_keys(const std::string& ns,
                                           const std::string& prefix) = 0;

  // -- the state of the cluster (prism::state) --------------------------------

  virtual state::page list_state(state::kind k,
                                 const state::list_options& options) = 0;
  virtual std::optional<state::entry> get_state(state::kind k,
                                                const std::string& id) = 0;
  virtual std::vector<state::count>
  summarize_state(state::kind k, const std::string& group_key) = 0;

  /// Makes a reference for an object that arrived inside a value; its
  /// owner is `owner`, reached at `address`.
  virtual ref_ptr borrow(const object_id& id, const worker_id& owner,
                         const owner_address& address) = 0;

  /// Adds a local reference to an object that a value being encoded
  /// contains (see `ref_capture::finish`); dropped with `release`.
  virtual void hold(const object_id& id, const worker_id& owner,
                    const owner_address& address) = 0;

  /// Drops one local reference (called by `ref_token`).
  virtual void release(const object_id& id) = 0;

  virtual job_id current_job() const = 0;
  virtual worker_id self() const = 0;
  virtual node_id node() const = 0;
  virtual task_id current_task() const = 0;
  virtual std::int32_t current_attempt() const = 0;
};

/// The runtime for the calling thread: the worker's while it runs a task,
/// else the driver's. Throws `not_initialized_error` when there is none.
runtime& current_runtime();

/// Like `current_runtime`, but returns nullptr when there is none.
runtime* try_current_runtime() noexcept;

/// Sets the runtime of the calling thread (a worker's task thread).
void set_thread_runtime(runtime* rt) noexcept;

/// Sets the driver's runtime, or clears it with nullptr.
void set_driver_runtime(std::shared_ptr<runtime> rt);

/// Makes a reference for an object that was just read from bytes; its
/// owner's address is the one the value being decoded lists (see
/// `ref_source`).
ref_ptr borrow_ref(const object_id& id, const worker_id& owner);

/// Drops the local references that encoding took on `refs` (see
/// `ref_capture::finish`), once they are held another way. Call it on the
/// thread that encoded them, with the same runtime current.
void release_refs(const std::vector<contained_ref>& refs);

} // namespace prism::detail
