// Workers as processes: each is the job's own program, started in worker
// mode with a one-time token, bound to that job for its life. It registers
// through the node's door, or is killed when its time to do so is up; it
// exits when its raylet dies (its connection drops); idle ones above the
// node's CPUs go after a while.

#include <algorithm>
#include <cmath>
#include <csignal>

#include <caf/actor_system_config.hpp>

#include "raylet/raylet_state.hpp"
#include "worker/instance_wire.hpp"
#include "worker/worker_process.hpp"

namespace prism::actors::raylet_internal {

namespace {

/// Worker processes of one job that end before they register, in a row,
/// before the job's waiting requests are refused.
constexpr std::uint32_t max_failed_starts = 3;

std::size_t node_cpus(const raylet_actor* self) {
  auto cpus = self->state.cfg.resources.quantity("CPU");
  return static_cast<std::size_t>(std::max(1.0, std::ceil(cpus)));
}

/// Worker processes starting at once while actors wait for theirs, per CPU.
/// A process forked for an actor takes 3 to 4 ms of CPU to start here, and
/// spends most of its start waiting on its node and its door: with one per
/// CPU the node's cores idle between the steps of the starts.
constexpr std::size_t actor_starts_per_cpu = 4;

/// Worker processes starting at once: as configured, else `per_cpu` for
/// each of the node's CPUs.
std::size_t max_starting(const raylet_actor* self, std::size_t per_cpu = 1) {
  auto n = self->state.cfg.max_starting_workers;
  return n != 0 ? n : per_cpu * node_cpus(self);
}

void start_failed(raylet_actor* self, job_id job, const std::string& how) {
  auto& st = self->state;
  auto& [count, last] = st.failed_starts[job];
  last = how;
  if (++count < max_failed_starts)
    return;
  st.failed_starts.erase(job);
  // More processes would end the same way.
  refuse_job(self, job, errc::worker_crashed,
             "worker processes of this job end before they register (" +
                 std::to_string(max_failed_starts) +
                 " in a row; the last one " + how +
                 "); a program that runs Prism tasks must call prism::init "
                 "(or prism::serve_if_worker) first in main");
}

// Launches a worker process for `job`; it hosts actor instances if
// `hosts_actor`: one, or any number of the job's shared ones if `shared`.
// Returns its id at once: the launcher answers later with `worker_launched`,
// and a node that waits for a fork server still serves.
worker_id launch(raylet_actor* self, job_id job, bool hosts_actor, bool shared,
                 const worker_program& program) {
  auto& st = self->state;
  worker_pool::worker w;
  w.id = worker_id{unique_id::random()};
  w.job = job;
  w.hosts_actor = hosts_actor;
  w.shares_actors = shared;
  w.token = unique_id::random().hex() + unique_id::random().hex();
  w.started_at = std::chrono::steady_clock::now();
  auto raylet = self->address();
  auto id = w.id;
  // The door and TLS entries the launcher has (see use_worker_processes).
  auto env = std::vector<std::string>{worker_token_entry(w.token)};
  st.pool.add_starting(std::move(w));
  ++st.processes_started;
  st.cfg.launcher->launch(
      program, env,
      [raylet, id](pid_t pid, const std::string& how) {
        if (auto r = caf::actor_cast<caf::actor>(raylet))
          caf::anon_send(r, protocol::worker_exited{id, pid, how});
      },
      [raylet, id](const process_launcher::launched& l) {
        if (auto r = caf::actor_cast<caf::actor>(raylet))
          caf::anon_send(r, protocol::worker_launched{id, l.pid, l.forked,
                                                      l.spare, l.error});
        else if (l.pid > 0)
          ::kill(l.pid, SIGKILL); // Its node is gone.
      },
      job);
  self->delayed_send(self, st.cfg.worker_start_timeout,
                     protocol::check_worker_process{id});
  return id;
}

// A worker process ended, or could not start, before it registered: the
// instance it was to host fails, or its job counts a failed start.
void ended_before_registering(raylet_actor* self, const worker_id& id,
                              job_id job, const std::string& how) {
  auto& st = self->state;
  st.pool.remove(id);
  start_queued_hosts(self);
  if (auto p = st.pending_hosts.find(id); p != st.pending_hosts.end()) {
    auto instances = std::move(p->second);
    st.pending_hosts.erase(p);
    for (auto& instance : instances)
      host_failed(self, instance, "its worker process " + how);
    return;
  }
  start_failed(self, job, how);
  schedule(self);
}

// The instances `batch` could not start in the worker process `id`.
void not_hosted(raylet_actor* self, const worker_id& id,
                const protocol::host_actors& batch, const std::string& why) {
  for (auto& instance : batch) {
    host_failed(self, instance, why);
    auto w = self->state.pool.find(id);
    if (w == nullptr)
      continue;
    if (w->shares_actors)
      instance_ended_in(self, *w);
    else
      kill_worker_process(self, *w, "did not host its actor");
  }
}

// Hands the instances of `batch` to the registered worker process `id`: the
// hosts it answers with are watched as any other.
void hand_to(raylet_actor* self, const worker_id& id, const caf::actor& worker,
             protocol::host_actors batch) {
  auto& st = self->state;
  // What is needed of the instances once the process answers: not their
  // arguments.
  protocol::host_actors instances;
  instances.reserve(batch.size());
  for (auto& msg : batch) {
    auto& instance = instances.emplace_back();
    instance.spec.id = msg.spec.id;
    instance.spec.resources = msg.spec.resources;
    instance.incarnation = msg.incarnation;
  }
  self->request(worker, st.cfg.worker_start_timeout, std::move(batch))
      .then(
          [self, id, instances](std::vector<caf::actor>& hosts) {
            if (hosts.size() != instances.size()) {
              not_hosted(self, id, instances,
                         "its worker process answered for " +
                             std::to_string(hosts.size()) + " of " +
                             std::to_string(instances.size()) + " instances");
              return;
            }
            for (std::size_t i = 0; i < hosts.size(); ++i) {
              auto& instance = instances[i];
              self->monitor(hosts[i]);
              self->state.hosts.emplace(
                  hosts[i].address(),
                  hosted_instance{hosts[i],
                                  held_resources(instance.spec.resources),
                                  instance.spec.id, instance.incarnation, id});
            }
          },
          [self, id, instances](caf::error& err) {
            not_hosted(self, id, instances,
                       "its worker process did not host it (" +
                           self->system().render(err) + ")");
          });
}

// The process started for instances registered: it hosts them now.
void hand_instances(raylet_actor* self, const worker_id& id,
                    const caf::actor& worker) {
  auto& st = self->state;
  protocol::host_actors instances;
  if (auto p = st.pending_hosts.find(id); p != st.pending_hosts.end()) {
    instances = std::move(p->second);
    st.pending_hosts.erase(p);
  }
  if (instances.empty()) {
    // Its instances were dropped while it started: it has nothing to host.
    if (auto w = st.pool.remove(id))
      stop_idle_worker(self, *w);
    return;
  }
  hand_to(self, id, worker, std::move(instances));
}

// Gives the instance `msg` to the actor host process `w`: at once if it
// runs, once it registers if it starts.
void host_in(raylet_actor* self, worker_pool::worker& w,
             protocol::host_actor msg) {
  auto& st = self->state;
  ++w.actors;
  if (w.starting) {
    st.pending_hosts[w.id].push_back(std::move(msg));
    return;
  }
  st.to_hand[w.id].push_back(std::move(msg));
  if (!st.hand_scheduled) {
    st.hand_scheduled = true;
    self->send(self, hand_atom::value);
  }
}

// The process of `job` that hosts its next shared instance, or nullptr if
// one more should start for it: the one hosting the fewest, once the job
// has a process per CPU here, or no more may start now.
worker_pool::worker* shared_host_for(raylet_actor* self, job_id job) {
  auto hosts = self->state.pool.shared_hosts_of(job);
  if (hosts.empty())
    return nullptr;
  auto least = *std::min_element(
      hosts.begin(), hosts.end(),
      [](const auto* x, const auto* y) { return x->actors < y->actors; });
  if (least->actors == 0 || hosts.size() >= node_cpus(self) ||
      self->state.pool.starting() >= max_starting(self, actor_starts_per_cpu))
    return least;
  return nullptr;
}

// Starts the instance `msg` in a process: a shared one that runs or starts,
// or one launched for it. Returns false, leaving `msg` as it was, if it
// must wait (for a start-up slot, or for its job's program to be checked).
bool try_host(raylet_actor* self, protocol::host_actor& msg) {
  auto& st = self->state;
  auto job = msg.spec.job;
  // An actor of its own process is hosted with its job's shared ones, its
  // instance in a process forked for it alone.
  msg.instance_process = !msg.spec.shared_host && st.cfg.instance_processes;
  bool shared = msg.spec.shared_host || msg.instance_process;
  if (shared)
    if (auto w = shared_host_for(self, job)) {
      host_in(self, *w, std::move(msg));
      return true;
    }
  if (st.pool.starting() >= max_starting(self, actor_starts_per_cpu))
    return false;
  auto program = program_of(self, job);
  if (program == nullptr)
    return false;
  auto id = launch(self, job, true, shared, *program);
  host_in(self, *st.pool.find(id), std::move(msg));
  return true;
}

} // namespace

void host_failed(raylet_actor* self, const protocol::host_actor& msg,
                 const std::string& why) {
  auto& st = self->state;
  st.log->warn("actor {} (instance {}) could not start: {}", msg.spec.id.hex(),
               msg.incarnation, why);
  st.available.add(msg.spec.resources);
  self->send(st.cfg.gcs,
             protocol::actor_instance_lost{msg.spec.id, msg.incarnation, why});
  schedule(self);
}

bool drop_unstarted_host(raylet_actor* self,
                         const protocol::drop_instance& msg) {
  auto& st = self->state;
  auto is_it = [&](const protocol::host_actor& h) {
    return h.spec.id == msg.actor && h.incarnation == msg.incarnation;
  };
  if (auto q = std::find_if(st.hosts_to_start.begin(), st.hosts_to_start.end(),
                            is_it);
      q != st.hosts_to_start.end()) {
    st.available.add(q->spec.resources);
    st.hosts_to_start.erase(q);
    return true;
  }
  auto waiting = [&](auto& by_process) {
    for (auto& [id, instances] : by_process) {
      auto q = std::find_if(instances.begin(), instances.end(), is_it);
      if (q == instances.end())
        continue;
      // A process left with no instance to host stops once it registers,
      // or once it idled as long as an idle worker.
      st.available.add(q->spec.resources);
      instances.erase(q);
      if (auto w = st.pool.find(id))
        instance_ended_in(self, *w);
      return true;
    }
    return false;
  };
  return waiting(st.pending_hosts) || waiting(st.to_hand);
}

void hand_queued_instances(raylet_actor* self) {
  auto& st = self->state;
  st.hand_scheduled = false;
  auto queued = std::move(st.to_hand);
  st.to_hand.clear();
  for (auto& [id, batch] : queued) {
    if (batch.empty())
      continue;
    auto w = st.pool.find(id);
    if (w == nullptr || w->disconnected || !w->killed_for.empty()) {
      // Its process ended since: each instance is lost, as if it had
      // been hosted there.
      for (auto& instance : batch)
        host_failed(self, instance, "its worker process ended");
      continue;
    }
    hand_to(self, id, w->handle, std::move(batch));
  }
}

void start_queued_hosts(raylet_actor* self) {
  auto& st = self->state;
  // In order, but an instance whose job's program is not checked yet waits
  // without holding up the others, and a shared one may go to a process
  // that runs while others wait for a start-up slot.
  for (auto i = st.hosts_to_start.begin(); i != st.hosts_to_start.end();) {
    if (try_host(self, *i))
      i = st.hosts_to_start.erase(i);
    else
      ++i;
  }
}

void instance_ended_in(raylet_actor* self, worker_pool::worker& w) {
  auto& st = self->state;
  if (w.actors > 0)
    --w.actors;
  if (w.actors > 0)
    return;
  w.idle_since = std::chrono::steady_clock::now();
  // One still starting stops once it registers with nothing to host.
  if (w.starting)
    return;
  if (!w.shares_actors || st.finished_jobs.contains(w.job))
    if (auto done = st.pool.remove(w.id))
      stop_idle_worker(self, *done);
}

void refuse_job(raylet_actor* self, job_id job, errc code,
                const std::string& why) {
  auto& st = self->state;
  detail::error_info err;
  err.code = code;
  err.message = why;
  st.log->error("job {}: {}", job.value, why);
  std::erase_if(st.queue, [&](const protocol::lease_request& r) {
    if (r.job != job)
      return false;
    self->send(r.owner, protocol::lease_refused{r.request_id, err});
    return true;
  });
  std::vector<protocol::host_actor> failed;
  std::erase_if(st.hosts_to_start, [&](protocol::host_actor& h) {
    if (h.spec.job != job)
      return false;
    failed.push_back(std::move(h));
    return true;
  });
  for (auto& h : failed)
    host_failed(self, h, why);
}

void maybe_start_worker_process(raylet_actor* self, job_id job) {
  auto& st = self->state;
  auto& wanted = st.short_of_workers[job];
  ++wanted;
  if (st.pool.starting(job) >= wanted ||
      st.pool.starting() >= max_starting(self))
    return;
  auto program = program_of(self, job);
  if (program == nullptr)
    return; // Looked up and checked first; scheduled again then.
  launch(self, job, false, false, *program);
}

void host_in_process(raylet_actor* self, protocol::host_actor& msg) {
  auto& st = self->state;
  st.available.subtract(msg.spec.resources);
  // The queue is gone over when what it waits for changes; a new instance
  // waits behind it only if it cannot start now either.
  if (!try_host(self, msg))
    st.hosts_to_start.push_back(std::move(msg));
}

caf::result<protocol::worker_welcome>
worker_hello(raylet_actor* self, const protocol::worker_hello& msg) {
  auto& st = self->state;
  auto w = st.pool.find_token(msg.token);
  // Its launch's answer may still be on its way (pid 0 until then).
  if (w == nullptr || (msg.pid != 0 && w->pid != 0 && msg.pid != w->pid)) {
    st.log->warn("refused a worker process (pid {}): unknown token", msg.pid);
    return caf::make_error(caf::sec::request_receiver_down,
                           "this node started no worker with that token");
  }
  if (w->pid == 0)
    w->pid = msg.pid;
  return protocol::worker_welcome{w->id,      st.cfg.node,
                                  w->job,     self_handle(self),
                                  st.cfg.gcs, st.cfg.max_inline_bytes};
}

caf::result<bool> worker_ready(raylet_actor* self,
                               const protocol::worker_ready& msg) {
  auto& st = self->state;
  auto w = st.pool.find_token(msg.token);
  if (w == nullptr || !msg.handle)
    return caf::make_error(caf::sec::request_receiver_down,
                           "this node started no worker with that token");
  auto id = w->id;
  auto hosts_actor = w->hosts_actor;
  st.failed_starts.erase(w->job);
  self->monitor(msg.handle);
  st.pool.registered(id, msg.handle, msg.control, msg.contact);
  std::chrono::duration<double, std::milli> took =
      std::chrono::steady_clock::now() - w->started_at;
  st.log->info("worker process {} ({}) of job {} registered {:.1f} ms after "
               "its start ({})",
               w->pid, id.hex(), w->job.value, took.count(),
               w->spare    ? "forked, a spare"
               : w->forked ? "forked"
                           : "exec");
  start_queued_hosts(self);
  if (hosts_actor)
    hand_instances(self, id, msg.handle);
  // Its start-up slot is free, or it is a worker to lease: a request that
  // waited for either goes on now.
  schedule(self);
  // A task worker's job may have finished while it started, with nothing
  // left to run.
  if (!hosts_actor)
    stop_if_job_finished(self, id);
  return true;
}

/// How a process that ended well ended (`describe_exit`).
constexpr std::string_view clean_exit = "exited with code 0";

caf::result<std::int32_t>
start_instance_process(raylet_actor* self,
                       const protocol::start_instance_process& msg) {
  auto& st = self->state;
  // Only a process of the job that hosts its actors asks.
  worker_pool::worker* host = nullptr;
  if (auto sender = self->current_sender(); sender && runs_processes(self))
    for (auto* w : st.pool.shared_hosts_of(msg.job))
      if (w->handle && w->handle.node() == sender->node())
        host = w;
  if (host == nullptr)
    return caf::make_error(caf::sec::unexpected_message,
                           "only a worker process of the job that hosts its "
                           "actors starts instance processes");
  auto program = program_of(self, msg.job);
  if (program == nullptr)
    return caf::make_error(caf::sec::runtime_error,
                           "the program of job " +
                               std::to_string(msg.job.value) +
                               " is not known on this node");
  if (msg.token.empty() || st.instance_processes.count(msg.token) > 0)
    return caf::make_error(caf::sec::unexpected_message,
                           "an instance process needs a token of its own");
  // Taken before the promise, which takes the sender from the message.
  auto requester = caf::actor_cast<caf::actor>(self->current_sender());
  auto rp = self->make_response_promise<std::int32_t>();
  st.instance_processes.emplace(
      msg.token, raylet_state::instance_process{host->id,
                                                std::move(requester),
                                                msg.worker,
                                                0,
                                                ++st.instance_starts,
                                                {},
                                                rp});
  auto raylet = self->address();
  auto token = msg.token;
  st.cfg.launcher->launch(
      *program,
      {std::string{instance_wire::socket_variable} + "=" + msg.socket,
       std::string{instance_wire::token_variable} + "=" + msg.token},
      [raylet, token](pid_t pid, const std::string& how) {
        if (auto r = caf::actor_cast<caf::actor>(raylet))
          caf::anon_send(r, protocol::instance_process_exited{token, pid, how});
      },
      [raylet, token](const process_launcher::launched& l) {
        if (auto r = caf::actor_cast<caf::actor>(raylet))
          caf::anon_send(
              r, protocol::instance_process_launched{token, l.pid, l.error});
        else if (l.pid > 0)
          ::kill(l.pid, SIGKILL); // Its node is gone.
      },
      msg.job, true);
  return rp;
}

void instance_process_launched(raylet_actor* self,
                               const protocol::instance_process_launched& msg) {
  auto& st = self->state;
  auto p = st.instance_processes.find(msg.token);
  if (p == st.instance_processes.end()) {
    // Its host ended while it started.
    if (msg.pid > 0)
      st.cfg.launcher->kill(msg.pid);
    return;
  }
  if (!msg.error.empty()) {
    st.log->error("cannot start an instance process: {}", msg.error);
    p->second.started.deliver(caf::make_error(
        caf::sec::runtime_error, "no process started: " + msg.error));
    st.instance_processes.erase(p);
    return;
  }
  p->second.pid = msg.pid;
  p->second.started.deliver(msg.pid);
}

void instance_process_exited(raylet_actor* self,
                             const protocol::instance_process_exited& msg) {
  auto& st = self->state;
  auto p = st.instance_processes.find(msg.token);
  if (p == st.instance_processes.end() || p->second.pid != msg.pid)
    return;
  st.log->debug("instance process {} {}", msg.pid, msg.how);
  // One that exited other than as its host had it (the end of its socket)
  // failed, as a worker process that ends on its own does.
  if (p->second.killed_for.empty() && msg.how != clean_exit)
    ++st.processes_failed;
  if (msg.pid == st.memory_victim_pid)
    st.memory_victim_pid = 0; // Its memory is free: the monitor goes on.
  auto report = msg;
  if (!p->second.killed_for.empty())
    report.how = "was killed: " + p->second.killed_for;
  self->send(p->second.requester, std::move(report));
  st.instance_processes.erase(p);
}

void kill_instance_processes(raylet_actor* self, const worker_id& host) {
  auto& st = self->state;
  // Each reads the end of its host's socket and exits; one that does not
  // (stopped, or its reading thread stuck) goes all the same.
  std::vector<caf::typed_response_promise<std::int32_t>> unanswered;
  std::erase_if(st.instance_processes, [&](const auto& entry) {
    const auto& p = entry.second;
    if (p.host != host)
      return false;
    if (p.pid > 0)
      st.cfg.launcher->kill(p.pid);
    else
      unanswered.push_back(p.started);
    return true;
  });
  for (auto& rp : unanswered)
    rp.deliver(
        caf::make_error(caf::sec::runtime_error, "its host's process ended"));
}

void worker_launched(raylet_actor* self, const protocol::worker_launched& msg) {
  auto& st = self->state;
  auto w = st.pool.find(msg.worker);
  if (!msg.error.empty()) {
    st.log->error("cannot start a worker process: {}", msg.error);
    if (w != nullptr)
      ended_before_registering(self, msg.worker, w->job,
                               "could not start: " + msg.error);
    return;
  }
  if (w == nullptr) {
    // Forgotten while it started (its job finished, its node stops).
    st.cfg.launcher->kill(msg.pid);
    return;
  }
  w->pid = msg.pid;
  w->forked = msg.forked;
  w->spare = msg.spare;
  st.log->debug("started worker process {} ({}) for job {}{}", w->pid,
                msg.worker.hex(), w->job.value,
                w->hosts_actor ? " to host an actor" : "");
  if (!w->killed_for.empty())
    st.cfg.launcher->kill(w->pid);
}

void worker_exited(raylet_actor* self, const protocol::worker_exited& msg) {
  auto& st = self->state;
  if (msg.pid == st.memory_victim_pid)
    st.memory_victim_pid = 0; // Its memory is free: the monitor goes on.
  auto w = st.pool.find(msg.worker);
  if (w == nullptr || w->pid != msg.pid)
    return; // Stopped or killed on purpose; already forgotten.
  auto how = w->killed_for.empty() ? msg.how : w->killed_for;
  if (w->killed_for.empty())
    ++st.processes_failed;
  if (w->starting) {
    st.log->warn("worker process {} {} before it registered", msg.pid, how);
    ended_before_registering(self, msg.worker, w->job,
                             "(pid " + std::to_string(msg.pid) + ") " + how +
                                 " before it registered");
    return;
  }
  self->demonitor(w->handle);
  worker_gone(self, msg.worker,
              "its process (pid " + std::to_string(msg.pid) + ") " + how);
}

void check_worker_process(raylet_actor* self, const worker_id& id) {
  auto& st = self->state;
  auto w = st.pool.find(id);
  if (w == nullptr)
    return;
  if (w->starting) {
    // Its exit report logs it.
    kill_worker_process(
        self, *w,
        "did not register within " +
            std::to_string(st.cfg.worker_start_timeout.count()) +
            " ms and was killed");
  } else if (w->disconnected) {
    kill_worker_process(self, *w, "lost its connection and was killed");
  }
}

void worker_disconnected(raylet_actor* self, worker_pool::worker& w) {
  // The process is dead or dying: its exit report, due any moment, says
  // how; one that lingers is killed.
  w.disconnected = true;
  self->delayed_send(self, std::chrono::seconds{1},
                     protocol::check_worker_process{w.id});
}

void kill_worker_process(raylet_actor* self, worker_pool::worker& w,
                         const std::string& why) {
  if (w.killed_for.empty())
    w.killed_for = why;
  // One still launching is killed once its launch is answered.
  if (w.pid > 0)
    self->state.cfg.launcher->kill(w.pid);
}

void reap_idle_workers(raylet_actor* self) {
  auto& st = self->state;
  auto cpus = node_cpus(self);
  auto now = std::chrono::steady_clock::now();
  auto live = st.pool.task_workers();
  for (auto* w : st.pool.idle_oldest_first()) {
    if (live <= cpus || now - w->idle_since < st.cfg.idle_worker_timeout)
      break;
    st.log->debug("stopping idle worker process {}", w->pid);
    auto gone = st.pool.remove(w->id);
    stop_idle_worker(self, *gone);
    --live;
  }
  // A process for shared actors that has hosted none for as long.
  for (auto* w : st.pool.shared_hosts())
    if (w->actors == 0 && !w->starting &&
        now - w->idle_since >= st.cfg.idle_worker_timeout) {
      st.log->debug("stopping actor host process {}: it hosts no actors",
                    w->pid);
      auto gone = st.pool.remove(w->id);
      stop_idle_worker(self, *gone);
    }
  self->delayed_send(self, st.cfg.idle_worker_timeout / 2,
                     protocol::reap_idle_atom::value);
}

} // namespace prism::actors::raylet_internal
