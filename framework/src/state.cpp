#include "prism/state.hpp"

#include <array>

#include "prism/detail/runtime.hpp"
#include "prism/error.hpp"
#include "prism/internal/state_query.hpp"

namespace prism::state {

const char* to_string(kind k) noexcept {
  switch (k) {
  case kind::nodes:
    return "nodes";
  case kind::jobs:
    return "jobs";
  case kind::actors:
    return "actors";
  case kind::tasks:
    return "tasks";
  case kind::workers:
    return "workers";
  case kind::objects:
    return "objects";
  }
  return "unknown";
}

std::optional<kind> kind_named(std::string_view name) noexcept {
  for (auto k : all_kinds) {
    std::string_view plural = to_string(k);
    if (name == plural || name == plural.substr(0, plural.size() - 1))
      return k;
  }
  return std::nullopt;
}

const std::vector<std::string>& keys_of(kind k) {
  static const auto keys = [] {
    std::array<std::vector<std::string>, std::size(all_kinds)> result;
    for (auto each : all_kinds)
      for (const auto& c : internal::columns_of(each))
        result[static_cast<std::size_t>(each)].push_back(c.key);
    return result;
  }();
  return keys[static_cast<std::size_t>(k)];
}

const std::string& entry::operator[](std::string_view key) const noexcept {
  static const std::string none;
  for (const auto& [k, v] : fields)
    if (k == key)
      return v;
  return none;
}

page list(kind k, const list_options& options) {
  // Refused here too, so that a bad filter costs no round trip.
  for (const auto& f : options.filters)
    internal::parse_filter(k, f);
  return detail::current_runtime().list_state(k, options);
}

std::optional<entry> get(kind k, const std::string& id) {
  return detail::current_runtime().get_state(k, id);
}

std::vector<count> summarize(kind k, const std::string& group_key) {
  internal::column_index(k, group_key);
  return detail::current_runtime().summarize_state(k, group_key);
}

} // namespace prism::state
