#include "gcs/state_lists.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <string>

#include "common/output_source.hpp"
#include "gcs/gcs_state.hpp"
#include "prism/error.hpp"
#include "prism/internal/state_query.hpp"

namespace prism::actors::gcs_detail {

namespace {

using internal::iso_time;
using fields = std::vector<std::pair<std::string, std::string>>;

std::string yes_no(bool b) {
  return b ? "true" : "false";
}

/// A job's number, padded so that jobs sort by number.
std::string job_key(job_id id) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%010u", id.value);
  return buf;
}

// -- the columns of each kind, in the order of internal::columns_of --------

std::string node_field(const node_entry& n, std::size_t column) {
  switch (column) {
  case 0:
    return n.info.node.hex();
  case 1:
    return internal::state_name(to_string(n.state));
  case 2:
    return n.info.contact;
  case 3:
    return n.info.resources.to_string();
  case 4: {
    std::string out;
    for (const auto& [k, v] : n.info.labels)
      out += (out.empty() ? "" : ",") + k + "=" + v;
    return out;
  }
  default:
    return std::to_string(n.num_actors);
  }
}

std::string job_field(job_id id, const job_entry& j, std::size_t column) {
  switch (column) {
  case 0:
    return std::to_string(id.value);
  case 1:
    return j.running ? "RUNNING" : "FINISHED";
  case 2:
    return j.ns;
  case 3:
    return internal::hex_or_empty(j.driver);
  case 4:
    return iso_time(j.start_ms);
  default:
    return j.program.path;
  }
}

std::string actor_field(const actor_entry& a, std::size_t column) {
  switch (column) {
  case 0:
    return a.spec.id.hex();
  case 1:
    return actor_class_of(a.spec.factory);
  case 2:
    return internal::state_name(to_string(a.state));
  case 3:
    return a.spec.name;
  case 4:
    return a.spec.ns;
  case 5:
    return std::to_string(a.spec.job.value);
  case 6:
    return internal::hex_or_empty(a.node);
  case 7:
    return a.pid == 0 ? std::string{} : std::to_string(a.pid);
  case 8:
    return std::to_string(a.incarnation);
  case 9:
    return std::to_string(a.spec.max_restarts);
  case 10:
    return yes_no(a.spec.detached);
  case 11:
    return yes_no(a.spec.shared_host);
  case 12:
    return a.death_kind == internal::death_kind::none
               ? std::string{}
               : internal::state_name(to_string(a.death_kind));
  default:
    return a.death_cause;
  }
}

/// An actor's restarts, oldest first.
void add_history(const actor_entry& a, state::entry& e) {
  if (!a.extras)
    return;
  for (const auto& r : a.extras->restarts)
    e.history.push_back(fields{{"restart", std::to_string(r.restart)},
                               {"time", iso_time(r.unix_ms)},
                               {"node_id", internal::hex_or_empty(r.node)},
                               {"cause", r.cause}});
}

/// Calls `visit(key, field, history)` for every entry of `k`, where `key()`
/// gives the text that orders it, `field(column)` a column's value and
/// `history(entry)` adds the entry's history to it.
template <class Visit>
void each_entry(const gcs_state& st, state::kind k, Visit&& visit) {
  auto none = [](state::entry&) {};
  switch (k) {
  case state::kind::nodes:
    for (const auto& [id, n] : st.nodes.entries)
      visit([&id] { return id.hex(); },
            [&n](std::size_t c) { return node_field(n, c); }, none);
    return;
  case state::kind::jobs:
    for (const auto& [id, j] : st.jobs.entries)
      visit([id = id] { return job_key(id); },
            [id = id, &j](std::size_t c) { return job_field(id, j, c); }, none);
    return;
  case state::kind::actors:
    for (const auto& [id, a] : st.actors.entries)
      visit([&id] { return id.hex(); },
            [&a](std::size_t c) { return actor_field(a, c); },
            [&a](state::entry& e) { add_history(a, e); });
    return;
  default:
    // Tasks are the task event store's, workers and objects the nodes'.
    return;
  }
}

} // namespace

protocol::state_page list_state(const gcs_state& st,
                                const protocol::list_state& msg) {
  protocol::state_page result;
  try {
    state::list_options o{msg.filters, static_cast<std::size_t>(msg.limit),
                          msg.cursor};
    internal::page_builder page{msg.kind, o};
    each_entry(st, msg.kind, [&](auto key, auto field, auto) {
      page.offer(key, field,
                 [&] { return internal::whole_entry(msg.kind, field); });
    });
    result.page = page.finish();
  } catch (const prism::error& e) {
    result.error = protocol::error_info_of(e);
  }
  return result;
}

protocol::state_found get_state(const gcs_state& st,
                                const protocol::get_state& msg) {
  protocol::state_found result;
  std::size_t prefixed = 0;
  bool exact = false;
  each_entry(st, msg.kind, [&](auto, auto field, auto history) {
    if (exact)
      return;
    auto id = field(0);
    exact = id == msg.id;
    // A job is named by its number alone: "1" is no prefix of "12".
    if (!exact &&
        (msg.kind == state::kind::jobs || !internal::id_named(id, msg.id)))
      return;
    ++prefixed;
    result.found = true;
    result.entry = internal::whole_entry(msg.kind, field);
    history(result.entry);
  });
  if (!exact && prefixed > 1) {
    result.found = false;
    result.entry = {};
    result.error = {errc::invalid_argument,
                    "'" + msg.id + "' names " + std::to_string(prefixed) + " " +
                        state::to_string(msg.kind) + "; give more of the id",
                    "", ""};
  }
  return result;
}

protocol::state_counts summarize_state(const gcs_state& st,
                                       const protocol::summarize_state& msg) {
  protocol::state_counts result;
  try {
    internal::summary_builder counts{msg.kind, msg.group_key};
    auto state_column = internal::column_index(msg.kind, "state");
    each_entry(st, msg.kind, [&](auto, auto field, auto) {
      counts.add(field(counts.group_column()), field(state_column));
    });
    result.counts = counts.finish();
  } catch (const prism::error& e) {
    result.error = protocol::error_info_of(e);
  }
  return result;
}

} // namespace prism::actors::gcs_detail
