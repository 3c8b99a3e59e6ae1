#pragma once

// The life of a node at the control store, as one table of allowed
// transitions. Every change of a node's state goes through `transition`,
// which checks the table: an impossible change is refused, counted and
// reported to the caller (which logs it), never an abort. A node begins
// alive when it joins, or in the state its record holds (awaited if it was
// alive, else dead) when the control store recovers it from storage: a
// beginning, not a change.

#include <array>
#include <cstddef>
#include <cstdint>

#include "prism/internal/state_machine.hpp"

namespace prism::internal {

enum class node_state : std::uint8_t {
  /// Registered; the control store watches its raylet.
  alive,
  /// Alive before the control store restarted, and not registered since:
  /// neither known alive nor dead yet. Only a recovery begins here.
  awaited,
  /// Its raylet went down, or it did not come back after a restart of the
  /// control store. Final: it is fenced, and a raylet started again joins
  /// as a new node.
  dead,
};

inline constexpr std::size_t num_node_states = 3;

/// A short, stable name, e.g. "awaited".
inline const char* to_string(node_state s) {
  switch (s) {
  case node_state::alive:
    return "alive";
  case node_state::awaited:
    return "awaited";
  case node_state::dead:
    return "dead";
  }
  return "unknown";
}

/// One allowed change and when it happens.
using node_transition = state_transition<node_state>;

/// Every allowed change. Nothing leaves `dead`, and nothing enters
/// `awaited`.
inline constexpr std::array<node_transition, 3> node_transitions{{
    {node_state::alive, node_state::dead,
     "its raylet went down (its process or connection ended, or it stopped "
     "answering)"},
    {node_state::awaited, node_state::alive,
     "it registered again after the control store restarted"},
    {node_state::awaited, node_state::dead,
     "it did not register again before the grace period after a restart of "
     "the control store ended"},
}};

using node_state_machine = state_machine<node_transitions>;

/// Whether `from -> to` is in the table.
constexpr bool allowed(node_state from, node_state to) noexcept {
  return node_state_machine::allowed(from, to);
}

/// Whether nothing leaves `s`.
constexpr bool is_final(node_state s) noexcept {
  return s == node_state::dead;
}

/// Moves `s` to `to` if the table allows it and returns true. Otherwise
/// leaves `s` as it is, counts the attempt, and returns false.
[[nodiscard]] inline bool transition(node_state& s, node_state to) noexcept {
  return node_state_machine::transition(s, to);
}

/// How many changes of a node's state `transition` refused in this process.
inline std::uint64_t illegal_node_transitions() noexcept {
  return node_state_machine::illegal_transitions();
}

} // namespace prism::internal
