// The task lifecycle: a submitted task's arguments are resolved to values,
// it is queued for a lease (lease_scheduling.cpp), and when a run ends its
// result is stored, or it is retried or failed. Actor calls whose ref
// arguments this owner resolves go back to the actor routes. A task is
// cancelled at any point: before it runs it ends at once; while it runs its
// result fails at once and its worker is asked to stop it (or killed).

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "owner/owner_state.hpp"

namespace prism::actors::owner_internal {

namespace {

void end_task(owner_actor* self,
              std::unordered_map<task_id, task_entry>::iterator t) {
  auto& st = self->state;
  for (auto& id : t->second.held_args)
    st.cfg.store->release_task_ref(id);
  auto result_id = t->second.spec.return_id();
  st.tasks.entries.erase(t);
  object_ready(self, result_id);
}

// A run ended well. A small result comes with the report; a large one is
// in the store of the node that ran the task, which the report names.
void finish_task(owner_actor* self, protocol::task_done& d) {
  auto& st = self->state;
  auto t = st.tasks.entries.find(d.task);
  if (t == st.tasks.entries.end() ||
      !set_state(self, t->second, internal::task_state::finished))
    return;
  note_attempt_ended(self, t->second, internal::task_state::finished);
  auto id = t->second.spec.return_id();
  using arrival = internal::memory_store::arrival;
  if (d.stored_at.nil()) {
    if (t->second.rebuilding)
      drop_lineage(self, id); // small this time: it lives here now
    auto refs = d.result.refs;
    if (!st.cfg.store->complete(id, std::move(d.result),
                                arrival::registered_by_sender))
      disown(self, refs);
  } else if (!st.cfg.store->complete_remote(id, d.stored_at, d.result.refs,
                                            arrival::registered_by_sender)) {
    // Nobody references the result any more.
    disown(self, d.result.refs);
    self->send(d.store, protocol::free_object{id, d.attempt});
    drop_lineage(self, id);
  } else {
    stored_in_node(
        self, t->second, id,
        object_copy{d.store, std::move(d.store_contact), d.stored_at},
        d.attempt);
  }
  end_task(self, t);
}

// A late report of a run that was already failed over; its retry owns the
// result now.
void drop_stale_result(owner_actor* self, const protocol::task_done& d) {
  self->state.log->debug("dropping stale result of task {} attempt {}",
                         d.task.hex(), d.attempt);
  disown(self, d.result.refs);
  if (d.store)
    self->send(d.store, protocol::free_object{object_id{d.task, 1}, d.attempt});
}

/// How many recursively cancelled runs an owner remembers.
constexpr std::size_t max_cancelled_runs = 64;

detail::error_info cancelled_error(const task_entry& t) {
  detail::error_info err;
  err.code = errc::task_cancelled;
  err.function_name = t.spec.function;
  err.message = "task '" + t.spec.display_name() + "' was cancelled";
  return err;
}

// Ends a cancelled task whose run ended (or whose worker died): its result
// failed when it was cancelled.
void close_cancelled(owner_actor* self,
                     std::unordered_map<task_id, task_entry>::iterator t) {
  auto& st = self->state;
  if (!set_state(self, t->second, internal::task_state::cancelled))
    return;
  note_attempt_ended(self, t->second, internal::task_state::cancelled,
                     "cancelled");
  if (t->second.rebuilding)
    drop_lineage(self, t->second.spec.return_id());
  for (auto& id : t->second.held_args)
    st.cfg.store->release_task_ref(id);
  st.tasks.entries.erase(t);
}

// Task `t` waits for its argument `ref`.
void wait_for_arg(owner_actor* self, task_entry& t, const object_id& ref) {
  auto& waiting = self->state.tasks.waiting_for_arg[ref];
  if (std::find(waiting.begin(), waiting.end(), t.spec.id) == waiting.end())
    waiting.push_back(t.spec.id);
  ++t.missing_args;
}

// Resolves the task's ref arguments; returns false if the task failed.
bool resolve_args(owner_actor* self, task_entry& t) {
  auto& st = self->state;
  using state = internal::memory_store::state;
  for (auto& arg : t.spec.args) {
    if (!arg.by_ref)
      continue;
    auto found = st.cfg.store->lookup(arg.ref);
    if (found.st == state::ready && !found.location.nil()) {
      // Kept in a node's store: the worker reads it from there itself, and
      // keeps a copy on its node. An actor call's host, and a durable task's
      // record, take values only; and a lost object is rebuilt first.
      if (t.actor_call.nil() && !t.spec.durable &&
          kept_in_a_store(self, arg.ref))
        continue;
      wait_for_arg(self, t, arg.ref);
      need_value(self, arg.ref);
      continue;
    }
    if (found.st == state::ready) {
      if (found.err) {
        fail_task(self, t.spec.id, *found.err);
        return false;
      }
      arg.by_ref = false;
      arg.inline_value = std::move(found.val);
      continue;
    }
    if (found.st == state::missing && arg.owner == st.cfg.self) {
      detail::error_info err;
      err.code = errc::invalid_argument;
      err.message =
          "argument object " + arg.ref.hex() + " no longer exists at its owner";
      fail_task(self, t.spec.id, err);
      return false;
    }
    wait_for_arg(self, t, arg.ref);
    if (arg.owner != st.cfg.self)
      request_object(self, arg.ref, arg.owner, arg.address);
  }
  return true;
}

// A task whose arguments are all values: an actor call goes back to the
// actor routes, any other task is queued for a lease.
void enqueue(owner_actor* self, const task_id& tid) {
  auto& st = self->state;
  auto& t = st.tasks.entries[tid];
  if (!t.actor_call.nil()) {
    if (!set_state(self, t, internal::task_state::forwarded))
      return;
    st.cfg.routes->resolved(t.actor_call, tid, std::move(t.spec.args));
    st.tasks.entries.erase(tid);
    return;
  }
  if (!set_state(self, t, internal::task_state::queued))
    return;
  note_task_waiting(self, t);
  if (t.spec.durable)
    save_lineage(self, t.spec);
  queue_ready(self, tid, t);
}

} // namespace

std::string key_of(const internal::task_spec& spec) {
  // By function too: its leases take only its tasks, so the tasks of a
  // short function are never pipelined behind a long one's, and each
  // function's run time is its own.
  auto key = std::to_string(spec.job.value) + '|' + spec.function + '|' +
             spec.resources.to_string();
  if (!spec.affinity.nil())
    key += (spec.affinity_soft ? "|soft:" : "|hard:") + spec.affinity.hex();
  return key;
}

// Every change of a task's state goes through here: the table in
// task_state.hpp decides, and an impossible change is logged and refused.
bool set_state(owner_actor* self, task_entry& t, internal::task_state to) {
  auto from = t.state;
  if (internal::transition(t.state, to))
    return true;
  self->state.log->error("task {} ({}): impossible change {} -> {}, ignored",
                         t.spec.id.hex(), t.spec.display_name(),
                         internal::to_string(from), internal::to_string(to));
  return false;
}

namespace {

/// The first retry of a task after its worker was killed for memory waits
/// this long, each next one twice as long, up to `memory_retry_max`.
constexpr auto memory_retry_base = std::chrono::milliseconds{500};
constexpr auto memory_retry_max = std::chrono::milliseconds{30000};

} // namespace

detail::error_info worker_died_error(const task_entry& t,
                                     const std::string& reason, errc cause) {
  detail::error_info err;
  err.code = cause;
  err.function_name = t.spec.function;
  err.message =
      (cause == errc::out_of_memory
           ? "task '" + t.spec.display_name() + "' ran out of memory"
           : "the worker running task '" + t.spec.display_name() + "' died") +
      " and no retries are left: " + reason;
  return err;
}

// -- arguments ----------------------------------------------------------------

// Gives an object's value (or error, if `err` is set) to the tasks waiting
// for it as an argument; a task whose last argument arrives is queued.
void hand_to_waiting_tasks(owner_actor* self, const object_id& id,
                           const detail::value& val,
                           const detail::error_info* err) {
  auto& st = self->state;
  auto i = st.tasks.waiting_for_arg.find(id);
  if (i == st.tasks.waiting_for_arg.end())
    return;
  auto waiting = std::move(i->second);
  st.tasks.waiting_for_arg.erase(i);
  for (auto& tid : waiting) {
    auto t = st.tasks.entries.find(tid);
    if (t == st.tasks.entries.end())
      continue;
    if (err != nullptr) {
      fail_task(self, tid, *err);
      continue;
    }
    for (auto& arg : t->second.spec.args) {
      if (arg.by_ref && arg.ref == id) {
        arg.by_ref = false;
        arg.inline_value = val;
        --t->second.missing_args;
      }
    }
    if (t->second.missing_args == 0)
      enqueue(self, tid);
  }
}

// -- submitting ---------------------------------------------------------------

// Resolves the arguments of a new or rebuilt task, and queues it once they
// are values.
void submit_entry(owner_actor* self, task_entry& t) {
  auto id = t.spec.id;
  t.ref_args.clear();
  for (std::size_t pos = 0; pos < t.spec.args.size(); ++pos)
    if (t.spec.args[pos].by_ref)
      t.ref_args.emplace_back(pos, t.spec.args[pos]);
  if (!resolve_args(self, t))
    return;
  if (t.missing_args == 0)
    enqueue(self, id);
  else if (t.actor_call.nil())
    note_task_waiting(self, t);
}

void submit(owner_actor* self, internal::task_spec&& spec,
            std::vector<object_id> held, const task_id& parent) {
  auto& st = self->state;
  auto& t = st.tasks.entries[spec.id];
  t.parent = parent;
  t.retries_left = spec.max_retries;
  t.key = key_of(spec);
  t.spec = std::move(spec);
  t.held_args = std::move(held);
  auto id = t.spec.id;
  submit_entry(self, t);
  // Submitted by a run cancelled recursively before this arrived.
  const auto& runs = st.tasks.cancelled_runs;
  if (parent != task_id{} &&
      std::find(runs.begin(), runs.end(), parent) != runs.end())
    cancel_task(self, id, false, true);
}

// -- runs ending --------------------------------------------------------------

void fail_task(owner_actor* self, const task_id& tid,
               const detail::error_info& err) {
  auto& st = self->state;
  auto t = st.tasks.entries.find(tid);
  if (t == st.tasks.entries.end() ||
      !set_state(self, t->second, internal::task_state::failed))
    return;
  note_attempt_ended(self, t->second, internal::task_state::failed,
                     err.message);
  if (!t->second.actor_call.nil()) {
    st.cfg.routes->fail_call(t->second.actor_call, tid, err);
    st.tasks.entries.erase(t);
    object_ready(self, object_id{tid, 1});
    return;
  }
  st.log->debug("task {} ({}) failed: {}", tid.hex(),
                t->second.spec.display_name(), err.message);
  auto id = t->second.spec.return_id();
  if (t->second.rebuilding) {
    drop_lineage(self, id);
    detail::error_info lost;
    lost.code = errc::reconstruction_failed;
    lost.function_name = t->second.spec.function;
    lost.message = "object " + id.hex() + " of task '" +
                   t->second.spec.display_name() +
                   "' was lost, and running the task again to rebuild it "
                   "failed: " +
                   err.message;
    st.cfg.store->fail(id, lost);
  } else {
    st.cfg.store->fail(id, err);
  }
  end_task(self, t);
}

// Runs the task again if it has retries left; returns false if not.
bool retry_task(owner_actor* self, task_entry& t, const std::string& why,
                std::chrono::milliseconds delay) {
  if (t.retries_left == 0)
    return false;
  if (t.retries_left > 0)
    --t.retries_left;
  // The attempt that ends here failed; the next starts queued.
  note_attempt_ended(self, t, internal::task_state::failed, why);
  ++t.spec.attempt;
  t.lease_id = 0;
  self->state.log->info("retrying task {} ({}), attempt {}{}", t.spec.id.hex(),
                        t.spec.display_name(), t.spec.attempt,
                        delay.count() > 0
                            ? " in " + std::to_string(delay.count()) + " ms"
                            : std::string{});
  if (delay.count() > 0)
    self->delayed_send(self, delay, requeue_atom::value, t.spec.id,
                       t.spec.attempt);
  else
    enqueue(self, t.spec.id);
  return true;
}

void requeue(owner_actor* self, const task_id& tid, std::int32_t attempt) {
  auto& entries = self->state.tasks.entries;
  auto t = entries.find(tid);
  if (t == entries.end() || t->second.spec.attempt != attempt ||
      t->second.lease_id != 0)
    return;
  if (t->second.cancelled)
    close_cancelled(self, t);
  else
    enqueue(self, tid);
}

void task_finished(owner_actor* self, protocol::task_done& d) {
  auto& st = self->state;
  auto t = st.tasks.entries.find(d.task);
  if (t == st.tasks.entries.end() || t->second.lease_id != d.lease_id ||
      t->second.spec.attempt != d.attempt) {
    drop_stale_result(self, d);
    return;
  }
  auto key = t->second.key;
  auto* lease = run_ended_on_lease(self, d.lease_id, d.task, key, d.run_ns);
  t->second.lease_id = 0;
  note_run_reported(t->second, d);
  if (t->second.cancelled) {
    // Whatever the run made goes: the task's result is its cancellation.
    drop_stale_result(self, d);
    close_cancelled(self, t);
  } else if (d.ok) {
    finish_task(self, d);
  } else {
    // Refs inside a value the node's store refused (it was full) have no
    // object to live in.
    disown(self, d.result.refs);
    const auto& spec = t->second.spec;
    bool may_retry =
        d.error.code == errc::task_failed
            ? spec.retry_exceptions &&
                  (spec.retry_exception_types.empty() || d.retry_listed)
            : is_retryable(d.error.code);
    if (!may_retry || !retry_task(self, t->second, d.error.message))
      fail_task(self, d.task, d.error);
  }
  dispatch(self, key);
  if (lease != nullptr)
    maybe_idle(self, *lease);
}

std::string task_state_of(owner_actor* self, const task_id& tid) {
  auto& entries = self->state.tasks.entries;
  auto t = entries.find(tid);
  return t == entries.end() ? std::string{}
                            : internal::to_string(t->second.state);
}

// -- cancelling ---------------------------------------------------------------

namespace {

// An actor call of this owner: the routes drop it if it waits, or have its
// host stop it.
void cancel_actor_call(owner_actor* self, const task_id& tid) {
  detail::error_info err;
  err.code = errc::task_cancelled;
  err.message = "actor call " + tid.hex() + " was cancelled";
  auto found = self->state.cfg.routes->cancel(tid, err);
  if (!found.found)
    return;
  if (found.host)
    self->send(found.host, protocol::cancel_call{tid});
  object_ready(self, object_id{tid, 1});
}

// A task pushed to a worker: its result fails now, the worker stops it (or
// is killed), and the entry waits for the run's end to free the lease.
void cancel_running(owner_actor* self, task_entry& t, bool force,
                    bool recursive) {
  auto& st = self->state;
  if (!t.cancelled) {
    t.cancelled = true;
    t.retries_left = 0;
    auto id = t.spec.return_id();
    st.cfg.store->fail(id, cancelled_error(t));
    object_ready(self, id);
  }
  auto l = st.scheduling.leases.find(t.lease_id);
  if (l == st.scheduling.leases.end())
    return;
  auto& lease = l->second;
  if (lease.control)
    self->send(lease.control,
               protocol::cancel_run{t.spec.id, force, recursive});
  // Only the task the worker runs (the first in flight) kills it; one that
  // waits behind it there is skipped when its turn comes. The others in
  // flight are retried as after any death of a worker (one may have begun
  // by the time the kill lands), and nothing more goes to it.
  if (force && !lease.killed_for_cancel && !lease.in_flight.empty() &&
      lease.in_flight.front() == t.spec.id) {
    lease.killed_for_cancel = true;
    if (auto q = st.scheduling.queues.find(lease.key);
        q != st.scheduling.queues.end())
      std::erase(q->second.leases, lease.id);
    self->send(lease.raylet, protocol::cancel_kill{lease.id});
  }
}

} // namespace

void cancel_task(owner_actor* self, const task_id& tid, bool force,
                 bool recursive) {
  auto& st = self->state;
  auto t = st.tasks.entries.find(tid);
  if (t == st.tasks.entries.end()) {
    cancel_actor_call(self, tid);
    return;
  }
  auto& e = t->second;
  switch (e.state) {
  case internal::task_state::waiting_args:
    if (!e.actor_call.nil()) {
      // An actor call whose arguments this owner resolves: its route
      // holds it, waiting.
      st.tasks.entries.erase(t);
      cancel_actor_call(self, tid);
      return;
    }
    [[fallthrough]];
  case internal::task_state::queued: {
    // It never ran: it ends now. A lease queue or an argument's waiting
    // list may still name it; they skip tasks that ended.
    if (!set_state(self, e, internal::task_state::cancelled))
      return;
    note_attempt_ended(self, e, internal::task_state::cancelled, "cancelled");
    if (e.rebuilding)
      drop_lineage(self, e.spec.return_id());
    st.cfg.store->fail(e.spec.return_id(), cancelled_error(e));
    end_task(self, t);
    return;
  }
  case internal::task_state::running:
    cancel_running(self, e, force, recursive);
    return;
  default:
    return; // it ended already
  }
}

void cancel_run(owner_actor* self, const protocol::cancel_run& msg) {
  auto& st = self->state;
  if (st.cfg.runs && st.cfg.runs->cancel(msg.task))
    st.cfg.store->wake_stopped();
  if (!msg.recursive)
    return;
  auto& runs = st.tasks.cancelled_runs;
  if (runs.size() == max_cancelled_runs)
    runs.erase(runs.begin());
  runs.push_back(msg.task);
  // The tasks its run submitted, owned here; theirs are reached through
  // their workers in turn.
  std::vector<task_id> children;
  for (const auto& [id, e] : st.tasks.entries)
    if (e.parent == msg.task)
      children.push_back(id);
  for (const auto& id : children)
    cancel_task(self, id, msg.force, true);
}

void run_lost(owner_actor* self, const task_id& tid, const std::string& reason,
              errc cause) {
  auto& st = self->state;
  auto t = st.tasks.entries.find(tid);
  if (t == st.tasks.entries.end())
    return;
  auto& e = t->second;
  e.lease_id = 0;
  if (e.cancelled) {
    close_cancelled(self, t);
    return;
  }
  if (cause == errc::out_of_memory) {
    // Again after a backoff, which doubles with each such kill: the memory
    // may be taken by work that ends meanwhile.
    e.memory_kills += 1;
    auto delay =
        std::min(memory_retry_base * (1 << std::min(e.memory_kills - 1, 6u)),
                 memory_retry_max);
    if (!retry_task(self, e, reason, delay))
      fail_task(self, tid, worker_died_error(e, reason, cause));
    return;
  }
  if (!retry_task(self, e, "its worker died: " + reason))
    fail_task(self, tid, worker_died_error(e, reason));
}

// -- actor calls --------------------------------------------------------------

void resolve_actor_call(owner_actor* self, protocol::resolve_actor_call& msg) {
  auto& st = self->state;
  auto& t = st.tasks.entries[msg.task];
  t.actor_call = msg.actor;
  t.spec.id = msg.task;
  t.spec.owner = st.cfg.self;
  t.spec.args = std::move(msg.args);
  if (resolve_args(self, t) && t.missing_args == 0)
    enqueue(self, msg.task);
}

/// An actor call this owner made has ended.
void actor_call_done(owner_actor* self, protocol::actor_task_done& msg) {
  auto id = object_id{msg.task, 1};
  auto refs = msg.result.refs;
  if (!self->state.cfg.routes->on_done(msg))
    disown(self, refs);
  object_ready(self, id);
}

void actor_calls_done(owner_actor* self, protocol::actor_tasks_done& batch) {
  for (auto& msg : batch)
    actor_call_done(self, msg);
}

void actor_updated(owner_actor* self, const protocol::actor_update& msg) {
  // Calls go straight to the host's process: connect to it first.
  auto process = msg.host ? msg.host.node() : caf::node_id{};
  reach(self, process, msg.host_contact, [self, msg] {
    // Calls that failed with the actor may be awaited by borrowers and
    // by tasks that take their results as arguments.
    for (auto& id : self->state.cfg.routes->on_update(msg))
      object_ready(self, id);
  });
}

} // namespace prism::actors::owner_internal
