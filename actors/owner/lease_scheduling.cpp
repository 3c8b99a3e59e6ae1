// Lease scheduling, per scheduling key: asking raylets for leases, pushing
// ready tasks to the leased workers (as deep as the pipelining limits in
// prism/internal/pipelining.hpp allow), returning leases that stay idle,
// following spillbacks, and losing the leases of a worker or raylet that
// died; an owner whose own raylet died finds another node to ask.

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "owner/owner_state.hpp"
#include "prism/internal/pipelining.hpp"
#include "protocol/raylet_gcs.hpp"

namespace prism::actors::owner_internal {

namespace {

/// How long a lease with no work stays with the owner before it goes back to
/// the raylet; a caller that submits again within it skips the lease round
/// trip.
constexpr auto lease_idle_timeout = std::chrono::milliseconds{2};

void return_lease(owner_actor* self, std::uint64_t lease_id) {
  auto& sched = self->state.scheduling;
  auto l = sched.leases.find(lease_id);
  if (l == sched.leases.end())
    return;
  if (auto q = sched.queues.find(l->second.key); q != sched.queues.end()) {
    auto& ls = q->second.leases;
    ls.erase(std::remove(ls.begin(), ls.end(), lease_id), ls.end());
  }
  auto raylet = std::move(l->second.raylet);
  sched.leases.erase(l);
  self->send(raylet, protocol::lease_return{lease_id});
}

void push(owner_actor* self, task_entry& t, lease_entry& lease) {
  if (!set_state(self, t, internal::task_state::running))
    return;
  note_task_running(self, t, lease);
  t.lease_id = lease.id;
  lease.in_flight.push_back(t.spec.id);
  self->send(lease.handle,
             protocol::push_task{t.spec, lease.id, self_handle(self)});
}

// The request for a lease that fits the tasks of queue `q`.
protocol::lease_request lease_request_for(owner_actor* self, const key_queue& q,
                                          std::uint64_t request_id) {
  // Tasks of one key are of one function and options: the first tells
  // whether a killed run would run again.
  bool retriable = true;
  if (!q.ready.empty())
    if (auto t = self->state.tasks.entries.find(q.ready.front());
        t != self->state.tasks.entries.end())
      retriable = t->second.retries_left != 0;
  return protocol::lease_request{
      request_id, q.job,           q.resources,         self_handle(self),
      q.affinity, q.affinity_soft, self->state.contact, retriable};
}

// Pushes the ready tasks of queue `q` to its leases, each to the lease that
// `pick_lease` chooses, until the queue is empty or every lease is full.
void push_ready(owner_actor* self, key_queue& q) {
  auto& st = self->state;
  if (q.ready.empty())
    return;
  auto depth = internal::pipeline_depth(q.avg_run_ns);
  auto& leases = st.scheduling.scratch_leases;
  auto& in_flight = st.scheduling.scratch_in_flight;
  leases.clear();
  in_flight.clear();
  for (auto lid : q.leases) {
    auto& l = st.scheduling.leases[lid];
    leases.push_back(&l);
    in_flight.push_back(l.in_flight.size());
  }
  while (!q.ready.empty()) {
    auto best = internal::pick_lease(in_flight, depth);
    if (!best)
      break;
    auto t = st.tasks.entries.find(q.ready.front());
    q.ready.pop_front();
    if (t == st.tasks.entries.end())
      continue; // ended while it waited
    push(self, t->second, *leases[*best]);
    in_flight[*best] = leases[*best]->in_flight.size();
  }
}

// Pushes the ready tasks of queue `q` (scheduling key `key`) to its leases,
// and asks for more leases while tasks wait.
void dispatch(owner_actor* self, const std::string& key, key_queue& q) {
  auto& st = self->state;
  push_ready(self, q);
  // Without a raylet, requests wait until the owner has found a new one.
  if (!st.cfg.raylet)
    return;
  auto more =
      internal::lease_requests_to_send(q.ready.size(), q.pending_requests);
  for (std::size_t i = 0; i < more; ++i) {
    ++q.pending_requests;
    auto rid = st.scheduling.next_request_id++;
    st.scheduling.requests.emplace(
        rid, lease_scheduling_state::request{key, st.cfg.raylet});
    self->send(st.cfg.raylet, lease_request_for(self, q, rid));
  }
}

// A lease request was answered: it is no longer in flight. Returns its
// scheduling key, or nothing if it was unknown.
std::optional<std::string> answered(owner_actor* self,
                                    std::uint64_t request_id) {
  auto& sched = self->state.scheduling;
  auto r = sched.requests.find(request_id);
  if (r == sched.requests.end())
    return std::nullopt;
  auto key = std::move(r->second.key);
  sched.requests.erase(r);
  auto& q = sched.queues[key];
  if (q.pending_requests > 0)
    --q.pending_requests;
  return key;
}

// Forgets the lease requests waiting at `raylet`; returns their keys.
std::vector<std::string> requests_lost_with(owner_actor* self,
                                            const caf::actor_addr& raylet) {
  auto& sched = self->state.scheduling;
  std::vector<std::string> keys;
  for (auto i = sched.requests.begin(); i != sched.requests.end();) {
    if (i->second.raylet.address() == raylet) {
      keys.push_back(i->second.key);
      auto& q = sched.queues[i->second.key];
      if (q.pending_requests > 0)
        --q.pending_requests;
      i = sched.requests.erase(i);
    } else {
      ++i;
    }
  }
  return keys;
}

} // namespace

// -- queueing and pushing -----------------------------------------------------

void queue_ready(owner_actor* self, const task_id& tid, const task_entry& t) {
  auto [q, added] = self->state.scheduling.queues.try_emplace(t.key);
  if (added) {
    q->second.resources = t.spec.resources;
    q->second.job = t.spec.job;
    q->second.affinity = t.spec.affinity;
    q->second.affinity_soft = t.spec.affinity_soft;
  }
  q->second.ready.push_back(tid);
  dispatch(self, q->first, q->second);
}

void dispatch(owner_actor* self, const std::string& key) {
  auto& queues = self->state.scheduling.queues;
  if (auto q = queues.find(key); q != queues.end())
    dispatch(self, key, q->second);
}

lease_entry* run_ended_on_lease(owner_actor* self, std::uint64_t lease_id,
                                const task_id& tid, const std::string& key,
                                std::int64_t run_ns) {
  auto& sched = self->state.scheduling;
  lease_entry* lease = nullptr;
  if (auto l = sched.leases.find(lease_id); l != sched.leases.end()) {
    lease = &l->second;
    auto& in_flight = lease->in_flight;
    if (auto i = std::find(in_flight.begin(), in_flight.end(), tid);
        i != in_flight.end())
      in_flight.erase(i);
  }
  // A run skipped (cancelled before it began) says nothing of how long
  // the key's runs take.
  if (run_ns >= 0) {
    auto& q = sched.queues[key];
    q.avg_run_ns =
        internal::next_avg_run_ns(q.avg_run_ns, static_cast<double>(run_ns));
  }
  return lease;
}

// -- idle leases --------------------------------------------------------------

// A lease without work is kept for a moment, then returned. One timer per
// owner checks the idle leases, not one per lease going idle: a timer per
// finished task would keep CAF's clock thread busy on every short task.
void maybe_idle(owner_actor* self, lease_entry& l) {
  if (!l.in_flight.empty())
    return;
  l.idle_since = std::chrono::steady_clock::now();
  if (!self->state.scheduling.idle_check_pending) {
    self->state.scheduling.idle_check_pending = true;
    self->delayed_send(self, lease_idle_timeout, lease_idle_atom::value);
  }
}

// Returns the leases that have been idle for `lease_idle_timeout`, with no
// task waiting for them; checks again later if some are idle for less.
void return_idle_leases(owner_actor* self) {
  auto& sched = self->state.scheduling;
  sched.idle_check_pending = false;
  auto now = std::chrono::steady_clock::now();
  auto next = std::chrono::steady_clock::time_point::max();
  std::vector<std::uint64_t> expired;
  std::unordered_set<std::string> keys;
  for (auto& [id, l] : sched.leases) {
    if (!l.in_flight.empty())
      continue;
    auto q = sched.queues.find(l.key);
    if (q != sched.queues.end() && !q->second.ready.empty()) {
      // Tasks wait while a lease of their key is idle: those are tasks that
      // ended while queued, which dispatching drops.
      keys.insert(l.key);
      next = std::min(next, now + lease_idle_timeout);
      continue;
    }
    auto due = l.idle_since + lease_idle_timeout;
    if (due <= now)
      expired.push_back(id);
    else
      next = std::min(next, due);
  }
  for (auto id : expired)
    return_lease(self, id);
  for (auto& key : keys)
    dispatch(self, key);
  if (next != std::chrono::steady_clock::time_point::max()) {
    sched.idle_check_pending = true;
    self->delayed_send(self, next - now, lease_idle_atom::value);
  }
}

// -- raylets' answers ---------------------------------------------------------

void watch_raylet(owner_actor* self, const caf::actor& raylet) {
  if (self->state.scheduling.watched_raylets.insert(raylet.address()).second)
    self->monitor(raylet);
}

namespace {

void take_lease(owner_actor* self, protocol::lease_grant& g) {
  auto& sched = self->state.scheduling;
  auto answered_key = answered(self, g.request_id);
  if (!answered_key) {
    self->send(g.raylet, protocol::lease_return{g.lease_id});
    return;
  }
  auto key = std::move(*answered_key);
  auto& q = sched.queues[key];
  auto& l = sched.leases[g.lease_id];
  l.id = g.lease_id;
  l.worker = g.worker;
  l.node = g.node;
  l.pid = g.worker_pid;
  l.handle = std::move(g.worker_handle);
  l.control = std::move(g.worker_control);
  l.raylet = std::move(g.raylet);
  l.key = key;
  q.leases.push_back(g.lease_id);
  dispatch(self, key);
  maybe_idle(self, l);
}

} // namespace

// Tasks go straight to the worker's process, and the lease straight back to
// the raylet's: this owner connects to both first.
void lease_granted(owner_actor* self, protocol::lease_grant& g) {
  auto worker_node = g.worker_handle.node();
  auto raylet_node = g.raylet.node();
  auto worker_contact = g.worker_contact;
  auto raylet_contact = g.raylet_contact;
  reach(self, worker_node, worker_contact,
        [self, raylet_node, raylet_contact, g = std::move(g)]() mutable {
          reach(self, raylet_node, raylet_contact,
                [self, g = std::move(g)]() mutable { take_lease(self, g); });
        });
}

// The raylet could not run a request; its node named another one that can.
void lease_spilled(owner_actor* self, protocol::lease_spillback& msg) {
  auto& sched = self->state.scheduling;
  auto r = sched.requests.find(msg.request_id);
  if (r == sched.requests.end())
    return;
  if (!msg.raylet) {
    // The node named is gone from this process: ask the first one again.
    auto& q = sched.queues[r->second.key];
    self->send(r->second.raylet, lease_request_for(self, q, msg.request_id));
    return;
  }
  auto& q = sched.queues[r->second.key];
  r->second.raylet = msg.raylet;
  watch_raylet(self, msg.raylet);
  auto raylet = msg.raylet;
  auto request = lease_request_for(self, q, msg.request_id);
  reach(self, raylet.node(), msg.raylet_contact,
        [self, raylet, request = std::move(request)]() mutable {
          self->send(raylet, std::move(request));
        });
}

// No node will ever grant the request: the tasks queued for it fail.
void lease_refused(owner_actor* self, const protocol::lease_refused& msg) {
  auto key = answered(self, msg.request_id);
  if (!key)
    return;
  auto& q = self->state.scheduling.queues[*key];
  auto refused = std::move(q.ready);
  q.ready.clear();
  for (auto& tid : refused)
    fail_task(self, tid, msg.error);
}

// -- deaths -------------------------------------------------------------------

namespace {

/// The longest wait between two asks for a new raylet.
constexpr auto max_home_retry = std::chrono::milliseconds{2000};
/// How long the control store may take to list the nodes. A restarting one
/// answers once it is back (messages wait at its endpoint); one asked just
/// before its process died never does, and is asked again.
constexpr auto home_ask_timeout = std::chrono::seconds{3};

std::string host_of(const std::string& contact) {
  auto colon = contact.rfind(':');
  return colon == std::string::npos ? contact : contact.substr(0, colon);
}

void ask_again(owner_actor* self, std::chrono::milliseconds retry) {
  auto next = std::min(retry * 2, max_home_retry);
  self->delayed_send(self, retry, find_home_atom::value,
                     static_cast<std::int64_t>(next.count()));
}

// The owner's requests go to `n`'s raylet from now on, and so do those
// that waited.
void move_home(owner_actor* self, const protocol::node_info& n) {
  auto& st = self->state;
  st.cfg.raylet = n.raylet;
  st.cfg.node = n.node;
  st.log->info("owner {}: its node's raylet died; node {} takes its place",
               st.cfg.self.hex(), n.node.hex());
  watch_raylet(self, n.raylet);
  reach(self, n.raylet.node(), n.contact, [self] {
    auto& queues = self->state.scheduling.queues;
    std::vector<std::string> keys;
    for (auto& [key, q] : queues)
      if (!q.ready.empty())
        keys.push_back(key);
    for (auto& key : keys)
      dispatch(self, key);
  });
}

} // namespace

void find_home(owner_actor* self, std::chrono::milliseconds retry) {
  auto& st = self->state;
  // Found meanwhile.
  if (st.cfg.raylet)
    return;
  self->request(st.cfg.gcs, home_ask_timeout, protocol::list_nodes{})
      .then(
          [self, retry](std::vector<protocol::node_info>& nodes) {
            auto& st = self->state;
            if (st.cfg.raylet)
              return;
            // A live node, on this process's host if one is.
            auto here = host_of(st.contact);
            const protocol::node_info* best = nullptr;
            for (const auto& n : nodes) {
              // The dead raylet may still be listed while a restarted
              // control store waits for its nodes to come back.
              if (!n.alive || !n.raylet ||
                  n.raylet.address() == st.scheduling.lost_home)
                continue;
              if (best == nullptr ||
                  (!here.empty() && host_of(n.contact) == here &&
                   host_of(best->contact) != here))
                best = &n;
            }
            if (best == nullptr) {
              ask_again(self, retry);
              return;
            }
            move_home(self, *best);
          },
          [self, retry](caf::error& err) {
            self->state.log->info("owner {}: no node for it yet: {}",
                                  self->state.cfg.self.hex(),
                                  self->system().render(err));
            ask_again(self, retry);
          });
}

// A raylet is gone with its node: its leases and their tasks are lost, and
// requests waiting there go to this owner's own raylet again. If it was
// this owner's own, they wait for another.
void raylet_gone(owner_actor* self, const caf::actor_addr& raylet) {
  auto& st = self->state;
  auto& sched = st.scheduling;
  sched.watched_raylets.erase(raylet);
  if (st.cfg.raylet && st.cfg.raylet.address() == raylet) {
    st.cfg.raylet = nullptr;
    sched.lost_home = raylet;
    find_home(self, std::chrono::milliseconds{100});
  }
  // Objects kept there are lost; they are rebuilt when someone needs them.
  objects_lost_with(self, raylet);
  std::vector<std::pair<std::uint64_t, worker_id>> lost;
  for (auto& [id, l] : sched.leases)
    if (l.raylet.address() == raylet)
      lost.emplace_back(id, l.worker);
  for (auto& [id, worker] : lost)
    worker_lost(self, protocol::worker_lost{id, worker, "its node died"});
  for (auto& key : requests_lost_with(self, raylet))
    dispatch(self, key);
}

void worker_lost(owner_actor* self, const protocol::worker_lost& msg) {
  auto& st = self->state;
  auto l = st.scheduling.leases.find(msg.lease_id);
  if (l == st.scheduling.leases.end())
    return;
  auto key = l->second.key;
  auto lost = std::move(l->second.in_flight);
  if (auto q = st.scheduling.queues.find(key);
      q != st.scheduling.queues.end()) {
    auto& ls = q->second.leases;
    ls.erase(std::remove(ls.begin(), ls.end(), msg.lease_id), ls.end());
  }
  st.scheduling.leases.erase(l);
  st.log->info("worker {} of lease {} lost: {}; {} task(s) affected",
               msg.worker.hex(), msg.lease_id, msg.reason, lost.size());
  for (auto& tid : lost)
    run_lost(self, tid, msg.reason, msg.cause);
  dispatch(self, key);
}

} // namespace prism::actors::owner_internal
