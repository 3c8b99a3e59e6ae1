#pragma once

// The life of an actor at the control store, as one table of allowed
// transitions. Every change of an actor's state goes through `transition`,
// which checks the table: an impossible change is refused, counted and
// reported to the caller (which logs it), never an abort. An actor begins
// pending when it is created, or in the state its record holds when the
// control store recovers it from storage: a beginning, not a change.

#include <array>
#include <cstddef>
#include <cstdint>

#include "prism/internal/state_machine.hpp"

namespace prism::internal {

/// The life of an actor: pending creation -> alive -> restarting -> alive
/// ... -> dead.
enum class actor_state : std::uint8_t {
  /// Created; its first instance has not reported that it started.
  pending,
  /// Its current instance reported that it started.
  alive,
  /// Its instance was lost; a new one (the next incarnation) is being
  /// placed or started.
  restarting,
  /// Ended for good (see its death kind). Final.
  dead,
};

inline constexpr std::size_t num_actor_states = 4;

/// A short, stable name, e.g. "restarting".
inline const char* to_string(actor_state s) {
  switch (s) {
  case actor_state::pending:
    return "pending";
  case actor_state::alive:
    return "alive";
  case actor_state::restarting:
    return "restarting";
  case actor_state::dead:
    return "dead";
  }
  return "unknown";
}

/// One allowed change and when it happens.
using actor_transition = state_transition<actor_state>;

/// Every allowed change. Nothing leaves `dead`. `restarting -> restarting`
/// is a change: the actor moves on to its next incarnation.
inline constexpr std::array<actor_transition, 8> actor_transitions{{
    {actor_state::pending, actor_state::alive,
     "its first instance reported that it started"},
    {actor_state::pending, actor_state::restarting,
     "its instance was lost before it reported (its worker or node died, or "
     "it was killed to restart), and a restart is left"},
    {actor_state::pending, actor_state::dead,
     "it ended before it started: its constructor failed, it was killed, its "
     "owner or job ended, or it cannot start (no restarts left, or its spec "
     "in storage is unreadable)"},
    {actor_state::alive, actor_state::restarting,
     "its instance was lost (its worker or node died, or it was killed to "
     "restart) and a restart is left; or the cluster was stopped and it is "
     "started again"},
    {actor_state::alive, actor_state::dead,
     "it exited or was killed, its owner or job ended, or it cannot start "
     "again (no restarts left, or its spec in storage is unreadable)"},
    {actor_state::restarting, actor_state::alive,
     "its new instance reported that it started"},
    {actor_state::restarting, actor_state::restarting,
     "its new instance was lost before it reported, and another restart is "
     "left"},
    {actor_state::restarting, actor_state::dead,
     "it ended before it started again: its constructor failed, it was "
     "killed, its owner or job ended, or it cannot start (no restarts left, "
     "or its spec in storage is unreadable)"},
}};

using actor_state_machine = state_machine<actor_transitions>;

/// Whether `from -> to` is in the table.
constexpr bool allowed(actor_state from, actor_state to) noexcept {
  return actor_state_machine::allowed(from, to);
}

/// Whether nothing leaves `s`.
constexpr bool is_final(actor_state s) noexcept {
  return s == actor_state::dead;
}

/// Moves `s` to `to` if the table allows it and returns true. Otherwise
/// leaves `s` as it is, counts the attempt, and returns false.
[[nodiscard]] inline bool transition(actor_state& s, actor_state to) noexcept {
  return actor_state_machine::transition(s, to);
}

/// How many changes of an actor's state `transition` refused in this
/// process.
inline std::uint64_t illegal_actor_transitions() noexcept {
  return actor_state_machine::illegal_transitions();
}

} // namespace prism::internal
