#pragma once

// What the tests of every state table (tasks, actors, nodes) check the same
// way: which states a table lets a state reach.

#include <set>
#include <vector>

namespace state_table_checks {

/// The states reachable from `start` through the edges that `allowed` (found
/// by argument-dependent lookup, next to `State`) lists, `start` included.
template <class State>
std::set<State> reachable_from(State start, const std::vector<State>& all) {
  std::set<State> seen{start};
  std::vector<State> todo{start};
  while (!todo.empty()) {
    auto s = todo.back();
    todo.pop_back();
    for (auto to : all)
      if (allowed(s, to) && seen.insert(to).second)
        todo.push_back(to);
  }
  return seen;
}

} // namespace state_table_checks
