// The queue of lease requests at this node: where each goes (the policy is
// prism/internal/task_placement.hpp), the leases granted, and the CPU a
// worker blocked in `get` lends to other work.

#include <algorithm>

#include <unistd.h>

#include "raylet/raylet_state.hpp"

namespace prism::actors::raylet_internal {

namespace {

internal::placement_request placement_of(const protocol::lease_request& req) {
  return {req.resources, req.affinity, req.affinity_soft};
}

// A live node other than this one whose resources could ever fit `request`,
// picked round robin among the candidates. The turn moves on whenever there
// is one, also when the caller only asks whether there is (runnable_now).
const protocol::node_info* spill_target(raylet_actor* self,
                                        const internal::resource_set& request) {
  auto& st = self->state;
  auto target =
      internal::spill_target(st.nodes, st.cfg.node, request, st.next_spill);
  if (!target)
    return nullptr;
  ++st.next_spill;
  return &st.view[*target];
}

// Sends `req` on to the raylet of a node of the view.
void send_on(raylet_actor* self, const protocol::lease_request& req,
             const protocol::node_info& n) {
  self->send(req.owner, protocol::lease_spillback{req.request_id, n.raylet,
                                                  n.node, n.contact});
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

/// What a request with node affinity asks of this raylet.
enum class affinity_outcome {
  /// Run it here (or, without affinity, wherever it fits).
  here,
  /// Sent on to its node, or refused; it leaves the queue.
  gone,
  /// Its node is not known yet: keep it queued.
  wait,
};

// Carries out the affinity verdict for `req`: a soft pin that cannot be
// honoured is dropped for good, so the request is placed as one without.
affinity_outcome apply_affinity(raylet_actor* self,
                                protocol::lease_request& req) {
  auto& st = self->state;
  auto verdict = internal::apply_affinity(placement_of(req), st.here, st.nodes);
  switch (verdict.action) {
  case internal::affinity_action::here:
    return affinity_outcome::here;
  case internal::affinity_action::unpin:
    req.affinity = node_id{};
    return affinity_outcome::here;
  case internal::affinity_action::send:
    send_on(self, req, st.view[verdict.node]);
    return affinity_outcome::gone;
  case internal::affinity_action::refuse:
    refuse(self, req, std::move(verdict.why));
    return affinity_outcome::gone;
  case internal::affinity_action::wait:
    break;
  }
  auto key = "affinity " + req.affinity.hex();
  if (st.reported_infeasible.insert(key).second)
    st.log->warn("a task must run on node {}, which is not known (yet); it "
                 "stays pending until that node joins",
                 req.affinity.hex());
  return affinity_outcome::wait;
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

// Leases a worker to `req` if one can be had; returns whether it did.
bool grant(raylet_actor* self, const protocol::lease_request& req) {
  auto& st = self->state;
  auto lease_id = st.next_lease_id;
  auto w = take_worker(self, req.job, lease_id);
  if (w == nullptr)
    return false;
  ++st.next_lease_id;
  lease l;
  l.id = lease_id;
  l.worker = w->id;
  l.owner = req.owner;
  l.granted = req.resources;
  l.cpu = req.resources.cpu_only();
  l.retriable = req.retriable;
  st.available.subtract(l.granted);
  st.lease_of_worker[w->id] = lease_id;
  if (st.watched_owners.insert(req.owner.address()).second)
    self->monitor(req.owner);
  self->send(req.owner,
             protocol::lease_grant{
                 req.request_id, lease_id, w->id, w->handle, st.cfg.node,
                 self_handle(self),
                 w->contact.empty() ? st.contact : w->contact, st.contact,
                 w->pid != 0 ? w->pid : static_cast<int>(::getpid()),
                 w->control});
  st.leases.emplace(lease_id, std::move(l));
  return true;
}

// Warns, once per shape, of a request that no node can ever run.
void report_infeasible(raylet_actor* self, const protocol::lease_request& req) {
  auto& st = self->state;
  auto shape = req.resources.to_string();
  if (st.reported_infeasible.insert(shape).second)
    st.log->warn("a task needs {{{}}} but no node has it (this one has "
                 "{{{}}}); it stays pending until a node that fits joins",
                 shape, st.cfg.resources.to_string());
}

// Carries out the placement of one request whose affinity was applied;
// returns whether it leaves the queue.
bool place(raylet_actor* self, const protocol::lease_request& req) {
  auto& st = self->state;
  auto verdict = internal::schedule(placement_of(req), st.here, st.available,
                                    st.nodes, st.next_spill);
  switch (verdict.action) {
  case internal::lease_action::grant:
    return grant(self, req);
  case internal::lease_action::no_room:
    return false;
  case internal::lease_action::spill:
    ++st.next_spill;
    send_on(self, req, st.view[verdict.node]);
    return true;
  case internal::lease_action::infeasible:
    report_infeasible(self, req);
    return false;
  }
  return false;
}

} // namespace

void request_lease(raylet_actor* self, protocol::lease_request& req) {
  // The grant goes straight to the owner, and its death is seen at once.
  auto owner_node = req.owner.node();
  auto contact = req.owner_contact;
  reach(self, owner_node, contact, [self, req = std::move(req)]() mutable {
    self->state.queue.push_back(std::move(req));
    schedule(self);
  });
}

void schedule(raylet_actor* self) {
  auto& st = self->state;
  st.short_of_workers.clear();
  // A request leaves the queue once sent on, refused or granted.
  for (auto i = st.queue.begin(); i != st.queue.end();) {
    auto verdict = apply_affinity(self, *i);
    if (verdict == affinity_outcome::gone ||
        (verdict == affinity_outcome::here && place(self, *i)))
      i = st.queue.erase(i);
    else
      ++i;
  }
}

void end_lease(raylet_actor* self, std::uint64_t lease_id) {
  auto& st = self->state;
  auto i = st.leases.find(lease_id);
  if (i == st.leases.end())
    return;
  st.available.add(i->second.granted);
  auto worker = i->second.worker;
  st.lease_of_worker.erase(worker);
  st.leases.erase(i);
  st.pool.release(worker);
  stop_if_job_finished(self, worker);
}

void lease_returned(raylet_actor* self, std::uint64_t lease_id) {
  end_lease(self, lease_id);
  schedule(self);
}

void kill_for_cancel(raylet_actor* self, std::uint64_t lease_id,
                     const caf::actor_addr& sender) {
  auto& st = self->state;
  auto i = st.leases.find(lease_id);
  // Only the owner of a lease may have its worker killed.
  if (i == st.leases.end() || i->second.owner.address() != sender)
    return;
  auto worker = i->second.worker; // the lease goes with the worker
  kill_worker(self, worker,
              "its task was cancelled with force (prism::cancel)");
}

lease* lease_of(raylet_actor* self, const worker_id& id) {
  auto& st = self->state;
  auto l = st.lease_of_worker.find(id);
  if (l == st.lease_of_worker.end())
    return nullptr;
  auto i = st.leases.find(l->second);
  return i != st.leases.end() ? &i->second : nullptr;
}

void lend_cpu(raylet_actor* self, const worker_id& worker) {
  if (auto l = lease_of(self, worker); l && !l->blocked) {
    l->blocked = true;
    l->granted.subtract(l->cpu);
    self->state.available.add(l->cpu);
    schedule(self);
  }
}

void reclaim_cpu(raylet_actor* self, const worker_id& worker) {
  if (auto l = lease_of(self, worker); l && l->blocked) {
    // Takes the CPU back even if that oversubscribes the node for a
    // while: the task must go on to finish and free it.
    l->blocked = false;
    l->granted.add(l->cpu);
    self->state.available.subtract(l->cpu);
  }
}

protocol::node_resources node_resources(raylet_actor* self) {
  auto& st = self->state;
  protocol::node_resources result{
      st.cfg.node, st.cfg.resources, st.available, {}, {}};
  for (auto& req : st.queue) {
    if (runnable_now(self, req))
      result.waiting.push_back(req.resources);
    else
      result.infeasible.push_back(req.resources);
  }
  return result;
}

void view_changed(raylet_actor* self, std::vector<protocol::node_info> nodes) {
  auto& st = self->state;
  st.view = std::move(nodes);
  st.nodes.clear();
  for (auto& n : st.view)
    st.nodes.push_back(internal::cluster_node{n.node, n.resources, n.alive});
  st.reported_infeasible.clear();
  schedule(self);
}

std::uint64_t live_node_count(raylet_actor* self) {
  auto& view = self->state.view;
  return static_cast<std::uint64_t>(std::count_if(
      view.begin(), view.end(), [](const auto& n) { return n.alive; }));
}

} // namespace prism::actors::raylet_internal
