#include "gcs/recovery.hpp"

#include <algorithm>
#include <iterator>

#include <caf/all.hpp>

#include "gcs/actor_record.hpp"
#include "gcs/gcs_state.hpp"

namespace prism::actors::gcs_detail {

namespace {

void report_repairs(gcs_state& st, const persistence::repair_report& report) {
  for (auto& r : report.repairs)
    st.log->warn("recovery {} {} record {}: {}", to_string(r.what), r.table,
                 r.key, r.reason);
}

void recover_jobs(gcs_actor* self, std::vector<persistence::job_record>& jobs,
                  bool fresh) {
  auto& st = self->state.jobs;
  for (auto& r : jobs) {
    auto& j = st.entries[r.job];
    j = job_entry{r.driver, r.ns, !r.finished, r.start_ms,
                  protocol::job_program{r.program_path, r.program_args,
                                        r.program_sha256, r.program_size}};
    st.next_job = std::max(st.next_job, r.job.value + 1);
    if (fresh && j.running) {
      j.running = false;
      save_job(self, r.job, j);
    }
  }
}

void recover_nodes(gcs_actor* self,
                   std::vector<persistence::node_record>& nodes, bool fresh) {
  auto& st = self->state.nodes;
  for (auto& r : nodes) {
    if (fresh) {
      // The nodes of a stopped cluster never come back; the new ones have
      // new ids.
      persistence::write_batch b;
      b.del_node(r.node);
      commit(self, std::move(b));
      continue;
    }
    auto& n = st.entries[r.node];
    // Its raylet, address and labels come with its registration.
    n.info =
        protocol::node_info{r.node,        internal::resource_set{r.resources},
                            caf::actor{},  false,
                            std::string{}, {}};
    n.actor_available = n.info.resources;
    restore_state(self, n, r.alive);
  }
}

/// Fills `a` from its record; false if its creation spec is unreadable (the
/// spec then holds what the record says of it).
bool restore_actor(actor_entry& a, persistence::actor_record& r) {
  restore_state(a, from_record(r.state));
  a.incarnation = r.num_restarts;
  a.death_kind = from_record(r.death_kind);
  a.death_cause = r.death_cause;
  a.node = r.node;
  if (!r.restarts.empty())
    extras_of(a).restarts.assign(std::make_move_iterator(r.restarts.begin()),
                                 std::make_move_iterator(r.restarts.end()));
  auto spec = decode_spec(r.creation_spec);
  if (spec) {
    a.spec = std::move(*spec);
    return true;
  }
  extras_of(a).unreadable_spec = std::move(r.creation_spec);
  a.spec.id = r.actor;
  a.spec.job = r.job;
  a.spec.name = r.name;
  a.spec.ns = r.ns;
  a.spec.detached = r.detached;
  a.spec.owner = r.owner;
  return false;
}

/// Decides what becomes of a recovered actor that was not dead.
void revive_actor(gcs_actor* self, actor_entry& a, bool readable, bool fresh) {
  auto& st = self->state;
  if (!readable) {
    mark_dead(self, a, internal::death_kind::lost,
              "its creation spec in the control store is unreadable");
  } else if (fresh && !a.spec.detached) {
    mark_dead(self, a, internal::death_kind::job_ended,
              "its job ended when the cluster stopped");
  } else if (fresh) {
    // Stopped with the cluster, not failed: it comes back without using
    // a restart.
    if (a.state == actor_state::alive &&
        !set_state(self, a, actor_state::restarting))
      return;
    save_actor(self, a);
    st.actors.unplaced.push_back(a.spec.id);
  } else {
    a.recovering = true;
    if (!a.spec.detached)
      st.recovery.unclaimed.insert(a.spec.id);
  }
}

void recover_actors(gcs_actor* self,
                    std::vector<persistence::actor_record>& actors,
                    bool fresh) {
  for (auto& r : actors) {
    auto& a = self->state.actors.entries[r.actor];
    bool readable = restore_actor(a, r);
    if (a.state == actor_state::dead) {
      remember_dead(self, a.spec.id);
      continue;
    }
    revive_actor(self, a, readable, fresh);
  }
}

} // namespace

void recover(gcs_actor* self, const gcs_config& cfg) {
  auto& st = self->state;
  auto rec = st.durability.storage->take_recovered();
  report_repairs(st, rec.report);
  bool fresh = cfg.start == gcs_start::fresh_cluster;
  auto& t = rec.tables;
  for (auto& r : t.kv)
    st.kv.values[{std::move(r.ns), std::move(r.key)}] = std::move(r.value);
  recover_applied(self, t.requests);
  recover_jobs(self, t.jobs, fresh);
  recover_lineage(self, t.lineage);
  recover_nodes(self, t.nodes, fresh);
  for (auto& r : t.named_actors)
    st.actors.named[{r.ns, r.name}] = r.actor;
  recover_actors(self, t.actors, fresh);
  st.log->info("recovered {} jobs, {} nodes, {} actors, {} keys from {}",
               t.jobs.size(), t.nodes.size(), t.actors.size(), t.kv.size(),
               st.durability.storage->path());
  if (!fresh) {
    st.recovery.active = true;
    self->delayed_send(self, cfg.recovery_grace, grace_atom::value);
  }
}

namespace {

/// The nodes still awaited did not register again: they are dead.
void end_awaiting_nodes(gcs_actor* self) {
  auto& st = self->state;
  bool changed = false;
  for (auto& [id, n] : st.nodes.entries)
    if (n.state == node_state::awaited &&
        set_state(self, n, node_state::dead)) {
      changed = true;
      st.log->warn("node {} did not register again after the control store "
                   "restarted; it is dead",
                   id.hex());
      save_node(self, n);
    }
  if (changed)
    broadcast_view(self);
}

} // namespace

void end_grace(gcs_actor* self) {
  auto& st = self->state;
  if (!st.recovery.active)
    return;
  st.recovery.active = false;
  end_awaiting_nodes(self);
  settle_missing(self, node_id{},
                 "its node did not come back after the control store "
                 "restarted");
  end_unwatched_jobs(self);
  auto unclaimed = std::move(st.recovery.unclaimed);
  st.recovery.unclaimed.clear();
  for (auto& id : unclaimed)
    if (auto a = st.actors.entries.find(id); a != st.actors.entries.end())
      mark_dead(self, a->second, internal::death_kind::owner_died,
                "its owner did not report back after the control store "
                "restarted");
}

void settle(gcs_actor* self, actor_entry& a, const std::string& why) {
  if (!a.recovering)
    return;
  a.recovering = false;
  if (a.state == actor_state::alive) {
    instance_lost(self, a, why);
    return;
  }
  save_actor(self, a);
  publish(self, a);
  place(self, a);
}

void settle_missing(gcs_actor* self, const node_id& node,
                    const std::string& why) {
  for (auto& [id, a] : self->state.actors.entries)
    if (a.recovering && (node.nil() || a.node == node))
      settle(self, a, why);
}

} // namespace prism::actors::gcs_detail
