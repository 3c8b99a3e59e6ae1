#include "gcs/actor_requests.hpp"

#include <caf/all.hpp>

#include "gcs/actor_record.hpp"
#include "gcs/gcs_state.hpp"

namespace prism::actors::gcs_detail {

// -- creation -----------------------------------------------------------------

namespace {

/// Registers the new actor of `msg` and places it; the error says why not.
caf::message register_actor(gcs_actor* self, protocol::create_actor& msg) {
  auto& st = self->state;
  auto& spec = msg.spec;
  detail::error_info result;
  if (!spec.name.empty()) {
    auto key = std::make_pair(spec.ns, spec.name);
    if (st.actors.named.count(key) > 0) {
      result.code = errc::invalid_argument;
      result.message = "an actor named '" + spec.name +
                       "' already exists in namespace '" + spec.ns + "'";
      return caf::make_message(result);
    }
    st.actors.named.emplace(key, spec.id);
  }
  auto id = spec.id;
  auto& a = st.actors.entries[id];
  a.spec = std::move(spec);
  a.subscribers.push_back(msg.owner);
  if (!a.spec.detached)
    add_owned(self, msg.owner, id);
  if (st.durability.storage) {
    persistence::write_batch b;
    b.put_actor(record_of(a));
    if (!a.spec.name.empty())
      b.put_named_actor(a.spec.ns, a.spec.name, id);
    commit(self, std::move(b));
  }
  place(self, a);
  return caf::make_message(result);
}

/// The actor that holds the name `name` in namespace `ns`, if any.
protocol::actor_found holder_of(const actor_table& st, const std::string& ns,
                                const std::string& name) {
  protocol::actor_found result;
  auto n = st.named.find({ns, name});
  if (n != st.named.end())
    if (auto a = st.entries.find(n->second); a != st.entries.end()) {
      result.found = true;
      result.actor = a->second.spec.id;
      result.class_tag = a->second.spec.class_tag;
    }
  return result;
}

} // namespace

caf::response_promise create_actor(gcs_actor* self,
                                   protocol::create_actor& msg) {
  auto& st = self->state.actors;
  if (auto i = st.entries.find(msg.spec.id); i != st.entries.end()) {
    // The same request again (the control store restarted before it
    // answered): it is done already.
    add_subscriber(i->second, msg.owner);
    return reply_when_durable(
        self, msg.get_if_exists ? caf::make_message(protocol::actor_found{})
                                : caf::make_message(detail::error_info{}));
  }
  if (!msg.get_if_exists)
    return reply_when_durable(self, register_actor(self, msg));
  // The name's live holder, or this actor under the name: decided here, one
  // request at a time, so callers that race all end up with one actor.
  auto found = holder_of(st, msg.spec.ns, msg.spec.name);
  if (!found.found) {
    // A name of no known actor holds nothing.
    st.named.erase({msg.spec.ns, msg.spec.name});
    register_actor(self, msg);
  }
  return reply_when_durable(self, caf::make_message(found));
}

// -- instances ----------------------------------------------------------------

namespace {

/// Whether the instance `msg` reports must end: its actor is unknown or
/// dead, it is stale, or its node died.
bool unwanted_instance(const gcs_state& st,
                       const protocol::actor_started& msg) {
  auto a = st.actors.entries.find(msg.actor);
  if (a == st.actors.entries.end() || a->second.state == actor_state::dead ||
      msg.incarnation < a->second.incarnation ||
      (msg.incarnation > a->second.incarnation && !a->second.recovering))
    // Killed while it was starting, or a stale instance.
    return true;
  // Started on a node that died meanwhile: the actor was placed elsewhere
  // when the node went.
  auto n = st.nodes.entries.find(msg.node);
  return n != st.nodes.entries.end() && n->second.state == node_state::dead;
}

} // namespace

void accept_started_instance(gcs_actor* self, protocol::actor_started& msg) {
  if (unwanted_instance(self->state, msg)) {
    self->send_exit(msg.host, caf::exit_reason::kill);
    return;
  }
  auto& e = self->state.actors.entries.find(msg.actor)->second;
  // The same report again changes nothing; judged before taking the
  // instance, which ends a recovery.
  bool repeated =
      e.state == actor_state::alive && !e.recovering && e.host == msg.host;
  bool was_pending = e.state == actor_state::pending;
  if (!take_instance(self, e, msg.host, msg.incarnation, msg.node,
                     msg.contact)) {
    self->send_exit(msg.host, caf::exit_reason::kill);
    return;
  }
  if (repeated)
    return;
  // An actor recovered alive stays alive: its instance is confirmed, and
  // its state does not change.
  if (e.state != actor_state::alive && !set_state(self, e, actor_state::alive))
    return;
  e.recovering = false;
  e.node = msg.node;
  e.pid = msg.pid;
  // Its first start changed only its state and node since its record was
  // written whole (its spec and the rest are as they were): that change is
  // all there is to write.
  if (was_pending && e.incarnation == 0 &&
      (!e.extras || e.extras->restarts.empty()))
    save_actor_started(self, e);
  else
    save_actor(self, e);
  publish(self, e);
}

void instance_failed(gcs_actor* self,
                     const protocol::actor_instance_lost& msg) {
  auto& st = self->state.actors;
  auto a = st.entries.find(msg.actor);
  // Only the current instance: a later one may be placed already.
  if (a == st.entries.end() || a->second.incarnation != msg.incarnation)
    return;
  if (a->second.host)
    self->demonitor(a->second.host);
  instance_lost(self, a->second, msg.why);
}

void end_actor(gcs_actor* self, const protocol::actor_ended& msg) {
  auto& st = self->state.actors;
  auto a = st.entries.find(msg.actor);
  if (a == st.entries.end() || a->second.incarnation != msg.incarnation)
    return;
  if (a->second.host) {
    st.by_host.erase(a->second.host.address());
    self->demonitor(a->second.host);
    a->second.host = nullptr;
  }
  mark_dead(self, a->second, msg.kind, msg.cause);
}

// -- subscriptions ------------------------------------------------------------

void subscribe_actor(gcs_actor* self, protocol::subscribe_actor& msg) {
  auto& st = self->state.actors;
  auto a = st.entries.find(msg.actor);
  if (a == st.entries.end()) {
    send_when_durable(self, msg.subscriber,
                      caf::make_message(unknown_actor_update(msg.actor)));
    return;
  }
  add_subscriber(a->second, msg.subscriber);
  if (!a->second.recovering)
    send_when_durable(self, msg.subscriber,
                      caf::make_message(update_of(a->second)));
}

void resubscribe_actors(gcs_actor* self, protocol::resubscribe_actors& msg) {
  auto& st = self->state;
  for (auto& id : msg.actors) {
    auto i = st.actors.entries.find(id);
    if (i == st.actors.entries.end()) {
      send_when_durable(self, msg.owner,
                        caf::make_message(unknown_actor_update(id)));
      continue;
    }
    auto& a = i->second;
    add_subscriber(a, msg.owner);
    if (!a.spec.detached && a.spec.owner == msg.owner_id &&
        st.recovery.unclaimed.erase(id) > 0)
      add_owned(self, msg.owner, id);
    if (!a.recovering)
      send_when_durable(self, msg.owner, caf::make_message(update_of(a)));
  }
}

// -- queries and kills --------------------------------------------------------

caf::response_promise lookup_actor(gcs_actor* self,
                                   const protocol::lookup_actor& msg) {
  auto result = holder_of(self->state.actors, msg.ns, msg.name);
  // Reads wait for the writes before them to be durable: no caller
  // sees a name or value that a crash could still take back.
  return reply_when_durable(self, caf::make_message(result));
}

caf::response_promise kill_actor(gcs_actor* self,
                                 const protocol::kill_actor& msg) {
  auto& st = self->state.actors;
  auto a = st.entries.find(msg.actor);
  if (a == st.entries.end() || a->second.state == actor_state::dead)
    return reply_when_durable(self, caf::make_message(false));
  if (msg.no_restart) {
    mark_dead(self, a->second, internal::death_kind::killed,
              "it was killed (prism::kill)");
  } else if (a->second.host) {
    // Its down message restarts it, or ends it if no restarts are left.
    self->send_exit(a->second.host, caf::exit_reason::kill);
  } else {
    // Recovered and not yet reported by its node (or placed and not yet
    // started): there is no instance to kill, and the call says so rather
    // than let the instance its node reports later run on.
    return reply_when_durable(self, caf::make_message(false));
  }
  return reply_when_durable(self, caf::make_message(true));
}

protocol::actor_location locate_actor(const gcs_state& st,
                                      const protocol::locate_actor& msg) {
  protocol::actor_location result;
  if (auto a = st.actors.entries.find(msg.actor);
      a != st.actors.entries.end() && a->second.state == actor_state::alive &&
      a->second.host) {
    result.alive = true;
    result.node = a->second.node;
  }
  return result;
}

} // namespace prism::actors::gcs_detail
