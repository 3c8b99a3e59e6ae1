// Task events at their owner, made so that recording costs a running task
// little: a task that ends within a second of its last change takes one
// event, made when its attempt ends, with the times its worker took of its
// run. Submission and the push to a worker take the clock's last tick
// (cheap, a few ms coarse) for a task still in flight. A second after a
// task changes state the owner looks at every task in flight and records
// those whose state changed since their last event, a second ago or more;
// the younger changes wait for the next look.
// Events wait in the owner's bounded buffer (a full buffer drops and
// counts them) for the control store's task event store, sent a second
// after the first or at once when a batch's worth ended. Nothing here
// waits for an answer, but a flush: when a driver's job ends, its owner
// records every change, however young, and sends every event it kept, so
// that a job's last second of tasks is listed too.

#include "owner/task_events.hpp"

#include <atomic>
#include <cstdlib>
#include <limits>
#include <string_view>

#include "owner/owner_state.hpp"
#include "protocol/state.hpp"

namespace prism::actors {

namespace {

/// Off until Prism starts: a worker process records if its environment
/// says so (PRISM_TASK_EVENTS=1), a driver as its config says.
std::atomic<bool> recording{false};

} // namespace

void set_task_event_recording(bool on) noexcept {
  recording.store(on, std::memory_order_relaxed);
}

void configure_task_events(bool configured) {
  const char* v = std::getenv("PRISM_TASK_EVENTS");
  if (v != nullptr && *v != '\0')
    configured = std::string_view{v} != "0";
  set_task_event_recording(configured);
}

bool task_event_recording() noexcept {
  return recording.load(std::memory_order_relaxed);
}

} // namespace prism::actors

namespace prism::actors::owner_internal {

namespace {

/// How long a task's change waits for the look at the tasks in flight,
/// and how old a change must be for a look to record it.
constexpr auto look_delay = std::chrono::seconds{1};
constexpr std::int64_t look_delay_us =
    std::chrono::duration_cast<std::chrono::microseconds>(look_delay).count();
/// Slack for the coarse clock's ticks, so that a change a look's delay
/// old is not left for the next look.
constexpr std::int64_t tick_slack_us = 20'000;
/// How long a flush waits for the control store.
constexpr auto flush_timeout = std::chrono::seconds{5};

bool recorded(const task_entry& t) {
  // An actor call is recorded by the routes that send it (see
  // actor_routes::record), also one whose arguments this owner resolves
  // and which passes through its tasks.
  return t.actor_call.nil() && task_event_recording();
}

/// The event of `t` as it is now, in `state`. Its name goes with a task's
/// first event, unless the event before in the batch named the same (see
/// `task_table::apply`).
internal::task_event event_of(task_events_state& ev, task_entry& t,
                              internal::task_state state) {
  internal::task_event e;
  e.task = t.spec.id;
  e.attempt = t.spec.attempt;
  e.state = state;
  e.submit_us = t.note.submit_us;
  e.start_us = t.note.start_us;
  e.node = t.note.node;
  e.worker = t.note.worker;
  e.pid = t.note.pid;
  if (!t.note.named) {
    const auto& name = t.spec.display_name();
    if (name != ev.last_name) {
      e.name = name;
      ev.last_name = name;
    }
    e.job = t.spec.job;
    t.note.named = true;
  }
  t.note.last = state;
  t.note.reported = true;
  return e;
}

void send_batch(owner_actor* self) {
  auto& ev = self->state.events;
  auto [events, dropped] = ev.buffer.take();
  // A batch starts without a name before it.
  ev.last_name.clear();
  if (events.empty() && dropped == 0 && ev.transfers.empty())
    return;
  auto transfers = std::move(ev.transfers);
  ev.transfers.clear();
  self->send(
      self->state.cfg.gcs,
      protocol::task_events{std::move(events), dropped, std::move(transfers)});
}

void schedule_look(owner_actor* self) {
  auto& ev = self->state.events;
  if (!ev.look_scheduled) {
    ev.look_scheduled = true;
    self->delayed_send(self, look_delay, look_atom::value);
  }
}

void changed(owner_actor* self) {
  self->state.events.changed = true;
  schedule_look(self);
}

} // namespace

void note_task_waiting(owner_actor* self, task_entry& t) {
  if (!recorded(t))
    return;
  t.note.changed_us = internal::unix_us_coarse();
  if (t.note.submit_us == 0)
    t.note.submit_us = t.note.changed_us;
  if (t.note.attempt != t.spec.attempt) {
    // A retry: where the last attempt ran is in its event already.
    t.note.attempt = t.spec.attempt;
    t.note.start_us = 0;
    t.note.end_us = 0;
    t.note.node = {};
    t.note.worker = {};
    t.note.pid = 0;
  }
  changed(self);
}

void note_task_running(owner_actor* self, task_entry& t,
                       const lease_entry& lease) {
  if (!recorded(t))
    return;
  t.note.start_us = t.note.changed_us = internal::unix_us_coarse();
  t.note.node = lease.node;
  t.note.worker = lease.worker;
  t.note.pid = lease.pid;
  changed(self);
}

void note_run_reported(task_entry& t, const protocol::task_done& done) {
  if (done.start_us == 0 || !recorded(t))
    return;
  t.note.start_us = done.start_us;
  t.note.end_us = done.start_us + std::max<std::int64_t>(done.run_ns, 0) / 1000;
}

void note_attempt_ended(owner_actor* self, task_entry& t,
                        internal::task_state state, const std::string& error) {
  if (!recorded(t))
    return;
  auto& ev = self->state.events;
  auto e = event_of(ev, t, state);
  // A run its worker timed ended then; any other end (its worker lost,
  // its arguments failed) is now.
  e.end_us = t.note.end_us != 0 ? t.note.end_us : internal::unix_us_now();
  e.error = error;
  ev.buffer.add(std::move(e));
  if (ev.buffer.size() >= internal::task_event_batch)
    send_batch(self);
  else
    schedule_look(self);
}

void note_transfer(owner_actor* self, const object_id& id, const object_pull& p,
                   std::uint64_t bytes, const std::string& error) {
  auto& st = self->state;
  if (!task_event_recording() || p.start_us == 0 || p.from.node.nil() ||
      p.from.node == st.cfg.node)
    return;
  auto& ev = st.events;
  if (ev.transfers.size() >= internal::max_transfer_events) {
    ev.buffer.count_dropped();
    return;
  }
  internal::transfer_event e;
  e.object = id;
  e.job = st.cfg.drives.value != 0 ? st.cfg.drives : st.cfg.job;
  e.from = p.from.node;
  e.to = st.cfg.node;
  e.bytes = bytes;
  e.start_us = p.start_us;
  e.end_us = internal::unix_us_now();
  e.error = error;
  ev.transfers.push_back(std::move(e));
  schedule_look(self);
}

namespace {

/// Records the tasks in flight whose state changed since their last event,
/// at `old_enough` or before; a look follows for younger changes.
void record_changes(owner_actor* self, std::int64_t old_enough) {
  auto& ev = self->state.events;
  if (ev.changed) {
    ev.changed = false;
    bool younger = false;
    for (auto& [id, t] : self->state.tasks.entries) {
      if ((t.note.reported && t.note.last == t.state) || !recorded(t))
        continue;
      // A change younger than a look waits for the next: a task that
      // ends before then takes one event, which tells all its times.
      if (t.note.changed_us > old_enough)
        younger = true;
      else if (ev.buffer.add(event_of(ev, t, t.state)) &&
               ev.buffer.size() >= internal::task_event_batch)
        send_batch(self);
    }
    if (younger)
      changed(self);
  }
}

} // namespace

void look_at_tasks(owner_actor* self) {
  self->state.events.look_scheduled = false;
  record_changes(self,
                 internal::unix_us_coarse() - look_delay_us + tick_slack_us);
  send_batch(self);
}

void send_call_events(owner_actor* self) {
  if (!self->state.cfg.routes)
    return;
  auto [events, dropped] = self->state.cfg.routes->take_events();
  if (events.empty() && dropped == 0)
    return;
  self->send(self->state.cfg.gcs,
             protocol::task_events{std::move(events), dropped, {}});
}

caf::result<bool> flush_task_events(owner_actor* self) {
  if (!task_event_recording() || !self->state.cfg.gcs)
    return true;
  record_changes(self, std::numeric_limits<std::int64_t>::max());
  send_batch(self);
  send_call_events(self);
  // The control store answers after the events sent before: messages of
  // one sender arrive in order.
  auto rp = self->make_response_promise<bool>();
  self->request(self->state.cfg.gcs, flush_timeout,
                protocol::flush_events_atom::value)
      .then([rp](bool) mutable { rp.deliver(true); },
            [rp](const caf::error&) mutable { rp.deliver(false); });
  return rp;
}

} // namespace prism::actors::owner_internal
