// The life of the node's workers: they start, are taken for a lease, die or
// are killed, and go with the owner of their lease or with their job.

#include "raylet/raylet_state.hpp"
#include "worker/worker.hpp"

namespace prism::actors::raylet_internal {

worker_pool::worker* start_worker(raylet_actor* self) {
  auto& st = self->state;
  auto id = worker_id{unique_id::random()};
  auto spawned = spawn_worker(self->system(),
                              worker_config{id, st.cfg.node, self, st.cfg.gcs,
                                            st.cfg.directory,
                                            st.cfg.max_inline_bytes, nullptr});
  self->monitor(spawned.worker);
  worker_pool::worker w;
  w.id = id;
  w.handle = std::move(spawned.worker);
  w.control = std::move(spawned.control);
  st.pool.add(std::move(w));
  st.log->debug("started worker {}", id.hex());
  return st.pool.find(id);
}

namespace {

// Makes room for a worker of `job` in a full pool: stops an idle worker of
// another job. Returns whether the pool has room now.
bool make_room(raylet_actor* self, job_id job) {
  auto& st = self->state;
  if (st.pool.size() < st.cfg.max_workers)
    return true;
  auto other = st.pool.idle_of_other_job(job);
  if (other == nullptr)
    return false;
  auto victim = st.pool.remove(other->id);
  stop_idle_worker(self, *victim);
  return true;
}

} // namespace

worker_pool::worker* take_worker(raylet_actor* self, job_id job,
                                 std::uint64_t lease_id) {
  auto& st = self->state;
  if (auto w = st.pool.pop(job, lease_id))
    return w;
  if (runs_processes(self)) {
    // A process starts for the job and takes a lease once it registers.
    if (make_room(self, job))
      maybe_start_worker_process(self, job);
    return nullptr;
  }
  if (!make_room(self, job))
    return nullptr;
  start_worker(self);
  return st.pool.pop(job, lease_id);
}

void stop_idle_worker(raylet_actor* self, worker_pool::worker& w) {
  // A thread ends; a process's worker ends and the process exits.
  self->demonitor(w.handle);
  self->send_exit(w.handle, caf::exit_reason::user_shutdown);
}

void stop_if_job_finished(raylet_actor* self, const worker_id& id) {
  auto& st = self->state;
  auto w = st.pool.find(id);
  if (w == nullptr || w->lease_id != 0 || w->starting || w->hosts_actor ||
      !st.finished_jobs.contains(w->job))
    return;
  auto done = st.pool.remove(id);
  stop_idle_worker(self, *done);
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

void worker_gone(raylet_actor* self, worker_id id, const std::string& reason,
                 errc cause) {
  auto& st = self->state;
  auto w = st.pool.remove(id);
  if (!w)
    return;
  st.log->info("worker {} gone: {}", id.hex(), reason);
  if (runs_processes(self))
    kill_instance_processes(self, id);
  if (auto l = st.lease_of_worker.find(id); l != st.lease_of_worker.end()) {
    auto lease_id = l->second;
    if (auto i = st.leases.find(lease_id); i != st.leases.end())
      self->send(i->second.owner,
                 protocol::worker_lost{lease_id, id, reason, cause});
    st.lease_of_worker.erase(l);
    end_lease(self, lease_id);
  }
  schedule(self);
}

bool kill_worker(raylet_actor* self, const worker_id& id,
                 const std::string& why, errc cause) {
  auto w = self->state.pool.find(id);
  if (w == nullptr)
    return false;
  if (runs_processes(self)) {
    // Its owner lives in its process and dies with it. One still launching
    // is killed once its launch is answered (it is forgotten by then).
    auto pid = w->pid;
    worker_gone(self, id, why, cause);
    if (pid > 0)
      self->state.cfg.launcher->kill(pid);
    return true;
  }
  auto handle = w->handle;
  self->demonitor(handle);
  worker_gone(self, id, why, cause);
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
  auto& st = self->state;
  // The job's idle workers go now, its leased ones when their lease ends.
  st.finished_jobs.insert(job);
  for (auto& w : st.pool.remove_idle_of(job))
    stop_idle_worker(self, w);
  // Its processes for shared actors that host none go too; the others when
  // their last actor ends (a detached one may outlive the job).
  for (auto* w : st.pool.shared_hosts_of(job))
    if (w->actors == 0 && !w->starting)
      if (auto done = st.pool.remove(w->id))
        stop_idle_worker(self, *done);
  // Its program's fork server stays a while: the next job of the same
  // program (a driver run again, the next job of a script) forks its
  // workers instead of starting them by exec.
  self->delayed_send(self, st.cfg.fork_server_grace,
                     protocol::forget_program_atom::value, job);
}

} // namespace prism::actors::raylet_internal
