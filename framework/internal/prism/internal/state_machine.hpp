#pragma once

// A state machine as one table of allowed transitions, and the one function
// that changes a state: it applies what the table allows, and refuses and
// counts everything else, never an abort. Tasks, actors, nodes and
// autoscaler instances each have one (task_state.hpp, actor_state.hpp,
// node_state.hpp, instance_state.hpp).

#include <atomic>
#include <cstdint>
#include <type_traits>

namespace prism::internal {

/// One allowed change of a `State`, and when it happens.
template <class State>
struct state_transition {
  State from;
  State to;
  const char* when;
};

/// Whether every edge of `table` says when it happens.
template <class Table>
constexpr bool every_edge_says_when(const Table& table) noexcept {
  for (const auto& t : table)
    if (t.when == nullptr || t.when[0] == '\0')
      return false;
  return true;
}

/// Whether no edge of `table` is listed twice.
template <class Table>
constexpr bool no_edge_twice(const Table& table) noexcept {
  for (auto i = table.begin(); i != table.end(); ++i)
    for (auto j = i + 1; j != table.end(); ++j)
      if (i->from == j->from && i->to == j->to)
        return false;
  return true;
}

/// The state machine whose allowed changes are `Table`: an `inline
/// constexpr` array of `state_transition` at namespace scope, so that each
/// table is one machine, with one counter, in the whole program.
template <const auto& Table>
class state_machine {
public:
  using state = std::remove_cvref_t<decltype(Table[0].from)>;

  static_assert(every_edge_says_when(Table),
                "an edge of the table does not say when it happens");
  static_assert(no_edge_twice(Table), "an edge of the table is listed twice");

  /// Whether `from -> to` is in the table. A state is not a change to
  /// itself unless the table says so.
  static constexpr bool allowed(state from, state to) noexcept {
    for (const auto& t : Table)
      if (t.from == from && t.to == to)
        return true;
    return false;
  }

  /// Moves `s` to `to` if the table allows it and returns true. Otherwise
  /// leaves `s` as it is, counts the attempt, and returns false: the caller
  /// logs it and applies nothing of the change.
  [[nodiscard]] static bool transition(state& s, state to) noexcept {
    if (!allowed(s, to)) {
      illegal_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    s = to;
    return true;
  }

  /// How many changes `transition` refused in this process.
  static std::uint64_t illegal_transitions() noexcept {
    return illegal_.load(std::memory_order_relaxed);
  }

private:
  static inline std::atomic<std::uint64_t> illegal_{0};
};

} // namespace prism::internal
