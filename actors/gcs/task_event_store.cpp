#include "gcs/task_event_store.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <deque>
#include <string>

#include <caf/all.hpp>

#include "common/default_handlers.hpp"
#include "common/log.hpp"
#include "prism/error.hpp"
#include "prism/internal/state_query.hpp"
#include "prism/internal/task_events.hpp"
#include "protocol/metrics.hpp"
#include "protocol/state.hpp"
#include "protocol/timeline.hpp"

namespace prism::actors {

namespace {

using internal::task_attempt;
using internal::task_record;
using internal::task_table;

struct task_event_store_state {
  static inline const char* name = "task_event_store";

  std::shared_ptr<spdlog::logger> log;
  task_table table{0};
  /// The object transfers between nodes, oldest first: at most
  /// `max_transfers`, the oldest forgotten first.
  std::deque<internal::transfer_event> transfers;
  std::uint64_t forgotten_transfers = 0;
};

/// The object transfers the store keeps: about 100 bytes each.
constexpr std::size_t max_transfers = 100'000;

void keep_transfers(task_event_store_state& st,
                    std::vector<internal::transfer_event>& batch) {
  for (auto& t : batch)
    st.transfers.push_back(std::move(t));
  while (st.transfers.size() > max_transfers) {
    st.transfers.pop_front();
    ++st.forgotten_transfers;
  }
}

using store_actor = caf::stateful_actor<task_event_store_state>;

std::string upper_name(internal::task_state s) {
  return internal::state_name(internal::to_string(s));
}

std::string time_of(std::int64_t unix_us) {
  return internal::iso_time(unix_us / 1000);
}

std::string duration_of(const task_attempt& a) {
  if (a.start_us == 0 || a.end_us == 0)
    return {};
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f",
                static_cast<double>(a.end_us - a.start_us) / 1000.0);
  return buf;
}

/// A column of a task (internal::columns_of(kind::tasks)); its latest
/// attempt says where and how it ran.
std::string task_field(const task_table& table, const task_record& r,
                       std::size_t column) {
  const auto& a = r.latest;
  switch (column) {
  case 0:
    return r.id.hex();
  case 1:
    return table.name_of(r);
  case 2:
    return upper_name(r.state);
  case 3:
    return r.actor.nil() ? "NORMAL_TASK" : "ACTOR_TASK";
  case 4:
    return internal::hex_or_empty(r.actor);
  case 5:
    return r.job.value == 0 ? std::string{} : std::to_string(r.job.value);
  case 6:
    return std::to_string(a.attempt);
  case 7:
    return internal::hex_or_empty(a.node);
  case 8:
    return internal::hex_or_empty(a.worker);
  case 9:
    return a.pid == 0 ? std::string{} : std::to_string(a.pid);
  case 10:
    return a.error;
  case 11:
    return time_of(r.submit_us);
  case 12:
    return time_of(a.start_us);
  case 13:
    return time_of(a.end_us);
  default:
    return duration_of(a);
  }
}

/// Every attempt of `r`, oldest first.
void add_attempts(const task_record& r, state::entry& e) {
  r.each_attempt([&](const task_attempt& a) {
    e.history.push_back({{"attempt", std::to_string(a.attempt)},
                         {"state", upper_name(a.state)},
                         {"node_id", internal::hex_or_empty(a.node)},
                         {"worker_id", internal::hex_or_empty(a.worker)},
                         {"pid", a.pid == 0 ? "" : std::to_string(a.pid)},
                         {"start_time", time_of(a.start_us)},
                         {"end_time", time_of(a.end_us)},
                         {"duration_ms", duration_of(a)},
                         {"error", a.error}});
  });
}

protocol::state_page list_tasks(const task_table& table,
                                const protocol::list_state& msg) {
  protocol::state_page result;
  try {
    state::list_options o{msg.filters, static_cast<std::size_t>(msg.limit),
                          msg.cursor};
    internal::page_builder page{state::kind::tasks, o};
    table.each([&](const task_record& r) {
      auto field = [&](std::size_t c) { return task_field(table, r, c); };
      page.offer(
          [&] { return r.id.hex(); }, field,
          [&] { return internal::whole_entry(state::kind::tasks, field); });
    });
    result.page = page.finish();
  } catch (const prism::error& e) {
    result.error = protocol::error_info_of(e);
  }
  result.page.dropped_events = table.dropped();
  result.page.forgotten_tasks = table.forgotten();
  return result;
}

protocol::state_found get_task(const task_table& table,
                               const protocol::get_state& msg) {
  protocol::state_found result;
  const task_record* exact = nullptr;
  const task_record* prefixed = nullptr;
  std::size_t named = 0;
  table.each([&](const task_record& r) {
    if (exact != nullptr)
      return;
    auto id = r.id.hex();
    if (id == msg.id) {
      exact = &r;
    } else if (internal::id_named(id, msg.id)) {
      prefixed = &r;
      ++named;
    }
  });
  if (exact == nullptr && named > 1) {
    result.error = {errc::invalid_argument,
                    "'" + msg.id + "' names " + std::to_string(named) +
                        " tasks; give more of the id",
                    "", ""};
    return result;
  }
  const auto* r = exact != nullptr ? exact : prefixed;
  if (r == nullptr)
    return result;
  result.found = true;
  result.entry = internal::whole_entry(state::kind::tasks, [&](std::size_t c) {
    return task_field(table, *r, c);
  });
  add_attempts(*r, result.entry);
  return result;
}

protocol::state_counts summarize_tasks(const task_table& table,
                                       const protocol::summarize_state& msg) {
  protocol::state_counts result;
  try {
    internal::summary_builder counts{state::kind::tasks, msg.group_key};
    table.each([&](const task_record& r) {
      counts.add(task_field(table, r, counts.group_column()),
                 upper_name(r.state));
    });
    result.counts = counts.finish();
  } catch (const prism::error& e) {
    result.error = protocol::error_info_of(e);
  }
  return result;
}

protocol::task_metrics task_figures(const task_table& table) {
  protocol::task_metrics m;
  m.tasks = summarize_tasks(
                table, protocol::summarize_state{state::kind::tasks, "name"})
                .counts;
  m.scheduling = table.scheduling();
  m.running = table.running();
  m.events_dropped = table.dropped();
  m.tasks_forgotten = table.forgotten();
  return m;
}

/// Most tasks on one page of the timeline, whatever a query asks.
constexpr std::uint64_t max_timeline_page = 50000;

protocol::timeline_page timeline_of(const task_event_store_state& st,
                                    const protocol::timeline_query& q) {
  const auto& table = st.table;
  protocol::timeline_page page;
  page.dropped_events = table.dropped();
  page.forgotten_tasks = table.forgotten();
  page.forgotten_transfers = st.forgotten_transfers;
  if (q.cursor == 0)
    for (const auto& t : st.transfers)
      if ((q.job == 0 || t.job.value == q.job) && t.end_us >= q.since_us)
        page.transfers.push_back(t);
  // A cursor counts every task ever made, forgotten ones included, so that
  // it keeps its place while the oldest are forgotten.
  std::size_t first = 0;
  if (q.cursor > 0 && q.cursor - 1 > table.forgotten())
    first = static_cast<std::size_t>(q.cursor - 1 - table.forgotten());
  auto limit = std::clamp<std::uint64_t>(q.limit, 1, max_timeline_page);
  auto i = first;
  table.each_from(first, [&](const task_record& r) {
    ++i;
    if (q.job != 0 && r.job.value != q.job)
      return true;
    // A task of the span: submitted, started or ended in it, or still
    // running.
    bool running = r.latest.start_us != 0 && r.latest.end_us == 0;
    if (q.since_us != 0 && r.submit_us < q.since_us &&
        r.latest.start_us < q.since_us && r.latest.end_us < q.since_us &&
        !running)
      return true;
    protocol::timeline_entry e;
    e.id = r.id;
    e.name = table.name_of(r);
    e.submit_us = r.submit_us;
    e.actor = r.actor;
    r.each_attempt([&](const task_attempt& a) { e.attempts.push_back(a); });
    page.tasks.push_back(std::move(e));
    if (page.tasks.size() < limit)
      return true;
    page.next = 1 + table.forgotten() + i;
    return false;
  });
  return page;
}

caf::behavior task_event_store(store_actor* self, std::size_t max_tasks) {
  auto& st = self->state;
  st.log = component_logger("gcs");
  st.table = task_table{max_tasks};
  install_default_handlers(self, st.log);
  return {
      [self](protocol::task_events& msg) {
        auto& table = self->state.table;
        table.apply_batch(msg.events);
        table.add_dropped(msg.dropped);
        keep_transfers(self->state, msg.transfers);
      },
      [self](const protocol::list_state& msg) {
        return list_tasks(self->state.table, msg);
      },
      [self](const protocol::get_state& msg) {
        return get_task(self->state.table, msg);
      },
      [self](const protocol::summarize_state& msg) {
        return summarize_tasks(self->state.table, msg);
      },
      [self](const protocol::query_task_metrics&) {
        return task_figures(self->state.table);
      },
      [self](const protocol::timeline_query& q) {
        return timeline_of(self->state, q);
      },
  };
}

} // namespace

caf::actor spawn_task_event_store(caf::actor_system& sys,
                                  std::size_t max_tasks) {
  return sys.spawn<caf::detached>(task_event_store, max_tasks);
}

} // namespace prism::actors
