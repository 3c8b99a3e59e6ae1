#include "raylet/raylet.hpp"

#include <algorithm>
#include <deque>
#include <random>
#include <unordered_map>
#include <unordered_set>

#include <caf/all.hpp>

#include "common/default_handlers.hpp"
#include "common/log.hpp"
#include "protocol/gcs_raylet_actors.hpp"
#include "protocol/object_store.hpp"
#include "protocol/owner_owner.hpp"
#include "protocol/owner_raylet.hpp"
#include "protocol/raylet_gcs.hpp"
#include "protocol/raylet_worker.hpp"
#include "protocol/testing.hpp"
#include "raylet/worker_pool.hpp"
#include "worker/actor_host.hpp"
#include "worker/worker.hpp"

namespace prism::actors {

namespace {

struct lease {
  std::uint64_t id = 0;
  worker_id worker;
  caf::actor owner;
  /// Resources the lease takes from the node now; the CPU part is given back
  /// while its worker is blocked.
  internal::resource_set held;
  internal::resource_set cpu;
  bool blocked = false;
};

struct hosted_instance {
  caf::actor host;
  internal::resource_set resources;
  actor_id actor;
  std::int32_t incarnation = 0;
};

/// One object in the node's store: a large task result or `put`, and the run
/// of the task that made it (0 for a put).
struct stored_object {
  detail::value value;
  std::int32_t attempt = 0;
};

struct raylet_state {
  static inline const char* name = "raylet";

  raylet_config cfg;
  std::shared_ptr<spdlog::logger> log;
  internal::resource_set available;
  worker_pool pool;
  std::unordered_map<std::uint64_t, lease> leases;
  std::unordered_map<worker_id, std::uint64_t> lease_of_worker;
  std::deque<protocol::lease_request> queue;
  std::unordered_set<caf::actor_addr> watched_owners;
  std::unordered_set<std::string> reported_infeasible;
  /// Actor hosts on this node, and the resources each holds.
  std::unordered_map<caf::actor_addr, hosted_instance> hosts;
  /// Lease ids start at a random base per raylet: an owner holds leases of
  /// several raylets at once and tells them apart by id.
  std::uint64_t next_lease_id =
      (std::uint64_t{std::random_device{}()} << 32) | 1;
  /// The cluster's nodes, as the control store last reported them.
  std::vector<protocol::node_info> view;
  std::size_t next_spill = 0;
  /// The node's object store, and the bytes it holds.
  std::unordered_map<object_id, stored_object> objects;
  std::uint64_t object_bytes = 0;
};

using raylet_actor = caf::stateful_actor<raylet_state>;

worker_pool::worker* start_worker(raylet_actor* self) {
  auto& st = self->state;
  auto id = worker_id{unique_id::random()};
  auto handle = spawn_worker(
      self->system(), worker_config{id, st.cfg.node, self, st.cfg.gcs,
                                    st.cfg.directory, st.cfg.max_inline_bytes});
  self->monitor(handle);
  st.pool.add(worker_pool::worker{id, handle, job_id{}, 0});
  st.log->debug("started worker {}", id.hex());
  return st.pool.find(id);
}

// Takes a worker for `job`, starting one if the pool allows; nullptr if the
// pool is full of busy workers or workers of other jobs that are busy.
worker_pool::worker* take_worker(raylet_actor* self, job_id job,
                                 std::uint64_t lease_id) {
  auto& st = self->state;
  if (auto w = st.pool.pop(job, lease_id))
    return w;
  if (st.pool.size() >= st.cfg.max_workers) {
    // Make room: stop an idle worker of another job.
    auto other = st.pool.idle_of_other_job(job);
    if (other == nullptr)
      return nullptr;
    auto victim = st.pool.remove(other->id);
    self->demonitor(victim->handle);
    self->send_exit(victim->handle, caf::exit_reason::user_shutdown);
  }
  start_worker(self);
  return st.pool.pop(job, lease_id);
}

// A live node other than this one whose resources could ever fit `request`,
// picked round robin among the candidates.
const protocol::node_info* spill_target(raylet_actor* self,
                                        const internal::resource_set& request) {
  auto& st = self->state;
  std::vector<const protocol::node_info*> candidates;
  for (auto& n : st.view)
    if (n.alive && n.node != st.cfg.node && n.resources.contains(request))
      candidates.push_back(&n);
  if (candidates.empty())
    return nullptr;
  return candidates[st.next_spill++ % candidates.size()];
}

// Tells the requester that no node will ever grant `req`.
void refuse(raylet_actor* self, const protocol::lease_request& req,
            std::string why) {
  protocol::lease_refused msg;
  msg.request_id = req.request_id;
  msg.error.code = errc::unschedulable;
  msg.error.message = std::move(why);
  self->send(req.owner, std::move(msg));
}

std::string never_fits(const node_id& node,
                       const internal::resource_set& request,
                       const internal::resource_set& has) {
  return "node " + node.hex() + " can never fit {" + request.to_string() +
         "}; it has {" + has.to_string() + "}";
}

/// What a request with node affinity asks of this raylet.
enum class affinity_verdict {
  /// Run it here (or, without affinity, wherever it fits).
  here,
  /// Sent on to its node, or refused; it leaves the queue.
  gone,
  /// Its node is not known yet: keep it queued.
  wait,
};

// A request pinned to another node goes there; one pinned to a dead node, or
// to a node that can never fit it, is refused (hard) or loses its pin
// (soft).
affinity_verdict apply_affinity(raylet_actor* self,
                                protocol::lease_request& req) {
  auto& st = self->state;
  if (req.affinity.nil())
    return affinity_verdict::here;
  auto drop_pin = [&](const std::string& why) {
    if (req.affinity_soft) {
      req.affinity = node_id{};
      return affinity_verdict::here;
    }
    refuse(self, req, why);
    return affinity_verdict::gone;
  };
  if (req.affinity == st.cfg.node) {
    if (!st.cfg.resources.contains(req.resources))
      return drop_pin(
          never_fits(req.affinity, req.resources, st.cfg.resources));
    return affinity_verdict::here;
  }
  for (auto& n : st.view) {
    if (n.node != req.affinity)
      continue;
    if (!n.alive)
      return drop_pin("node " + req.affinity.hex() +
                      ", which the task must run on, is dead");
    if (!n.resources.contains(req.resources))
      return drop_pin(never_fits(req.affinity, req.resources, n.resources));
    self->send(req.owner,
               protocol::lease_spillback{req.request_id, n.raylet, n.node});
    return affinity_verdict::gone;
  }
  if (req.affinity_soft) {
    // An unknown node is no better than a dead one for a soft pin.
    req.affinity = node_id{};
    return affinity_verdict::here;
  }
  auto key = "affinity " + req.affinity.hex();
  if (st.reported_infeasible.insert(key).second)
    st.log->warn("a task must run on node {}, which is not known (yet); it "
                 "stays pending until that node joins",
                 req.affinity.hex());
  return affinity_verdict::wait;
}

// Whether some live node could run `req` as it stands: false if no node
// can ever fit it, or if it is pinned (hard) to a node nobody knows.
bool runnable_now(raylet_actor* self, const protocol::lease_request& req) {
  auto& st = self->state;
  if (!req.affinity.nil() && req.affinity != st.cfg.node &&
      std::none_of(st.view.begin(), st.view.end(),
                   [&](const auto& n) { return n.node == req.affinity; }))
    return false;
  return st.cfg.resources.contains(req.resources) ||
         spill_target(self, req.resources) != nullptr;
}

void schedule(raylet_actor* self) {
  auto& st = self->state;
  for (auto i = st.queue.begin(); i != st.queue.end();) {
    auto& req = *i;
    auto verdict = apply_affinity(self, req);
    if (verdict == affinity_verdict::gone) {
      i = st.queue.erase(i);
      continue;
    }
    if (verdict == affinity_verdict::wait) {
      ++i;
      continue;
    }
    if (!req.affinity.nil()) {
      // Pinned here: it waits for room on this node.
    } else if (!st.cfg.resources.contains(req.resources)) {
      // This node can never run it: send it to one that can, if any.
      if (auto other = spill_target(self, req.resources)) {
        self->send(req.owner, protocol::lease_spillback{
                                  req.request_id, other->raylet, other->node});
        i = st.queue.erase(i);
        continue;
      }
      auto shape = req.resources.to_string();
      if (st.reported_infeasible.insert(shape).second)
        st.log->warn("a task needs {{{}}} but no node has it (this one has "
                     "{{{}}}); it stays pending until a node that fits joins",
                     shape, st.cfg.resources.to_string());
      ++i;
      continue;
    }
    if (!st.available.contains(req.resources)) {
      ++i;
      continue;
    }
    auto lease_id = st.next_lease_id;
    auto w = take_worker(self, req.job, lease_id);
    if (w == nullptr) {
      ++i;
      continue;
    }
    ++st.next_lease_id;
    lease l;
    l.id = lease_id;
    l.worker = w->id;
    l.owner = req.owner;
    l.held = req.resources;
    l.cpu = req.resources.cpu_only();
    st.available.subtract(l.held);
    st.lease_of_worker[w->id] = lease_id;
    if (st.watched_owners.insert(req.owner.address()).second)
      self->monitor(req.owner);
    self->send(req.owner, protocol::lease_grant{
                              req.request_id, lease_id, w->id, w->handle,
                              st.cfg.node, caf::actor_cast<caf::actor>(self)});
    st.leases.emplace(lease_id, std::move(l));
    i = st.queue.erase(i);
  }
}

// A worker dies as a crash would: its owner goes at once, even while the
// worker is busy in user code (which handles its exit only when that code
// returns), so what the owner holds is lost and borrowers find it gone.
void kill_owner_of(raylet_actor* self, const worker_id& id,
                   const caf::error& reason) {
  auto& dir = *self->state.cfg.directory;
  if (auto owner = dir.find(id)) {
    dir.remove(id);
    self->send_exit(owner, reason);
  }
}

void end_lease(raylet_actor* self, std::uint64_t lease_id) {
  auto& st = self->state;
  auto i = st.leases.find(lease_id);
  if (i == st.leases.end())
    return;
  st.available.add(i->second.held);
  st.lease_of_worker.erase(i->second.worker);
  st.pool.release(i->second.worker);
  st.leases.erase(i);
}

void worker_gone(raylet_actor* self, worker_id id, const std::string& reason) {
  auto& st = self->state;
  auto w = st.pool.remove(id);
  if (!w)
    return;
  st.log->info("worker {} gone: {}", id.hex(), reason);
  if (auto l = st.lease_of_worker.find(id); l != st.lease_of_worker.end()) {
    auto lease_id = l->second;
    if (auto i = st.leases.find(lease_id); i != st.leases.end())
      self->send(i->second.owner, protocol::worker_lost{lease_id, id, reason});
    st.lease_of_worker.erase(l);
    end_lease(self, lease_id);
  }
  schedule(self);
}

// Kills a worker of this node as a crash would: its owner first, then the
// worker; its lease, if any, ends. Returns false if the worker is unknown.
bool kill_worker(raylet_actor* self, const worker_id& id,
                 const std::string& why) {
  auto w = self->state.pool.find(id);
  if (w == nullptr)
    return false;
  auto handle = w->handle;
  self->demonitor(handle);
  worker_gone(self, id, why);
  kill_owner_of(self, id, caf::exit_reason::kill);
  self->send_exit(handle, caf::exit_reason::kill);
  return true;
}

// A dead owner's leased workers go with it: one may still run the owner's
// task, whose result has nowhere to go, and must not be handed to another
// owner, whose task would wait behind it. What they own goes with them, so
// the dead owner's work stops all the way down.
void owner_gone(raylet_actor* self, const caf::actor_addr& owner) {
  auto& st = self->state;
  st.watched_owners.erase(owner);
  // Its queued requests go first: the resources the kills free must not
  // be granted to them.
  std::erase_if(st.queue, [&](const protocol::lease_request& r) {
    return r.owner.address() == owner;
  });
  std::vector<std::pair<std::uint64_t, worker_id>> ended;
  for (auto& [id, l] : st.leases)
    if (l.owner.address() == owner)
      ended.emplace_back(id, l.worker);
  for (auto& [id, worker] : ended)
    if (!kill_worker(self, worker, "the owner of its lease died"))
      end_lease(self, id);
  schedule(self);
}

lease* lease_of(raylet_actor* self, const worker_id& id) {
  auto& st = self->state;
  auto l = st.lease_of_worker.find(id);
  if (l == st.lease_of_worker.end())
    return nullptr;
  auto i = st.leases.find(l->second);
  return i != st.leases.end() ? &i->second : nullptr;
}

// -- the object store ---------------------------------------------------------

void keep_object(raylet_actor* self, const object_id& id, detail::value v,
                 std::int32_t attempt) {
  auto& st = self->state;
  auto& slot = st.objects[id];
  st.object_bytes -= slot.value.size();
  st.object_bytes += v.size();
  slot = stored_object{std::move(v), attempt};
}

void drop_object(raylet_actor* self,
                 std::unordered_map<object_id, stored_object>::iterator i) {
  self->state.object_bytes -= i->second.value.size();
  self->state.objects.erase(i);
}

protocol::object_reply read_stored(raylet_actor* self, const object_id& id) {
  auto& st = self->state;
  protocol::object_reply reply;
  reply.id = id;
  if (auto i = st.objects.find(id); i != st.objects.end()) {
    reply.ok = true;
    reply.result = i->second.value;
  } else {
    reply.error.code = errc::object_lost;
    reply.error.message = "the object store of node " + st.cfg.node.hex() +
                          " does not hold object " + id.hex();
  }
  return reply;
}

caf::behavior raylet_behavior(raylet_actor* self, raylet_config cfg) {
  auto& st = self->state;
  st.cfg = std::move(cfg);
  st.log = component_logger("raylet");
  st.available = st.cfg.resources;
  install_default_handlers(self, st.log);
  self->set_down_handler([self](caf::down_msg& msg) {
    auto& st = self->state;
    if (auto h = st.hosts.find(msg.source); h != st.hosts.end()) {
      st.available.add(h->second.resources);
      st.hosts.erase(h);
      schedule(self);
    } else if (auto w = st.pool.find(msg.source)) {
      worker_gone(self, w->id,
                  "the worker exited: " + self->system().render(msg.reason));
    } else if (st.watched_owners.count(msg.source) > 0) {
      owner_gone(self, msg.source);
    }
  });
  self->set_exit_handler([self](caf::exit_msg& msg) {
    // Going down takes every worker of the node with it, and their owners.
    auto& st = self->state;
    for (auto& id : st.pool.ids())
      kill_owner_of(self, id, msg.reason);
    for (auto& h : st.pool.handles())
      self->send_exit(h, msg.reason);
    for (auto& [addr, h] : self->state.hosts)
      self->send_exit(h.host, msg.reason);
    self->quit(msg.reason);
  });
  for (std::uint32_t i = 0; i < st.cfg.prestart_workers; ++i)
    start_worker(self);
  self->send(st.cfg.gcs, protocol::add_node{st.cfg.node,
                                            st.cfg.resources,
                                            caf::actor_cast<caf::actor>(self),
                                            {}});
  self->send(st.cfg.gcs,
             protocol::watch_gcs{caf::actor_cast<caf::actor>(self)});
  return {
      [self](protocol::lease_request& req) {
        self->state.queue.push_back(std::move(req));
        schedule(self);
      },
      [self](const protocol::lease_return& msg) {
        end_lease(self, msg.lease_id);
        schedule(self);
      },
      [self](const protocol::worker_blocked& msg) {
        if (auto l = lease_of(self, msg.worker); l && !l->blocked) {
          l->blocked = true;
          l->held.subtract(l->cpu);
          self->state.available.add(l->cpu);
          schedule(self);
        }
      },
      [self](const protocol::worker_unblocked& msg) {
        if (auto l = lease_of(self, msg.worker); l && l->blocked) {
          // Takes the CPU back even if that oversubscribes the node for a
          // while: the task must go on to finish and free it.
          l->blocked = false;
          l->held.add(l->cpu);
          self->state.available.subtract(l->cpu);
        }
      },
      [self](const protocol::kill_worker& msg) {
        return kill_worker(self, msg.worker, "killed by fault injection");
      },
      [self](const protocol::query_resources&) {
        auto& st = self->state;
        protocol::node_resources result{
            st.cfg.node, st.cfg.resources, st.available, {}};
        for (auto& req : st.queue)
          if (!runnable_now(self, req) &&
              std::find(result.infeasible.begin(), result.infeasible.end(),
                        req.resources) == result.infeasible.end())
            result.infeasible.push_back(req.resources);
        return result;
      },
      [self](const protocol::count_workers&) {
        return static_cast<std::uint64_t>(self->state.pool.size());
      },
      [self](protocol::view_size_atom) {
        auto& view = self->state.view;
        return static_cast<std::uint64_t>(std::count_if(
            view.begin(), view.end(), [](const auto& n) { return n.alive; }));
      },
      [self](protocol::host_actor& msg) {
        auto& st = self->state;
        auto resources = msg.spec.resources;
        auto hc_actor = msg.spec.id;
        actor_host_config hc;
        hc.spec = std::move(msg.spec);
        hc.incarnation = msg.incarnation;
        hc.node = st.cfg.node;
        hc.raylet = caf::actor_cast<caf::actor>(self);
        hc.gcs = st.cfg.gcs;
        hc.directory = st.cfg.directory;
        hc.pool = st.cfg.actor_pool;
        hc.max_inline_bytes = st.cfg.max_inline_bytes;
        auto host = spawn_actor_host(self->system(), std::move(hc));
        self->monitor(host);
        st.available.subtract(resources);
        st.hosts.emplace(
            host.address(),
            hosted_instance{host, resources, hc_actor, msg.incarnation});
      },
      [self](const protocol::finish_job& msg) {
        // The job's idle workers go; workers still leased (to a detached
        // actor of the job) return to the pool and go with the next end.
        for (auto& h : self->state.pool.remove_idle_of(msg.job)) {
          self->demonitor(h);
          self->send_exit(h, caf::exit_reason::user_shutdown);
        }
      },
      [self](protocol::cluster_view& msg) {
        self->state.view = std::move(msg.nodes);
        self->state.reported_infeasible.clear();
        schedule(self);
      },
      [self](const protocol::gcs_restarted& msg) {
        // A new control store knows this node and its actors only from
        // storage: register again, with the instances hosted here, and have
        // each host confirm it is running.
        auto& st = self->state;
        protocol::add_node again{st.cfg.node,
                                 st.cfg.resources,
                                 caf::actor_cast<caf::actor>(self),
                                 {}};
        for (auto& [addr, h] : st.hosts) {
          again.hosted.push_back(
              protocol::hosted_actor{h.actor, h.incarnation, h.host});
          self->send(h.host, msg);
        }
        self->send(st.cfg.gcs, std::move(again));
      },
      [self](const protocol::node_added& msg) {
        self->state.log->debug("node {} registered", msg.node.hex());
      },
      [self](protocol::seal_result& msg) {
        auto& done = msg.done;
        auto refs = done.result.refs;
        keep_object(self, object_id{done.task, 1}, std::move(done.result),
                    done.attempt);
        // The owner keeps the refs inside the value alive while it lives.
        done.result = detail::value{};
        done.result.refs = std::move(refs);
        done.stored_at = self->state.cfg.node;
        done.store = caf::actor_cast<caf::actor>(self);
        self->send(msg.reply_to, std::move(done));
        return true;
      },
      [self](protocol::store_object& msg) {
        keep_object(self, msg.id, std::move(msg.value), 0);
      },
      [self](const protocol::pull_object& msg) {
        return read_stored(self, msg.id);
      },
      [self](const protocol::free_object& msg) {
        auto i = self->state.objects.find(msg.id);
        if (i != self->state.objects.end() && i->second.attempt == msg.attempt)
          drop_object(self, i);
      },
      [self](const protocol::drop_objects&) {
        auto& st = self->state;
        auto dropped = static_cast<std::uint64_t>(st.objects.size());
        st.log->warn("object store: dropping {} object(s), {} bytes (fault "
                     "injection)",
                     dropped, st.object_bytes);
        st.objects.clear();
        st.object_bytes = 0;
        return dropped;
      },
      [self](const protocol::count_objects&) {
        auto& st = self->state;
        return protocol::object_store_usage{
            static_cast<std::uint64_t>(st.objects.size()), st.object_bytes};
      },
  };
}

} // namespace

caf::actor spawn_raylet(caf::actor_system& sys, raylet_config cfg) {
  return sys.spawn(raylet_behavior, std::move(cfg));
}

} // namespace prism::actors
