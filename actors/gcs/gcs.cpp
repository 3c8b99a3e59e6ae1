#include "gcs/gcs.hpp"

#include <map>
#include <unordered_map>
#include <unordered_set>

#include <caf/all.hpp>

#include "common/handlers.hpp"
#include "common/log.hpp"
#include "protocol/gcs_raylet_actors.hpp"
#include "protocol/owner_gcs.hpp"
#include "protocol/raylet_gcs.hpp"

namespace prism::actors {

namespace {

using internal::actor_state;

struct job_entry {
  worker_id driver;
  std::string ns;
  bool running = true;
};

struct node_entry {
  protocol::node_info info;
  /// What actors may still reserve on the node.
  internal::resource_set actor_available;
  std::size_t num_actors = 0;
};

struct actor_entry {
  internal::actor_spec spec;
  actor_state state = actor_state::pending;
  caf::actor host;
  /// The node the actor lives on or is being started on.
  node_id node;
  bool placed = false;
  std::int32_t incarnation = 0;
  std::string death_cause;
  std::vector<caf::actor> subscribers;
};

struct gcs_state {
  static inline const char* name = "gcs";

  std::shared_ptr<spdlog::logger> log;
  std::unordered_map<node_id, node_entry> nodes;
  std::unordered_map<job_id, job_entry> jobs;
  std::uint32_t next_job = 1;

  std::unordered_map<actor_id, actor_entry> actors;
  std::map<std::pair<std::string, std::string>, actor_id> named;
  std::unordered_map<caf::actor_addr, actor_id> by_host;
  /// Non-detached actors by the owner they share fate with.
  std::unordered_map<caf::actor_addr, std::vector<actor_id>> by_owner;
  /// Actors no node can host now, placed when one can.
  std::vector<actor_id> unplaced;
};

using gcs_actor = caf::stateful_actor<gcs_state>;

// -- nodes --------------------------------------------------------------------

// Tells every live raylet which nodes exist, so that each can send work it
// cannot run to a node that can.
void broadcast_view(gcs_actor* self) {
  protocol::cluster_view view;
  for (auto& [id, n] : self->state.nodes)
    view.nodes.push_back(n.info);
  for (auto& [id, n] : self->state.nodes)
    if (n.info.alive)
      self->send(n.info.raylet, view);
}

// -- actors -------------------------------------------------------------------

protocol::actor_update update_of(const actor_entry& a) {
  return protocol::actor_update{
      a.spec.id,    a.state, a.host, a.incarnation, a.spec.max_task_retries,
      a.death_cause};
}

void publish(gcs_actor* self, const actor_entry& a) {
  auto update = update_of(a);
  for (auto& s : a.subscribers)
    self->send(s, update);
}

void release_node(gcs_actor* self, actor_entry& a) {
  if (!a.placed)
    return;
  a.placed = false;
  if (auto n = self->state.nodes.find(a.node); n != self->state.nodes.end()) {
    n->second.actor_available.add(a.spec.resources);
    --n->second.num_actors;
  }
}

void place(gcs_actor* self, actor_entry& a) {
  auto& st = self->state;
  node_entry* best = nullptr;
  for (auto& [id, n] : st.nodes) {
    if (!n.info.alive || !n.actor_available.contains(a.spec.resources))
      continue;
    if (best == nullptr || n.num_actors < best->num_actors)
      best = &n;
  }
  if (best == nullptr) {
    st.log->warn("no node can host actor {} needing {{{}}}; it stays pending "
                 "until one joins",
                 a.spec.id.hex(), a.spec.resources.to_string());
    st.unplaced.push_back(a.spec.id);
    return;
  }
  best->actor_available.subtract(a.spec.resources);
  ++best->num_actors;
  a.node = best->info.node;
  a.placed = true;
  self->send(best->info.raylet, protocol::host_actor{a.spec, a.incarnation});
}

void place_unplaced(gcs_actor* self) {
  auto& st = self->state;
  auto waiting = std::move(st.unplaced);
  st.unplaced.clear();
  for (auto& id : waiting)
    if (auto a = st.actors.find(id); a != st.actors.end() &&
                                     a->second.state != actor_state::dead &&
                                     !a->second.placed)
      place(self, a->second);
}

void mark_dead(gcs_actor* self, actor_entry& a, const std::string& cause) {
  auto& st = self->state;
  if (a.state == actor_state::dead)
    return;
  st.log->info("actor {} is dead: {}", a.spec.id.hex(), cause);
  a.state = actor_state::dead;
  a.death_cause = cause;
  if (a.host) {
    st.by_host.erase(a.host.address());
    self->demonitor(a.host);
    self->send_exit(a.host, caf::exit_reason::kill);
    a.host = nullptr;
  }
  release_node(self, a);
  if (!a.spec.name.empty()) {
    auto key = std::make_pair(a.spec.ns, a.spec.name);
    if (auto n = st.named.find(key);
        n != st.named.end() && n->second == a.spec.id)
      st.named.erase(n);
  }
  publish(self, a);
}

// The instance of `a` is gone: restart it if it may, else it is dead.
void instance_lost(gcs_actor* self, actor_entry& a, const std::string& why) {
  if (a.state == actor_state::dead)
    return;
  if (a.host) {
    self->state.by_host.erase(a.host.address());
    a.host = nullptr;
  }
  release_node(self, a);
  auto max = a.spec.max_restarts;
  if (max >= 0 && a.incarnation >= max) {
    mark_dead(self, a,
              "its worker died (" + why +
                  ") and no restarts are left "
                  "(max_restarts=" +
                  std::to_string(max) + ")");
    return;
  }
  ++a.incarnation;
  a.state = actor_state::restarting;
  self->state.log->info("restarting actor {} (restart {}): {}", a.spec.id.hex(),
                        a.incarnation, why);
  publish(self, a);
  place(self, a);
}

caf::message create(gcs_actor* self, protocol::create_actor& msg) {
  auto& st = self->state;
  auto& spec = msg.spec;
  detail::error_info result;
  if (!spec.name.empty()) {
    auto key = std::make_pair(spec.ns, spec.name);
    if (st.named.count(key) > 0) {
      result.code = errc::invalid_argument;
      result.message = "an actor named '" + spec.name +
                       "' already exists in namespace '" + spec.ns + "'";
      return caf::make_message(result);
    }
    st.named.emplace(key, spec.id);
  }
  auto id = spec.id;
  auto& a = st.actors[id];
  a.spec = std::move(spec);
  a.subscribers.push_back(msg.owner);
  if (!a.spec.detached) {
    auto& owned = st.by_owner[msg.owner.address()];
    if (owned.empty())
      self->monitor(msg.owner);
    owned.push_back(id);
  }
  place(self, a);
  return caf::make_message(result);
}

void owner_gone(gcs_actor* self, const caf::actor_addr& owner) {
  auto& st = self->state;
  auto i = st.by_owner.find(owner);
  if (i == st.by_owner.end())
    return;
  auto owned = std::move(i->second);
  st.by_owner.erase(i);
  for (auto& id : owned)
    if (auto a = st.actors.find(id); a != st.actors.end())
      mark_dead(self, a->second,
                "its owner died (the worker or driver that "
                "created it, which it shares fate with)");
}

void node_gone(gcs_actor* self, node_entry& n, const std::string& why) {
  auto& st = self->state;
  n.info.alive = false;
  st.log->warn("node {} is dead: {}", n.info.node.hex(), why);
  broadcast_view(self);
  // Actors that were being started there will never report; the others'
  // hosts go down with the node and are handled one by one.
  for (auto& [id, a] : st.actors)
    if (a.placed && a.node == n.info.node && !a.host)
      instance_lost(self, a, "its node died");
}

caf::behavior gcs_behavior(gcs_actor* self, gcs_config cfg) {
  auto& st = self->state;
  st.next_job = cfg.first_job;
  st.log = component_logger("gcs");
  install_default_handlers(self, st.log);
  self->set_down_handler([self](caf::down_msg& msg) {
    auto& st = self->state;
    if (auto h = st.by_host.find(msg.source); h != st.by_host.end()) {
      auto id = h->second;
      st.by_host.erase(h);
      if (auto a = st.actors.find(id); a != st.actors.end()) {
        a->second.host = nullptr;
        instance_lost(self, a->second, self->system().render(msg.reason));
      }
      return;
    }
    for (auto& [id, node] : st.nodes)
      if (node.info.alive && node.info.raylet.address() == msg.source) {
        node_gone(self, node, self->system().render(msg.reason));
        return;
      }
    owner_gone(self, msg.source);
  });
  return {
      // -- nodes and jobs ---------------------------------------------------
      [self](protocol::add_node& msg) {
        auto& st = self->state;
        self->monitor(msg.raylet);
        st.log->info("node {} joined with {{{}}}", msg.node.hex(),
                     msg.resources.to_string());
        auto& n = st.nodes[msg.node];
        n.info = protocol::node_info{msg.node, msg.resources, msg.raylet, true};
        n.actor_available = msg.resources;
        self->send(msg.raylet, protocol::node_added{msg.node});
        broadcast_view(self);
        place_unplaced(self);
      },
      [self](protocol::start_job& msg) {
        auto& st = self->state;
        job_id id{st.next_job++};
        st.jobs[id] = job_entry{msg.driver, msg.ns, true};
        st.log->info("job {} started by driver {}", id.value, msg.driver.hex());
        return protocol::job_started{id};
      },
      [self](const protocol::finish_job& msg) {
        auto& st = self->state;
        if (auto i = st.jobs.find(msg.job); i != st.jobs.end())
          i->second.running = false;
        for (auto& [id, a] : st.actors)
          if (a.spec.job == msg.job && !a.spec.detached)
            mark_dead(self, a, "its job ended");
        for (auto& [id, n] : st.nodes)
          if (n.info.alive)
            self->send(n.info.raylet, msg);
        return true;
      },
      [self](const protocol::list_nodes&) {
        std::vector<protocol::node_info> result;
        for (auto& [id, node] : self->state.nodes)
          result.push_back(node.info);
        return result;
      },
      // -- actors -----------------------------------------------------------
      [self](protocol::create_actor& msg) { return create(self, msg); },
      [self](protocol::actor_started& msg) {
        auto& st = self->state;
        auto a = st.actors.find(msg.actor);
        if (a == st.actors.end() || a->second.state == actor_state::dead ||
            a->second.incarnation != msg.incarnation) {
          // Killed while it was starting, or a stale instance.
          self->send_exit(msg.host, caf::exit_reason::kill);
          return;
        }
        a->second.state = actor_state::alive;
        a->second.host = msg.host;
        st.by_host[msg.host.address()] = msg.actor;
        self->monitor(msg.host);
        publish(self, a->second);
      },
      [self](const protocol::actor_ended& msg) {
        auto& st = self->state;
        auto a = st.actors.find(msg.actor);
        if (a == st.actors.end() || a->second.incarnation != msg.incarnation)
          return;
        if (a->second.host) {
          st.by_host.erase(a->second.host.address());
          self->demonitor(a->second.host);
          a->second.host = nullptr;
        }
        mark_dead(self, a->second, msg.cause);
      },
      [self](protocol::subscribe_actor& msg) {
        auto& st = self->state;
        auto a = st.actors.find(msg.actor);
        if (a == st.actors.end()) {
          protocol::actor_update u;
          u.actor = msg.actor;
          u.state = actor_state::dead;
          u.death_cause = "no such actor is known to the control store";
          self->send(msg.subscriber, u);
          return;
        }
        auto& subs = a->second.subscribers;
        if (std::find(subs.begin(), subs.end(), msg.subscriber) == subs.end())
          subs.push_back(msg.subscriber);
        self->send(msg.subscriber, update_of(a->second));
      },
      [self](const protocol::lookup_actor& msg) {
        auto& st = self->state;
        protocol::actor_found result;
        auto n = st.named.find({msg.ns, msg.name});
        if (n == st.named.end())
          return result;
        if (auto a = st.actors.find(n->second); a != st.actors.end()) {
          result.found = true;
          result.actor = a->second.spec.id;
          result.class_tag = a->second.spec.class_tag;
        }
        return result;
      },
      [self](const protocol::kill_actor& msg) {
        auto& st = self->state;
        auto a = st.actors.find(msg.actor);
        if (a == st.actors.end() || a->second.state == actor_state::dead)
          return false;
        if (msg.no_restart) {
          mark_dead(self, a->second, "it was killed (prism::kill)");
        } else if (a->second.host) {
          // Its down message restarts it, or ends it if no restarts are left.
          self->send_exit(a->second.host, caf::exit_reason::kill);
        }
        return true;
      },
      [self](const protocol::locate_actor& msg) {
        auto& st = self->state;
        protocol::actor_location result;
        if (auto a = st.actors.find(msg.actor);
            a != st.actors.end() && a->second.state == actor_state::alive) {
          result.alive = true;
          result.node = a->second.node;
        }
        return result;
      },
  };
}

} // namespace

caf::actor spawn_gcs(caf::actor_system& sys, gcs_config cfg) {
  // Always with an argument: CAF 0.17.6 dereferences a null argument tuple
  // when a function-based actor is spawned without one.
  return sys.spawn(gcs_behavior, cfg);
}

} // namespace prism::actors
