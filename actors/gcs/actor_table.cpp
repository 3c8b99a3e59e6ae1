#include "gcs/actor_table.hpp"

#include <algorithm>
#include <chrono>

#include <caf/all.hpp>

#include "gcs/actor_record.hpp"
#include "gcs/gcs_state.hpp"

namespace prism::actors::gcs_detail {

// -- state --------------------------------------------------------------------

bool set_state(gcs_actor* self, actor_entry& a, actor_state to) {
  auto from = a.state;
  if (internal::transition(a.state, to))
    return true;
  self->state.log->error("actor {}: impossible change {} -> {}, ignored",
                         a.spec.id.hex(), internal::to_string(from),
                         internal::to_string(to));
  return false;
}

void restore_state(actor_entry& a, actor_state stored) {
  a.state = stored;
}

// -- updates ------------------------------------------------------------------

protocol::actor_update update_of(const actor_entry& a) {
  return protocol::actor_update{a.spec.id,
                                a.state,
                                a.host,
                                a.incarnation,
                                a.spec.max_task_retries,
                                a.death_kind,
                                a.death_cause,
                                host_contact(a),
                                a.node,
                                a.pid};
}

protocol::actor_update unknown_actor_update(const actor_id& id) {
  protocol::actor_update u;
  u.actor = id;
  u.state = actor_state::dead;
  u.death_kind = internal::death_kind::lost;
  u.death_cause = "the control store knows no such actor (it never existed, or "
                  "it died long ago and was forgotten: see "
                  "gcs_max_dead_actors)";
  return u;
}

void save_actor(gcs_actor* self, const actor_entry& a) {
  if (!self->state.durability.storage)
    return;
  persistence::write_batch b;
  b.put_actor(record_of(a));
  commit(self, std::move(b));
}

void save_actor_started(gcs_actor* self, const actor_entry& a) {
  if (!self->state.durability.storage)
    return;
  persistence::write_batch b;
  b.put_actor_started(a.spec.id, a.node);
  commit(self, std::move(b));
}

void publish(gcs_actor* self, const actor_entry& a) {
  auto update = caf::make_message(update_of(a));
  for (auto& s : a.subscribers)
    send_when_durable(self, s, update);
}

void add_subscriber(actor_entry& a, const caf::actor& who) {
  // A dead actor changes no more: it keeps no subscriber (each is told of
  // its death by whoever subscribes it), so that the many who may ask
  // about it are not held for as long as it is remembered.
  if (a.state == actor_state::dead)
    return;
  auto& subs = a.subscribers;
  if (std::find(subs.begin(), subs.end(), who) == subs.end())
    subs.push_back(who);
}

void add_owned(gcs_actor* self, const caf::actor& owner, const actor_id& id) {
  auto& owned = self->state.actors.by_owner[owner.address()];
  if (owned.empty())
    self->monitor(owner);
  owned.push_back(id);
}

// -- dead actors --------------------------------------------------------------

void remember_dead(gcs_actor* self, const actor_id& id) {
  auto& st = self->state.actors;
  st.dead.push_back(id);
  if (st.dead.size() > st.max_dead && !st.forget_scheduled) {
    st.forget_scheduled = true;
    self->send(self, forget_atom::value);
  }
}

void forget_dead(gcs_actor* self) {
  auto& st = self->state.actors;
  st.forget_scheduled = false;
  persistence::write_batch b;
  std::size_t forgotten = 0;
  while (st.dead.size() > st.max_dead) {
    auto id = st.dead.front();
    st.dead.pop_front();
    auto a = st.entries.find(id);
    if (a == st.entries.end() || a->second.state != actor_state::dead)
      continue;
    st.entries.erase(a);
    b.del_actor(id);
    ++forgotten;
  }
  if (forgotten > 0) {
    self->state.log->debug("forgot {} dead actors (gcs_max_dead_actors {})",
                           forgotten, st.max_dead);
    commit(self, std::move(b));
  }
}

namespace {

/// Adds to `b` the removal of the name of dead actor `a`, if it still holds
/// it.
void drop_name(actor_table& st, const actor_entry& a,
               persistence::write_batch& b) {
  if (a.spec.name.empty())
    return;
  auto key = std::make_pair(a.spec.ns, a.spec.name);
  if (auto n = st.named.find(key);
      n != st.named.end() && n->second == a.spec.id) {
    st.named.erase(n);
    b.del_named_actor(a.spec.ns, a.spec.name);
  }
}

} // namespace

void mark_dead(gcs_actor* self, actor_entry& a, internal::death_kind kind,
               const std::string& cause) {
  auto& st = self->state;
  if (a.state == actor_state::dead || !set_state(self, a, actor_state::dead))
    return;
  st.log->info("actor {} is dead ({}): {}", a.spec.id.hex(),
               internal::to_string(kind), cause);
  a.death_kind = kind;
  a.death_cause = cause;
  a.recovering = false;
  st.recovery.unclaimed.erase(a.spec.id);
  // An instance placed on a node and not reported started yet is dropped
  // there: otherwise a node that starts instances one process at a time
  // would start each only for it to be killed once it reports.
  auto starting_on = !a.host && a.placed ? a.node : node_id{};
  if (a.host) {
    st.actors.by_host.erase(a.host.address());
    self->demonitor(a.host);
    self->send_exit(a.host, caf::exit_reason::kill);
    a.host = nullptr;
  }
  release_node(self, a);
  persistence::write_batch b;
  b.put_actor(record_of(a));
  drop_name(st.actors, a, b);
  commit(self, std::move(b));
  if (auto n = st.nodes.entries.find(starting_on);
      !starting_on.nil() && n != st.nodes.entries.end())
    // After the placement it drops, which waited for storage, too.
    send_when_durable(
        self, n->second.info.raylet,
        caf::make_message(protocol::drop_instance{a.spec.id, a.incarnation}));
  publish(self, a);
  a.subscribers = {};
  remember_dead(self, a.spec.id);
}

// -- instances ----------------------------------------------------------------

namespace {

void note_restart(actor_entry& a, const std::string& why) {
  auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                 std::chrono::system_clock::now().time_since_epoch())
                 .count();
  auto& restarts = extras_of(a).restarts;
  restarts.push_back({a.incarnation, now, a.node, why});
  if (restarts.size() > max_restart_notes)
    restarts.erase(restarts.begin());
}

} // namespace

void instance_lost(gcs_actor* self, actor_entry& a, const std::string& why) {
  if (a.state == actor_state::dead)
    return;
  a.recovering = false;
  if (a.host) {
    self->state.actors.by_host.erase(a.host.address());
    a.host = nullptr;
  }
  release_node(self, a);
  auto max = a.spec.max_restarts;
  if (max >= 0 && a.incarnation >= max) {
    mark_dead(self, a, internal::death_kind::out_of_restarts,
              "its worker died (" + why +
                  ") and no restarts are left "
                  "(max_restarts=" +
                  std::to_string(max) + ")");
    return;
  }
  if (!set_state(self, a, actor_state::restarting))
    return;
  ++a.incarnation;
  note_restart(a, why);
  self->state.log->info("restarting actor {} (restart {}): {}", a.spec.id.hex(),
                        a.incarnation, why);
  save_actor(self, a);
  publish(self, a);
  place(self, a);
}

void instances_lost_with_node(gcs_actor* self, const node_id& node,
                              const std::string& why) {
  auto& entries = self->state.actors.entries;
  std::vector<actor_id> lost;
  for (auto& [id, a] : entries)
    if (a.host && a.node == node && a.state != actor_state::dead)
      lost.push_back(id);
  for (auto& id : lost) {
    auto& a = entries.at(id);
    self->demonitor(a.host);
    instance_lost(self, a, "its node died (" + why + ")");
  }
}

bool take_instance(gcs_actor* self, actor_entry& a, const caf::actor& host,
                   std::int32_t incarnation, const node_id& node,
                   const std::string& contact) {
  auto& st = self->state.actors;
  // A recovered actor has no host until its node reports it: null is never
  // an instance.
  if (!host || a.state == actor_state::dead || incarnation < a.incarnation)
    return false;
  if (a.host == host)
    return true;
  if (a.host) {
    st.by_host.erase(a.host.address());
    self->demonitor(a.host);
  }
  release_node(self, a);
  a.recovering = false;
  a.incarnation = incarnation;
  a.host = host;
  if (!contact.empty() || a.extras)
    extras_of(a).host_contact = contact;
  a.node = node;
  occupy_node(self, a);
  st.by_host[host.address()] = a.spec.id;
  self->monitor(host);
  return true;
}

bool reattach_instance(gcs_actor* self, actor_entry& a, const caf::actor& host,
                       std::int32_t incarnation, const node_id& node,
                       const std::string& contact) {
  if (!take_instance(self, a, host, incarnation, node, contact))
    return false;
  save_actor(self, a);
  if (a.state == actor_state::alive)
    publish(self, a);
  return true;
}

void reattach_hosted(gcs_actor* self, const protocol::add_node& msg) {
  auto& st = self->state;
  for (auto& h : msg.hosted) {
    auto a = st.actors.entries.find(h.actor);
    if (a == st.actors.entries.end() ||
        !reattach_instance(self, a->second, h.host, h.incarnation, msg.node,
                           h.contact)) {
      st.log->info("node {} hosts actor {}, which is unknown or stale; it "
                   "ends",
                   msg.node.hex(), h.actor.hex());
      self->send_exit(h.host, caf::exit_reason::kill);
    }
  }
}

// -- monitored actors going down ----------------------------------------------

bool host_down(gcs_actor* self, const caf::down_msg& msg) {
  auto& st = self->state.actors;
  auto h = st.by_host.find(msg.source);
  if (h == st.by_host.end())
    return false;
  auto id = h->second;
  st.by_host.erase(h);
  if (auto a = st.entries.find(id); a != st.entries.end()) {
    a->second.host = nullptr;
    // A host ends normally only after it sent `actor_ended`, which
    // comes through the endpoint and may arrive after this.
    if (msg.reason != caf::exit_reason::normal)
      instance_lost(self, a->second, self->system().render(msg.reason));
  }
  return true;
}

void owner_gone(gcs_actor* self, const caf::actor_addr& owner) {
  auto& st = self->state.actors;
  auto i = st.by_owner.find(owner);
  if (i == st.by_owner.end())
    return;
  auto owned = std::move(i->second);
  st.by_owner.erase(i);
  for (auto& id : owned)
    if (auto a = st.entries.find(id); a != st.entries.end())
      mark_dead(self, a->second, internal::death_kind::owner_died,
                "its owner died (the worker or driver that "
                "created it, which it shares fate with)");
}

} // namespace prism::actors::gcs_detail
