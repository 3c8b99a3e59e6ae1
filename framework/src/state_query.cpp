#include "prism/internal/state_query.hpp"

#include <cctype>
#include <ctime>
#include <map>

#include "prism/error.hpp"

namespace prism::internal {

namespace {

/// Columns named `keys`: those in `named` enumerated, those in `numbers`
/// numbers and those in `flags` flags.
std::vector<state_column> columns(std::initializer_list<const char*> keys,
                                  std::initializer_list<const char*> named,
                                  std::initializer_list<const char*> numbers,
                                  std::initializer_list<const char*> flags) {
  auto among = [](std::initializer_list<const char*> set, const char* key) {
    return std::find_if(set.begin(), set.end(), [&](const char* n) {
             return std::string_view{n} == key;
           }) != set.end();
  };
  std::vector<state_column> result;
  for (const auto* k : keys) {
    auto type = among(numbers, k) ? value_type::number
                : among(flags, k) ? value_type::flag
                                  : value_type::text;
    result.push_back({k, among(named, k) || type == value_type::flag, type});
  }
  return result;
}

bool equal_blind(std::string_view a, std::string_view b) noexcept {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string known_keys(state::kind k) {
  std::string out;
  for (const auto& c : columns_of(k))
    out += (out.empty() ? "" : ", ") + c.key;
  return out;
}

} // namespace

const std::vector<state_column>& columns_of(state::kind k) {
  static const std::vector<state_column> nodes =
      columns({"node_id", "state", "address", "resources", "labels", "actors"},
              {"state"}, {"actors"}, {});
  static const std::vector<state_column> jobs = columns(
      {"job_id", "state", "namespace", "driver_id", "start_time", "program"},
      {"state"}, {"job_id"}, {});
  static const std::vector<state_column> actors = columns(
      {"actor_id", "class_name", "state", "name", "namespace", "job_id",
       "node_id", "pid", "restarts", "max_restarts", "detached", "shared",
       "death_kind", "death_cause"},
      {"state", "death_kind"}, {"job_id", "pid", "restarts", "max_restarts"},
      {"detached", "shared"});
  static const std::vector<state_column> tasks = columns(
      {"task_id", "name", "state", "type", "actor_id", "job_id", "attempt",
       "node_id", "worker_id", "pid", "error", "submit_time", "start_time",
       "end_time", "duration_ms"},
      {"state", "type"}, {"job_id", "attempt", "pid", "duration_ms"}, {});
  static const std::vector<state_column> workers =
      columns({"worker_id", "state", "type", "node_id", "pid", "job_id",
               "actors", "forked", "start_time", "address"},
              {"state", "type"}, {"pid", "job_id", "actors"}, {"forked"});
  static const std::vector<state_column> objects = columns(
      {"object_id", "node_id", "owner_id", "type", "size_bytes", "attempt"},
      {"type"}, {"size_bytes", "attempt"}, {});
  switch (k) {
  case state::kind::nodes:
    return nodes;
  case state::kind::jobs:
    return jobs;
  case state::kind::actors:
    return actors;
  case state::kind::tasks:
    return tasks;
  case state::kind::workers:
    return workers;
  case state::kind::objects:
    break;
  }
  return objects;
}

std::string sort_key_of(state::kind k, const state::entry& e) {
  if (e.fields.empty())
    return {};
  // An object has a copy on each of several nodes, one entry each.
  if (k == state::kind::objects && e.fields.size() > 1)
    return e.fields[0].second + ":" + e.fields[1].second;
  return e.fields[0].second;
}

state::page merge_pages(state::kind k, std::vector<state::page> pages,
                        std::size_t limit) {
  state::page result;
  std::vector<std::pair<std::string, state::entry>> all;
  bool more = false;
  for (auto& p : pages) {
    result.matched += p.matched;
    result.total += p.total;
    result.dropped_events += p.dropped_events;
    result.forgotten_tasks += p.forgotten_tasks;
    result.nodes_unanswered += p.nodes_unanswered;
    more = more || !p.next_cursor.empty();
    for (auto& e : p.entries) {
      auto key = sort_key_of(k, e);
      all.emplace_back(std::move(key), std::move(e));
    }
  }
  std::sort(all.begin(), all.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  if (limit != 0 && all.size() > limit) {
    all.resize(limit);
    more = true;
  }
  // Each page holds its first entries after the cursor: the first `limit`
  // of them all are the first of their union, and any entry beyond lies
  // after the last kept.
  if (more && !all.empty())
    result.next_cursor = all.back().first;
  result.entries.reserve(all.size());
  for (auto& [key, e] : all)
    result.entries.push_back(std::move(e));
  return result;
}

std::size_t column_index(state::kind k, std::string_view key) {
  const auto& cs = columns_of(k);
  for (std::size_t i = 0; i < cs.size(); ++i)
    if (cs[i].key == key)
      return i;
  throw invalid_argument_error("the " + std::string{state::to_string(k)} +
                               " have no key '" + std::string{key} +
                               "'; their keys are " + known_keys(k));
}

bool state_filter::passes(std::string_view field) const noexcept {
  if (contains)
    return value.empty() ||
           std::search(field.begin(), field.end(), value.begin(), value.end(),
                       [](char x, char y) {
                         return std::tolower(static_cast<unsigned char>(x)) ==
                                std::tolower(static_cast<unsigned char>(y));
                       }) != field.end();
  bool same = blind_case ? equal_blind(field, value) : field == value;
  return same == equal;
}

state_filter parse_filter(state::kind k, std::string_view text) {
  auto at = text.find('=');
  if (at == std::string_view::npos || at == 0 ||
      (at == 1 && (text[0] == '!' || text[0] == '~')))
    throw invalid_argument_error("filter '" + std::string{text} +
                                 "' is not key=value, key!=value or "
                                 "key~=part");
  state_filter f;
  auto key = text.substr(0, at);
  if (key.back() == '!') {
    f.equal = false;
    key.remove_suffix(1);
  } else if (key.back() == '~') {
    f.contains = true;
    key.remove_suffix(1);
  }
  f.column = column_index(k, key);
  f.value = std::string{text.substr(at + 1)};
  f.blind_case = columns_of(k)[f.column].enumerated;
  return f;
}

page_builder::page_builder(state::kind k, const state::list_options& options)
    : limit_(options.limit), cursor_(options.cursor) {
  for (const auto& text : options.filters)
    filters_.push_back(parse_filter(k, text));
}

state::page page_builder::finish() {
  std::sort_heap(kept_.begin(), kept_.end(), by_key);
  state::page result;
  result.matched = matched_;
  result.total = total_;
  if (after_cursor_ > kept_.size() && !kept_.empty())
    result.next_cursor = kept_.back().first;
  result.entries.reserve(kept_.size());
  for (auto& [key, e] : kept_)
    result.entries.push_back(std::move(e));
  kept_.clear();
  return result;
}

summary_builder::summary_builder(state::kind k, std::string_view group_key)
    : group_(column_index(k, group_key)) {}

void summary_builder::add(std::string group, std::string state) {
  ++counts_[{std::move(group), std::move(state)}];
}

std::vector<state::count> summary_builder::finish() {
  std::vector<state::count> result;
  result.reserve(counts_.size());
  for (auto& [key, n] : counts_)
    result.push_back({key.first, key.second, n});
  counts_.clear();
  return result;
}

bool id_named(std::string_view id, std::string_view wanted) noexcept {
  if (wanted.empty())
    return false;
  if (id == wanted)
    return true;
  return wanted.size() >= 4 && id.substr(0, wanted.size()) == wanted;
}

std::string state_name(std::string_view name) {
  std::string s{name};
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) {
    return static_cast<char>(std::toupper(c));
  });
  return s;
}

std::string hex_or_empty(const unique_id& id) {
  return id.nil() ? std::string{} : id.hex();
}

std::string iso_time(std::int64_t unix_ms) {
  if (unix_ms == 0)
    return {};
  auto t = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[40];
  auto n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(buf + n, sizeof buf - n, ".%03dZ",
                static_cast<int>(unix_ms % 1000));
  return buf;
}

} // namespace prism::internal
