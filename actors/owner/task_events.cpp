// Task events at their owner. A task that changes state is marked; when
// the batch goes (a second after the first change, or at once when it holds
// a batch's worth) each marked task is recorded as it is then, and an
// attempt that ends is recorded at once, with its times, where it ran and
// its error. So a task that runs and ends between two batches costs one
// event. Events wait in the owner's bounded buffer (a full buffer drops and
// counts them) for the control store's task event store. Nothing here
// waits for an answer.

#include "owner/task_events.hpp"

#include <atomic>
#include <cstdlib>
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

/// How long the first event of a batch waits for more.
constexpr auto ship_delay = std::chrono::seconds{1};
/// A batch that holds this many goes at once.
constexpr std::size_t batch_events = 10'000;

} // namespace

namespace {

bool recorded(const task_entry& t) {
  // Actor calls are not recorded yet; one whose arguments this owner
  // resolves passes through its tasks.
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
  return e;
}

void schedule_ship(owner_actor* self) {
  auto& ev = self->state.events;
  if (ev.buffer.size() + ev.dirty_alive >= batch_events) {
    ship_task_events(self);
  } else if (!ev.ship_scheduled) {
    ev.ship_scheduled = true;
    self->delayed_send(self, ship_delay, ship_events_atom::value);
  }
}

void mark_dirty(owner_actor* self, task_entry& t) {
  if (!t.note.dirty) {
    t.note.dirty = true;
    self->state.events.dirty.push_back(t.spec.id);
    ++self->state.events.dirty_alive;
  }
  schedule_ship(self);
}

} // namespace

void note_task_waiting(owner_actor* self, task_entry& t) {
  if (!recorded(t))
    return;
  if (t.note.submit_us == 0)
    t.note.submit_us = internal::unix_us_now();
  if (t.note.attempt != t.spec.attempt) {
    // A retry: where the last attempt ran is in its event already.
    t.note.attempt = t.spec.attempt;
    t.note.start_us = 0;
    t.note.node = {};
    t.note.worker = {};
    t.note.pid = 0;
  }
  mark_dirty(self, t);
}

void note_task_running(owner_actor* self, task_entry& t,
                       const lease_entry& lease) {
  if (!recorded(t))
    return;
  t.note.start_us = internal::unix_us_now();
  t.note.node = lease.node;
  t.note.worker = lease.worker;
  t.note.pid = lease.pid;
  mark_dirty(self, t);
}

void note_attempt_ended(owner_actor* self, task_entry& t,
                        internal::task_state state, const std::string& error) {
  if (!recorded(t))
    return;
  auto& ev = self->state.events;
  auto e = event_of(ev, t, state);
  e.end_us = internal::unix_us_now();
  e.error = error;
  // Its end says all: the batch needs no event of its state before.
  if (t.note.dirty) {
    t.note.dirty = false;
    --self->state.events.dirty_alive;
  }
  ev.buffer.add(std::move(e));
  schedule_ship(self);
}

void ship_task_events(owner_actor* self) {
  auto& ev = self->state.events;
  ev.ship_scheduled = false;
  auto& tasks = self->state.tasks.entries;
  for (std::size_t i = 0; i < ev.dirty.size() && ev.dirty_alive > 0; ++i) {
    auto t = tasks.find(ev.dirty[i]);
    if (t == tasks.end() || !t->second.note.dirty)
      continue;
    t->second.note.dirty = false;
    --ev.dirty_alive;
    ev.buffer.add(event_of(ev, t->second, t->second.state));
  }
  ev.dirty.clear();
  ev.dirty_alive = 0;
  auto [events, dropped] = ev.buffer.take();
  // A batch starts without a name before it.
  ev.last_name.clear();
  if (events.empty() && dropped == 0)
    return;
  self->send(self->state.cfg.gcs,
             protocol::task_events{std::move(events), dropped});
}

} // namespace prism::actors::owner_internal
