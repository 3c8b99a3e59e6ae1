#pragma once

// The state of the cluster, exact, as lists: its nodes, jobs, actors and
// tasks, as the control store knows them, and its worker processes and
// stored objects, as each node knows its own; for tests and tools that need
// no command line (`prism list`, `prism get` and `prism summary` print the
// same).
//
//   prism::state::list_options o;
//   o.filters = {"state=ALIVE", "class_name!=Counter"};
//   auto page = prism::state::list(prism::state::kind::actors, o);
//   // page.entries: the first 100 that match, by id; page.matched: how
//   // many match in all; page.next_cursor: where the next page starts.
//   for (const auto& a : page.entries)
//     std::cout << a["actor_id"] << " " << a["state"] << "\n";
//
//   auto one = prism::state::get(prism::state::kind::actors, id.hex());
//   // one->history: each restart, with its death cause
//
// Filters apply before the limit, so a page never says "nothing" while
// matching entries exist beyond it. Each call is a round trip to the control
// store; while it restarts, calls wait up to
// `config::gcs_reconnect_timeout_ms`, then throw `gcs_unavailable_error`.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace prism::state {

/// What a list holds.
enum class kind : std::uint8_t { nodes, jobs, actors, tasks, workers, objects };

/// Every kind, in the order above.
inline constexpr kind all_kinds[] = {kind::nodes, kind::jobs,    kind::actors,
                                     kind::tasks, kind::workers, kind::objects};

/// "nodes", "jobs", "actors", "tasks", "workers" or "objects".
const char* to_string(kind k) noexcept;

/// The kind named `name` ("actors", or "actor"); nullopt for no kind.
std::optional<kind> kind_named(std::string_view name) noexcept;

/// The keys an entry of `k` has, in the order a table shows them; the first
/// is its id, by which lists are ordered.
const std::vector<std::string>& keys_of(kind k);

/// One node, job, actor or task: its fields by key, in the order of
/// `keys_of`.
struct entry {
  std::vector<std::pair<std::string, std::string>> fields;
  /// Filled by `get` only: an actor's restarts, oldest first, each with
  /// when, where and why its instance was lost; a task's attempts, each
  /// with its node, worker, error and times.
  std::vector<std::vector<std::pair<std::string, std::string>>> history;

  /// The value of `key`; empty if the entry has no such field.
  const std::string& operator[](std::string_view key) const noexcept;
};

struct list_options {
  /// Each "key=value", "key!=value" or "key~=part"; an entry is listed if
  /// it passes every one. Values are compared exactly, except a state's,
  /// whose case does not matter ("state=alive"); "~=" wants `part` anywhere
  /// in the value, in any case ("class_name~=count").
  std::vector<std::string> filters;
  /// At most this many entries (0: as many as match).
  std::size_t limit = 100;
  /// Where to start: a page's `next_cursor`; empty for the first page.
  std::string cursor;
};

/// A page of a list: filtered first, then limited, in order of id.
struct page {
  std::vector<entry> entries;
  /// How many entries pass the filters, on every page.
  std::uint64_t matched = 0;
  /// How many entries there are before filtering.
  std::uint64_t total = 0;
  /// Pass as `list_options::cursor` for the next page; empty on the last.
  std::string next_cursor;
  /// Tasks only: events lost before the control store got them (a
  /// process's buffer was full), and tasks it forgot to keep within its
  /// bound (the oldest first). Tasks are exact only while both are 0.
  std::uint64_t dropped_events = 0;
  std::uint64_t forgotten_tasks = 0;
  /// Workers and objects only (each node answers for its own): the alive
  /// nodes that did not answer in time. Their entries are in neither the
  /// page nor its counts; the page is exact only while this is 0.
  std::uint64_t nodes_unanswered = 0;
};

/// A page of the entries of `k` that pass `options.filters`. Throws
/// `invalid_argument_error` for a malformed filter or a key `k` does not
/// have (the message lists the keys), and `gcs_unavailable_error` if the
/// control store did not answer in time.
[[nodiscard]] page list(kind k, const list_options& options = {});

/// The node, job, actor or task whose id is `id` (hex, or a job's number),
/// with its history; nullopt if the control store does not know it. An id
/// prefix of at least 4 characters is enough if it names one entry alone.
/// Throws as `list` does, and `invalid_argument_error` for a prefix that
/// names several.
[[nodiscard]] std::optional<entry> get(kind k, const std::string& id);

/// How many entries of `k` there are for each value of `group_key` and
/// state, e.g. actors by "class_name": the counts, ordered by group then
/// state. Throws as `list` does.
struct count {
  std::string group;
  std::string state;
  std::uint64_t n = 0;
};
[[nodiscard]] std::vector<count> summarize(kind k,
                                           const std::string& group_key);

} // namespace prism::state
