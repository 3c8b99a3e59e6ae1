// The life of the node's workers: they start, are taken for a lease, die or
// are killed, and go with the owner of their lease or with their job.

#include "raylet/raylet_state.hpp"
#include "worker/worker.hpp"

namespace prism::actors::raylet_internal {

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

void finish_job(raylet_actor* self, job_id job) {
  // The job's idle workers go; workers still leased (to a detached
  // actor of the job) return to the pool and go with the next end.
  for (auto& h : self->state.pool.remove_idle_of(job)) {
    self->demonitor(h);
    self->send_exit(h, caf::exit_reason::user_shutdown);
  }
}

} // namespace prism::actors::raylet_internal
