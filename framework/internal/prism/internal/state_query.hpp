#pragma once

// The rules of `prism list`, without an actor: filters parsed against a
// kind's keys, applied before the limit, and a page gathered in order of id
// after a cursor. Whoever holds the entries (the control store) offers each
// one; only the filtered fields are read of every entry, and only the kept
// ones are made whole.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "prism/ids.hpp"
#include "prism/state.hpp"

namespace prism::internal {

/// What a column's values are, for JSON (each is text in an entry).
enum class value_type : std::uint8_t { text, number, flag };

/// One key of a kind's entries.
struct state_column {
  std::string key;
  /// Its values are names from a fixed set (a state): filters on it do not
  /// mind case.
  bool enumerated = false;
  value_type type = value_type::text;
};

/// The columns of `k`, in table order; the first is the id.
const std::vector<state_column>& columns_of(state::kind k);

/// The index of `key` among the columns of `k`. Throws
/// `invalid_argument_error` naming the keys `k` has if it is none.
std::size_t column_index(state::kind k, std::string_view key);

/// An entry of `k` with every column, `field(column)` giving each value.
template <class Field>
state::entry whole_entry(state::kind k, Field&& field) {
  state::entry e;
  const auto& cs = columns_of(k);
  e.fields.reserve(cs.size());
  for (std::size_t i = 0; i < cs.size(); ++i)
    e.fields.emplace_back(cs[i].key, field(i));
  return e;
}

/// One parsed filter: the column it reads, and the value it wants there
/// (`equal`) or anywhere but there; or, with `contains`, a part of the
/// value it wants there, in any case.
struct state_filter {
  std::size_t column = 0;
  bool equal = true;
  std::string value;
  bool blind_case = false;
  bool contains = false;

  bool passes(std::string_view field) const noexcept;
};

/// Parses "key=value", "key!=value" or "key~=part" against the keys of `k`.
/// Throws `invalid_argument_error` saying what is wrong.
state_filter parse_filter(state::kind k, std::string_view text);

/// Gathers one page of a list: counts every entry offered, keeps those that
/// pass the filters and lie after the cursor, the first `limit` of them by
/// sort key.
class page_builder {
public:
  /// Throws `invalid_argument_error` for a bad filter.
  page_builder(state::kind k, const state::list_options& options);

  /// Offers one entry: `key()` gives the text that orders it (and is the
  /// cursor of a page ending with it); `field(column)` the value of a
  /// column; `make()` the whole entry. Only the filtered columns are read
  /// of every entry; the key only of those that pass, and the whole entry
  /// only of those kept for now.
  template <class Key, class Field, class Make>
  void offer(Key&& key, Field&& field, Make&& make) {
    ++total_;
    for (const auto& f : filters_)
      if (!f.passes(field(f.column)))
        return;
    ++matched_;
    std::string sort_key = key();
    if (!cursor_.empty() && sort_key <= cursor_)
      return;
    ++after_cursor_;
    if (limit_ != 0 && kept_.size() == limit_) {
      if (!(sort_key < kept_.front().first))
        return;
      std::pop_heap(kept_.begin(), kept_.end(), by_key);
      kept_.pop_back();
    }
    kept_.emplace_back(std::move(sort_key), make());
    std::push_heap(kept_.begin(), kept_.end(), by_key);
  }

  /// The page, in order of sort key; the builder is spent.
  state::page finish();

private:
  using kept_entry = std::pair<std::string, state::entry>;

  static bool by_key(const kept_entry& a, const kept_entry& b) {
    return a.first < b.first;
  }

  std::vector<state_filter> filters_;
  std::size_t limit_;
  std::string cursor_;
  std::uint64_t total_ = 0;
  std::uint64_t matched_ = 0;
  std::uint64_t after_cursor_ = 0;
  /// A max-heap by sort key while offers come, sorted by `finish`.
  std::vector<kept_entry> kept_;
};

/// The text that orders an entry of `k` and is the cursor of a page ending
/// with it: its id; an object's id and node (one entry per copy).
std::string sort_key_of(state::kind k, const state::entry& e);

/// One page of the pages of several holders (each node's, for workers and
/// objects), each gathered with the same options: the first `limit` of
/// their entries by sort key, with their counts summed.
state::page merge_pages(state::kind k, std::vector<state::page> pages,
                        std::size_t limit);

/// Counts entries by the value of one column and their state, for
/// `prism summary`.
class summary_builder {
public:
  /// Throws `invalid_argument_error` if `k` has no key `group_key`.
  summary_builder(state::kind k, std::string_view group_key);

  /// The column to pass to `add` as the group.
  std::size_t group_column() const noexcept {
    return group_;
  }

  void add(std::string group, std::string state);

  /// The counts, by group then state.
  std::vector<state::count> finish();

private:
  std::size_t group_;
  std::map<std::pair<std::string, std::string>, std::uint64_t> counts_;
};

/// Whether `id` is named by `wanted`: equal, or (4 characters or more)
/// its prefix.
bool id_named(std::string_view id, std::string_view wanted) noexcept;

/// A state's name as lists show it: "alive" as "ALIVE".
std::string state_name(std::string_view name);

/// `id` in hex; empty for the nil id.
std::string hex_or_empty(const unique_id& id);

/// Unix milliseconds as UTC ISO 8601 ("2026-11-27T06:14:39.120Z"); empty
/// for 0.
std::string iso_time(std::int64_t unix_ms);

} // namespace prism::internal
