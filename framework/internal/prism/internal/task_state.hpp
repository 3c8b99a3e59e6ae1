#pragma once

// The life of a task at its owner, as one table of allowed transitions.
// Every change of a task's state goes through `transition`, which checks the
// table: an impossible change is refused, counted and reported to the
// caller (which logs it), never an abort.

#include <array>
#include <cstddef>
#include <cstdint>

#include "prism/internal/state_machine.hpp"

namespace prism::internal {

enum class task_state : std::uint8_t {
  /// Submitted; some argument is not ready yet.
  waiting_args,
  /// Every argument is ready; waiting for a worker.
  queued,
  /// Pushed to a worker, which runs it.
  running,
  /// An actor call whose arguments are ready, handed to the actor's route
  /// (which tracks it from then on). Final at the owner.
  forwarded,
  /// Its result is stored. Final.
  finished,
  /// Its error is stored. Final.
  failed,
  /// Cancelled (`prism::cancel`): its `task_cancelled` error is stored, and
  /// it never runs again. Final.
  cancelled,
};

inline constexpr std::size_t num_task_states = 7;

/// A short, stable name, e.g. "waiting_args".
const char* to_string(task_state s) noexcept;

/// One allowed change and when it happens.
using task_transition = state_transition<task_state>;

/// Every allowed change. Nothing leaves `forwarded`, `finished`, `failed` or
/// `cancelled`.
inline constexpr std::array<task_transition, 11> task_transitions{{
    {task_state::waiting_args, task_state::queued,
     "its last missing argument arrived"},
    {task_state::waiting_args, task_state::forwarded,
     "an actor call's last missing argument arrived"},
    {task_state::waiting_args, task_state::failed,
     "an argument failed, or its owner died"},
    {task_state::queued, task_state::running, "it was pushed to a worker"},
    {task_state::queued, task_state::failed, "it cannot be scheduled"},
    {task_state::running, task_state::finished, "its worker returned a value"},
    {task_state::running, task_state::failed,
     "it failed and may not be retried"},
    {task_state::running, task_state::queued,
     "it failed and is retried (its worker died, or it threw and retries "
     "exceptions)"},
    {task_state::waiting_args, task_state::cancelled,
     "it was cancelled while an argument was missing"},
    {task_state::queued, task_state::cancelled,
     "it was cancelled before a worker took it"},
    {task_state::running, task_state::cancelled,
     "it was cancelled while pushed to a worker or running"},
}};

using task_state_machine = state_machine<task_transitions>;

/// Whether `from -> to` is in the table.
constexpr bool allowed(task_state from, task_state to) noexcept {
  return task_state_machine::allowed(from, to);
}

/// Whether nothing leaves `s`.
constexpr bool is_final(task_state s) noexcept {
  return s == task_state::forwarded || s == task_state::finished ||
         s == task_state::failed || s == task_state::cancelled;
}

/// Moves `s` to `to` if the table allows it and returns true. Otherwise
/// leaves `s` as it is, counts the attempt, and returns false.
bool transition(task_state& s, task_state to) noexcept;

/// How many changes `transition` refused in this process.
std::uint64_t illegal_task_transitions() noexcept;

} // namespace prism::internal
