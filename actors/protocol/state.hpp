#pragma once

// What `prism list`, `prism get`, `prism summary` and `prism::state` ask of
// the control store: its nodes, jobs, actors and tasks, filtered before
// they are limited; and the task events owners send it. The control store
// asks each node the same of its workers and objects.

#include <cstdint>
#include <string>
#include <vector>

#include <caf/atom.hpp>

#include "prism/detail/runtime.hpp"
#include "prism/error.hpp"
#include "prism/internal/task_events.hpp"
#include "prism/state.hpp"

namespace prism::state {

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, entry& x) {
  return f(x.fields, x.history);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, count& x) {
  return f(x.group, x.state, x.n);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, page& x) {
  return f(x.entries, x.matched, x.total, x.next_cursor, x.dropped_events,
           x.forgotten_tasks, x.nodes_unanswered);
}

} // namespace prism::state

namespace prism::protocol {

/// A refusal (a bad filter, an ambiguous id) as an answer carries it.
inline detail::error_info error_info_of(const prism::error& e) {
  return {e.code(), e.what(), "", ""};
}

/// anyone -> gcs: a page of a list (see `state::list`). Answered with
/// `state_page`. gcs -> raylet: the same of that node's workers or objects.
struct list_state {
  state::kind kind = state::kind::nodes;
  std::vector<std::string> filters;
  std::uint64_t limit = 100;
  std::string cursor;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, list_state& x) {
  return f(x.kind, x.filters, x.limit, x.cursor);
}

/// The page, or why there is none (`error.code` is not ok: a bad filter).
struct state_page {
  state::page page;
  detail::error_info error;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, state_page& x) {
  return f(x.page, x.error);
}

/// anyone -> gcs: one node, job or actor with its history (see
/// `state::get`). Answered with `state_found`.
struct get_state {
  state::kind kind = state::kind::nodes;
  std::string id;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, get_state& x) {
  return f(x.kind, x.id);
}

struct state_found {
  bool found = false;
  state::entry entry;
  /// Not ok for an id prefix that names several.
  detail::error_info error;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, state_found& x) {
  return f(x.found, x.entry, x.error);
}

/// anyone -> gcs: counts by a key and state (see `state::summarize`).
/// Answered with `state_counts`.
struct summarize_state {
  state::kind kind = state::kind::nodes;
  std::string group_key;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, summarize_state& x) {
  return f(x.kind, x.group_key);
}

struct state_counts {
  std::vector<state::count> counts;
  detail::error_info error;
  /// Workers and objects: the alive nodes that did not answer in time,
  /// whose entries are not counted.
  std::uint64_t nodes_unanswered = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, state_counts& x) {
  return f(x.counts, x.error, x.nodes_unanswered);
}

/// owner -> gcs (-> its task event store): the events an owner recorded
/// since its last batch, how many it dropped meanwhile, and its object
/// transfers.
struct task_events {
  std::vector<internal::task_event> events;
  std::uint64_t dropped = 0;
  /// The reads of objects from other nodes' stores that ended since.
  std::vector<internal::transfer_event> transfers;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, task_events& x) {
  return f(x.events, x.dropped, x.transfers);
}

/// driver -> its owner: record what changed of the tasks in flight and send
/// every event kept, then answer once the control store has them (true),
/// or false past a deadline. owner -> gcs: answered once the events the
/// owner sent before are with the task event store. A driver's job ends
/// after it, so that its last second of tasks is listed.
using flush_events_atom = caf::atom_constant<caf::atom("flushevts")>;

} // namespace prism::protocol
