#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

namespace prism {

/// What went wrong, as a value a program can branch on. Retry policies read the
/// code, never the message text.
enum class errc : std::uint8_t {
  ok = 0,
  /// The task's own code threw. Not retryable unless the task asked for it.
  task_failed,
  /// The worker running the task died. Retryable.
  worker_crashed,
  /// A wait for a result ran out of time. Retryable.
  timeout,
  /// No function is registered under the requested name. Not retryable.
  function_not_found,
  /// An argument, option or resource request is malformed. Not retryable.
  invalid_argument,
  /// A value was read as a type other than the one it was written as.
  type_mismatch,
  /// A function name was registered twice. Not retryable.
  registration_failed,
  /// Prism is not running (`init` was not called, or `shutdown` was).
  not_initialized,
  /// Prism's own machinery failed in a way the caller cannot fix.
  internal,
  /// The actor is dead and will not come back: killed, exited, out of
  /// restarts, or its owner died. Not retryable.
  actor_died,
  /// The control store did not answer in time: it is restarting or down, or
  /// could not make a change durable. Retryable.
  gcs_unavailable,
  /// The driver or worker that owns an object died, and with it what it knew
  /// of the object. Not retryable: the same ref cannot be fetched again.
  owner_died,
  /// No node can run the task as asked: its hard node affinity names a node
  /// that is dead or can never fit it. Not retryable.
  unschedulable,
  /// Every copy of an object that has no lineage (a `put`) was lost with the
  /// node that held it. Not retryable: nothing can make it again.
  object_lost,
  /// Every copy of a task's result was lost, and running the task again to
  /// rebuild it failed or had no retries left. Not retryable.
  reconstruction_failed,
  /// The control store's tables on disk are damaged, and were refused as
  /// they are. Not retryable: an operator checks and repairs them.
  storage_corrupt,
  /// The cluster refused this process's credentials: its cluster token
  /// was missing or wrong. Not retryable: the same credentials are refused
  /// again.
  permission_denied,
  /// The task or actor call was cancelled (`prism::cancel`). Not
  /// retryable: a cancelled task never runs again.
  task_cancelled,
  /// A node's object store was full and spilling to disk could not make
  /// room before `config::object_store_full_timeout_ms` ran out (the spill
  /// directory's disk is full or failing). Retryable: room comes back as
  /// objects are freed.
  object_store_full,
  /// The node's memory use passed its threshold, and its memory monitor
  /// killed the worker running the task (`config::memory_usage_threshold`).
  /// Retryable: the task runs again after a backoff.
  out_of_memory,
};

/// Returns a short, stable name for `code`, e.g. "worker_crashed".
const char* to_string(errc code) noexcept;

/// Returns whether running the same work again can succeed after an error of
/// kind `code` (a crashed worker, a timeout), as opposed to failing the same
/// way again (a bad argument, an exception in user code).
bool is_retryable(errc code) noexcept;

/// The root of every error Prism throws.
class error : public std::runtime_error {
public:
  error(errc code, const std::string& message);

  /// The kind of failure.
  errc code() const noexcept {
    return code_;
  }

  /// Whether a retry of the same work can help.
  bool retryable() const noexcept {
    return is_retryable(code_);
  }

private:
  errc code_;
};

/// The task's own code threw. Carries the original exception's type name and
/// message, so a caller can tell `std::out_of_range` from a user exception.
class task_error : public error {
public:
  task_error(std::string exception_type, std::string exception_message,
             std::string function_name);

  /// Demangled type name of the exception the task threw, e.g.
  /// "std::out_of_range". "unknown" when the task threw a non-exception.
  const std::string& exception_type() const noexcept {
    return exception_type_;
  }

  /// The `what()` of the exception the task threw.
  const std::string& exception_message() const noexcept {
    return exception_message_;
  }

  /// Name of the remote function that threw.
  const std::string& function_name() const noexcept {
    return function_name_;
  }

private:
  std::string exception_type_;
  std::string exception_message_;
  std::string function_name_;
};

/// The worker running a task died before the task finished, and the task has
/// no retries left.
class worker_crashed_error : public error {
public:
  explicit worker_crashed_error(const std::string& message)
      : error(errc::worker_crashed, message) {}
};

/// A `get` or `wait` ran out of time before the result was ready. The result
/// may still arrive; asking again can succeed.
class timeout_error : public error {
public:
  explicit timeout_error(const std::string& message)
      : error(errc::timeout, message) {}
};

/// A task named a function that no `PRISM_REMOTE` registered.
class function_not_found_error : public error {
public:
  explicit function_not_found_error(const std::string& message)
      : error(errc::function_not_found, message) {}
};

/// A malformed argument, option or resource request.
class invalid_argument_error : public error {
public:
  explicit invalid_argument_error(const std::string& message)
      : error(errc::invalid_argument, message) {}
};

/// A value was read as a type other than the one it was written as, e.g. an
/// `object_ref<int>` whose object holds a `std::string`.
class type_mismatch_error : public error {
public:
  explicit type_mismatch_error(const std::string& message)
      : error(errc::type_mismatch, message) {}
};

/// A function name was registered twice, or a registration was malformed.
class registration_error : public error {
public:
  explicit registration_error(const std::string& message)
      : error(errc::registration_failed, message) {}
};

/// A call went to an actor that is dead for good. The message names the
/// cause: killed, exited, constructor failed, out of restarts, or owner died.
class actor_died_error : public error {
public:
  explicit actor_died_error(const std::string& message)
      : error(errc::actor_died, message) {}
};

/// The control store (which keeps actors, names and the key-value table)
/// was down for longer than `config::gcs_reconnect_timeout_ms`, or could not
/// write a change durably. Nothing was lost that it had acknowledged; asking
/// again can succeed.
class gcs_unavailable_error : public error {
public:
  explicit gcs_unavailable_error(const std::string& message)
      : error(errc::gcs_unavailable, message) {}
};

/// The head refused this process: it presented no cluster token, or a
/// wrong one (README, "Security"). The message says which.
class permission_denied_error : public error {
public:
  explicit permission_denied_error(const std::string& message)
      : error(errc::permission_denied, message) {}
};

/// The object's owner (the driver or worker whose call made it) died, so the
/// object cannot be fetched. The message names the object and the owner.
class owner_died_error : public error {
public:
  explicit owner_died_error(const std::string& message)
      : error(errc::owner_died, message) {}
};

/// The task cannot be scheduled as asked: its hard node affinity names a
/// node that is dead, or one that can never fit its resources.
class unschedulable_error : public error {
public:
  explicit unschedulable_error(const std::string& message)
      : error(errc::unschedulable, message) {}
};

/// Every copy of a `put` object was lost with the node that held it, and a
/// `put` has no lineage to rebuild it from. The message names the object
/// and the node.
class object_lost_error : public error {
public:
  explicit object_lost_error(const std::string& message)
      : error(errc::object_lost, message) {}
};

/// The task or actor call was cancelled with `prism::cancel`: it never
/// ran, or it was asked to stop while it ran (`prism::is_cancelled`).
class task_cancelled_error : public error {
public:
  explicit task_cancelled_error(const std::string& message)
      : error(errc::task_cancelled, message) {}
};

/// A `put` or a task's result found its node's object store full, and
/// spilling to disk could not make room in time. The message names the
/// node, the object's size and what the store held.
class object_store_full_error : public error {
public:
  explicit object_store_full_error(const std::string& message)
      : error(errc::object_store_full, message) {}
};

/// The memory monitor of the node the task ran on killed its worker: the
/// node's memory use passed its threshold, and the task's retries ran out.
/// The message names the node's memory use, the threshold and the worker.
class out_of_memory_error : public error {
public:
  explicit out_of_memory_error(const std::string& message)
      : error(errc::out_of_memory, message) {}
};

/// Every copy of a task's result was lost, and the owner could not rebuild
/// it: the task's retries were used up, or its re-run failed (the cause is
/// in the message).
class reconstruction_failed_error : public error {
public:
  explicit reconstruction_failed_error(const std::string& message)
      : error(errc::reconstruction_failed, message) {}
};

/// The control store's tables at `config::storage_path` are damaged, so
/// `init` refused them. Not a byte of them was changed. `prism store check
/// DIR` tells what is damaged, and `prism store repair DIR` what a repair
/// would drop (README, "Damaged storage").
class storage_corrupt_error : public error {
public:
  /// `file` and `offset` locate the damage, when it is known where it is.
  storage_corrupt_error(const std::string& message, std::string path,
                        std::string file = {}, std::uint64_t offset = 0)
      : error(errc::storage_corrupt, message), path_(std::move(path)),
        file_(std::move(file)), offset_(offset) {}

  /// The store's directory.
  const std::string& path() const noexcept {
    return path_;
  }

  /// The damaged file's name within `path()`, e.g. "000012.log"; empty if
  /// the damage is not in one known file.
  const std::string& file() const noexcept {
    return file_;
  }

  /// The byte offset of the damage in `file()`; 0 if `file()` is empty.
  std::uint64_t offset() const noexcept {
    return offset_;
  }

private:
  std::string path_;
  std::string file_;
  std::uint64_t offset_;
};

/// An API call needs a running Prism (`prism::init`).
class not_initialized_error : public error {
public:
  explicit not_initialized_error(const std::string& message)
      : error(errc::not_initialized, message) {}
};

} // namespace prism
