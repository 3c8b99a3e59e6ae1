#pragma once

// Supervision trees with Erlang/OTP semantics: what a supervisor does when one
// of its children exits, how often it may do so, and how it stops them.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace prism {

// -- strategies and restart types ---------------------------------------------

/// Which children a supervisor restarts when one of them has to be restarted.
enum class restart_strategy : std::uint8_t {
  /// Only the child that exited.
  one_for_one,
  /// Every child: the others are stopped in reverse start order, then all
  /// start again in order.
  one_for_all,
  /// The child that exited and every child started after it: those are
  /// stopped in reverse start order, then all of them start again in order.
  rest_for_one,
  /// Like `one_for_one`, for children added at run time from one template.
  simple_one_for_one,
};

/// When a child that exited on its own is started again.
enum class restart_type : std::uint8_t {
  /// Always, whatever the reason it exited with.
  permanent,
  /// Only if it exited abnormally (not `normal`, not `shutdown`).
  transient,
  /// Never; the supervisor forgets the child once it has exited.
  temporary,
};

/// How a child's exit reads to its supervisor.
enum class child_exit : std::uint8_t {
  /// The child finished its work.
  normal,
  /// The child was asked to stop, or stopped itself as if asked.
  shutdown,
  /// Anything else: a crash, a kill, a failed start.
  abnormal,
};

/// Returns a short, stable name, e.g. "rest_for_one".
const char* to_string(restart_strategy x) noexcept;

/// Returns a short, stable name, e.g. "transient".
const char* to_string(restart_type x) noexcept;

/// Returns a short, stable name, e.g. "abnormal".
const char* to_string(child_exit x) noexcept;

// -- errors -------------------------------------------------------------------

/// Why a supervisor refused a request, or gave up (error category
/// "supervisor" in protocol/supervisor.hpp, which also names it
/// `protocol::supervisor_errc`). The codes are on the wire: never renumber.
enum class supervisor_errc : std::uint8_t {
  /// No error: the request was taken (never sent as an error).
  none = 0,
  /// Exit reason: more restarts than the intensity allows within the period.
  intensity_exceeded = 1,
  /// Exit reason: a child failed to start while the supervisor started up.
  /// As a reply: the requested child failed to start.
  start_failed,
  /// No child has the requested id.
  unknown_child,
  /// A child with the requested id exists already.
  child_exists,
  /// The child is alive; terminate it first.
  child_running,
  /// The child is waiting to be restarted.
  child_restarting,
  /// The request does not apply to this supervisor's strategy.
  not_supported,
  /// The requested id is empty.
  invalid_id,
  /// The supervisor is stopping; it starts and manages nothing any more.
  shutting_down,
};

/// Returns a short, stable name, e.g. "unknown_child".
const char* to_string(supervisor_errc x) noexcept;

// -- flags --------------------------------------------------------------------

/// An optional pause before a restart, growing while a child keeps failing.
/// The n-th consecutive restart of a child waits `min * 2^(n-1)`, at most
/// `max`, shortened by a random fraction of up to `jitter` of itself (so 1
/// means "anywhere between 0 and the full delay"). A child that stays up for
/// a whole `supervisor_flags::period` after a restart starts again from `min`.
struct backoff {
  std::chrono::milliseconds min{100};
  std::chrono::milliseconds max{10000};
  /// In [0, 1].
  double jitter = 0.0;
};

/// How a supervisor restarts its children, and when it gives up.
struct supervisor_flags {
  restart_strategy strategy = restart_strategy::one_for_one;

  /// Restarts allowed within any `period`. One more makes the supervisor
  /// stop all its children and exit abnormally, so that its own supervisor
  /// decides (escalation). 0 means the first restart already escalates.
  int intensity = 1;

  /// The sliding window the restarts are counted in. Must be positive.
  std::chrono::milliseconds period{5000};

  /// Pause before restarts; none (restart at once) if empty.
  std::optional<backoff> restart_backoff;
};

/// How a supervisor stops one child.
struct shutdown_spec {
  /// Kill the child outright instead of asking it to stop.
  bool brutal_kill = false;

  /// How long the child may take to stop when asked, before it is killed.
  /// Ignored with `brutal_kill`. Must not be negative.
  std::chrono::milliseconds timeout{5000};
};

/// One child as `which_children` reports it, in start order.
struct child_info {
  std::string id;
  /// Whether the child has started (its start completed) and is not down
  /// yet (it may be on its way down).
  bool running = false;
  restart_type restart = restart_type::permanent;
  /// How often the supervisor has started this child again after a failure,
  /// its own or a sibling's.
  int restarts = 0;

  friend bool operator==(const child_info&, const child_info&) = default;
};

// -- validation ---------------------------------------------------------------

/// Throws `invalid_argument_error` unless `intensity >= 0`, `period > 0`,
/// and, with a backoff, `0 <= min <= max` and `0 <= jitter <= 1`.
void validate(const supervisor_flags& flags);

/// Throws `invalid_argument_error` if `spec.timeout` is negative.
void validate(const shutdown_spec& spec);

} // namespace prism
