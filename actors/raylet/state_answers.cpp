// A node's part of `prism list|get|summary workers|objects`: its workers and
// the objects of its store as entries, filtered before they are limited
// with the same rules as the control store's lists (state_query.hpp). The
// control store asks every node and merges their pages.

#include <chrono>
#include <map>
#include <set>
#include <string>

#include "prism/internal/state_query.hpp"
#include "protocol/state.hpp"
#include "raylet/raylet_state.hpp"

namespace prism::actors::raylet_internal {

namespace {

using worker = worker_pool::worker;

const char* worker_state(const worker& w) {
  if (w.starting)
    return "STARTING";
  if (w.disconnected)
    return "EXITING";
  if (w.hosts_actor)
    return "HOSTING";
  return w.lease_id != 0 ? "LEASED" : "IDLE";
}

/// Unix milliseconds of a time on the steady clock.
std::int64_t unix_ms_of(std::chrono::steady_clock::time_point t) {
  using namespace std::chrono;
  auto ago = steady_clock::now() - t;
  return duration_cast<milliseconds>(
             (system_clock::now() - ago).time_since_epoch())
      .count();
}

// -- the columns, in the order of internal::columns_of ----------------------

std::string worker_field(const raylet_state& st, const worker& w,
                         std::size_t column) {
  switch (column) {
  case 0:
    return w.id.hex();
  case 1:
    return worker_state(w);
  case 2:
    return w.pid != 0 ? "PROCESS" : "THREAD";
  case 3:
    return st.cfg.node.hex();
  case 4:
    return w.pid != 0 ? std::to_string(w.pid) : std::string{};
  case 5:
    return w.job != job_id{} ? std::to_string(w.job.value) : std::string{};
  case 6:
    return std::to_string(w.actors);
  case 7:
    return w.forked ? "true" : "false";
  case 8:
    return w.started_at == std::chrono::steady_clock::time_point{}
               ? std::string{}
               : internal::iso_time(unix_ms_of(w.started_at));
  default:
    return w.contact;
  }
}

std::string object_field(const raylet_state& st, const object_id& id,
                         const node_object_store::stored_object& o,
                         std::size_t column) {
  switch (column) {
  case 0:
    return id.hex();
  case 1:
    return st.cfg.node.hex();
  case 2:
    return id.task.submitter.hex();
  case 3:
    return id.is_put() ? "PUT" : "TASK_RESULT";
  case 4:
    return std::to_string(o.size);
  default:
    return std::to_string(o.attempt);
  }
}

/// Calls `f(key, field, make)` for each worker or object, as
/// `page_builder::offer` takes them.
template <class F>
void offer_each(const raylet_state& st, state::kind k, F&& f) {
  if (k == state::kind::workers) {
    st.pool.for_each([&](const worker& w) {
      auto field = [&](std::size_t c) { return worker_field(st, w, c); };
      f([&] { return w.id.hex(); }, field,
        [&] { return internal::whole_entry(k, field); });
    });
    return;
  }
  st.objects.for_each(
      [&](const object_id& id, const node_object_store::stored_object& o) {
        auto field = [&](std::size_t c) { return object_field(st, id, o, c); };
        f([&] { return id.hex() + ":" + st.cfg.node.hex(); }, field,
          [&] { return internal::whole_entry(k, field); });
      });
}

bool held_here(state::kind k) {
  return k == state::kind::workers || k == state::kind::objects;
}

detail::error_info not_held(state::kind k) {
  return {errc::invalid_argument,
          std::string{"a node answers for its workers and objects, not its "} +
              state::to_string(k),
          "", ""};
}

} // namespace

protocol::state_page list_node_state(raylet_actor* self,
                                     const protocol::list_state& msg) {
  protocol::state_page result;
  if (!held_here(msg.kind)) {
    result.error = not_held(msg.kind);
    return result;
  }
  try {
    state::list_options o;
    o.filters = msg.filters;
    o.limit = msg.limit;
    o.cursor = msg.cursor;
    internal::page_builder page{msg.kind, o};
    offer_each(self->state, msg.kind,
               [&](auto&& key, auto&& field, auto&& make) {
                 page.offer(key, field, make);
               });
    result.page = page.finish();
  } catch (const prism::error& e) {
    result.error = protocol::error_info_of(e);
  }
  return result;
}

protocol::state_found get_node_state(raylet_actor* self,
                                     const protocol::get_state& msg) {
  protocol::state_found result;
  if (!held_here(msg.kind)) {
    result.error = not_held(msg.kind);
    return result;
  }
  // Every match: the control store tells a prefix that names several
  // apart, and gathers an object's copies.
  offer_each(self->state, msg.kind, [&](auto&&, auto&& field, auto&& make) {
    if (!internal::id_named(field(0), msg.id))
      return;
    auto e = make();
    if (!result.found) {
      result.found = true;
      result.entry = e;
    }
    result.entry.history.push_back(std::move(e.fields));
  });
  return result;
}

protocol::state_counts
summarize_node_state(raylet_actor* self, const protocol::summarize_state& msg) {
  protocol::state_counts result;
  if (!held_here(msg.kind)) {
    result.error = not_held(msg.kind);
    return result;
  }
  try {
    internal::summary_builder counts{msg.kind, msg.group_key};
    auto state_column = internal::column_index(
        msg.kind, msg.kind == state::kind::workers ? "state" : "type");
    offer_each(self->state, msg.kind, [&](auto&&, auto&& field, auto&&) {
      counts.add(field(counts.group_column()), field(state_column));
    });
    result.counts = counts.finish();
  } catch (const prism::error& e) {
    result.error = protocol::error_info_of(e);
  }
  return result;
}

namespace {

/// What ended workers shipped stays in the node's sums, but not by worker:
/// the table keeps an entry per live worker only.
void retire_ended_workers(raylet_actor* self) {
  auto& st = self->state;
  std::set<std::string> alive;
  st.pool.for_each([&](const worker& w) { alive.insert(w.id.hex()); });
  for (const auto& [addr, driver] : st.metric_drivers)
    alive.insert(driver.hex());
  for (const auto& [token, p] : st.instance_processes)
    alive.insert(p.metrics_id.hex());
  st.user_metrics.retire_all_but(alive);
}

} // namespace

protocol::node_metrics node_metrics(raylet_actor* self) {
  auto& st = self->state;
  protocol::node_metrics m;
  m.node = st.cfg.node;
  m.total = st.cfg.resources;
  m.available = st.available;
  std::map<std::string, std::uint64_t> workers;
  st.pool.for_each([&](const worker& w) {
    auto key = std::string{worker_state(w)} +
               (w.pid != 0 || w.starting ? "/process" : "/thread");
    ++workers[key];
  });
  m.workers.assign(workers.begin(), workers.end());
  m.leases_waiting = st.queue.size();
  m.leases_infeasible = node_resources(self).infeasible.size();
  m.leases_granted = st.leases.size();
  m.actors_hosted = st.hosts.size();
  m.objects = st.objects.size();
  m.object_bytes = st.objects.bytes();
  m.object_memory_bytes = st.objects.bytes_in_memory();
  m.spilled_objects = st.objects.spilled_now();
  m.spilled_bytes = st.objects.spilled_bytes_now();
  m.spills = st.objects.totals().spilled_objects;
  m.restores = st.objects.totals().restored_objects;
  m.store_full_waits = st.full_waits;
  m.store_full_errors = st.full_errors;
  m.memory_used = st.memory.used;
  m.memory_limit = st.memory.limit;
  m.memory_kills = st.memory_kills;
  if (st.cfg.output)
    m.output_lines_dropped = st.cfg.output->dropped_lines();
  m.worker_processes_started = st.processes_started;
  m.worker_processes_failed = st.processes_failed;
  retire_ended_workers(self);
  m.user = st.user_metrics.merged();
  m.user_dropped = st.user_metrics.dropped();
  return m;
}

void report_node(raylet_actor* self) {
  auto& st = self->state;
  retire_ended_workers(self);
  self->send(st.cfg.gcs,
             protocol::node_report{st.cfg.node, st.available, st.objects.size(),
                                   st.objects.bytes()});
  self->delayed_send(self, st.cfg.report_interval, report_atom::value);
}

} // namespace prism::actors::raylet_internal
