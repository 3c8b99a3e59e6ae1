// The owner actor: its state's life, and its behaviour, a table that hands
// each message to the job that handles it (see owner_state.hpp for the
// files of the jobs).

#include "owner/owner.hpp"

#include <memory>
#include <utility>

#include "common/default_handlers.hpp"
#include "common/log.hpp"
#include "owner/owner_state.hpp"
#include "protocol/gcs_restart.hpp"
#include "protocol/raylet_gcs.hpp"
#include "protocol/state.hpp"
#include "protocol/testing.hpp"

namespace prism::actors::owner_internal {

owner_state::~owner_state() {
  // Nothing completes what is pending once the owner is gone (its worker's
  // node died, or the cluster stops), nor what user code still running on
  // its thread adds later: whoever waits in `get` there hears so.
  detail::error_info err;
  err.code = errc::owner_died;
  err.message = "the owner of this object (worker " + cfg.self.hex() +
                ") ended before it was ready";
  if (cfg.routes)
    cfg.routes->fail_all(err);
  if (cfg.store)
    cfg.store->close(err);
  for (auto& [id, waiting] : objects.readers) {
    protocol::object_reply reply;
    reply.id = id;
    reply.error = err;
    for (auto& rp : waiting)
      rp.deliver(reply);
  }
}

namespace {

// One logger for every instance; looking it up by name takes a global lock.
const std::shared_ptr<spdlog::logger>& shared_logger() {
  static const auto log = component_logger("owner");
  return log;
}

// A process this owner watches is gone: a raylet (with its node), a
// borrower of its objects, or an owner it fetched from.
void watched_down(owner_actor* self, const caf::down_msg& msg) {
  auto& st = self->state;
  if (st.scheduling.watched_raylets.count(msg.source) > 0) {
    raylet_gone(self, msg.source);
    return;
  }
  borrower_gone(self, msg.source);
  if (auto o = st.objects.watched_owners.find(msg.source);
      o != st.objects.watched_owners.end()) {
    auto owner = o->second;
    st.objects.watched_owners.erase(o);
    fetched_owner_gone(self, owner);
  }
}

void resubscribe_actors(owner_actor* self) {
  self->state.cfg.routes->resubscribe(self->state.cfg.self);
}

/// A driver's owner has the control store watch it, so that its job ends
/// with it (`protocol::watch_driver`).
void report_driver(owner_actor* self) {
  auto& cfg = self->state.cfg;
  if (cfg.drives.value != 0 && cfg.gcs)
    self->send(cfg.gcs, protocol::watch_driver{cfg.drives, self});
}

caf::behavior owner_behavior(owner_actor* self, owner_config cfg) {
  self->state.cfg = std::move(cfg);
  self->state.log = shared_logger();
  self->state.contact = own_contact(self->system());
  install_default_handlers(self, self->state.log);
  watch_raylet(self, self->state.cfg.raylet);
  set_checked_down_handler(
      self, [self](caf::down_msg& msg) { watched_down(self, msg); });
  report_driver(self);
  // CAF tries the cases in order, and each case of one of Prism's message
  // types that a message passes costs a comparison of type names: those of
  // every call and task come first.
  return {
      [self](protocol::actor_tasks_done& batch) {
        actor_calls_done(self, batch);
      },
      [self](protocol::actor_task_done& msg) { actor_call_done(self, msg); },
      [self](protocol::submit_task& msg) {
        submit(self, std::move(msg.spec), std::move(msg.held), msg.parent);
      },
      [self](protocol::task_done& msg) { task_finished(self, msg); },
      [self](protocol::lease_grant& msg) { lease_granted(self, msg); },
      [self](const protocol::actor_updates& batch) {
        for (const auto& msg : batch)
          actor_updated(self, msg);
      },
      [self](const protocol::actor_update& msg) { actor_updated(self, msg); },
      [self](const protocol::cancel_task& msg) {
        cancel_task(self, msg.task, msg.force, msg.recursive);
      },
      [self](const protocol::cancel_run& msg) { cancel_run(self, msg); },
      [self](protocol::add_borrower& msg) {
        borrower_added(self, msg);
        return true;
      },
      [self](protocol::register_borrowers& msg) {
        register_borrowers(self, msg);
      },
      [self](const protocol::register_borrow& msg) {
        return register_own_borrow(self, msg);
      },
      [self](const protocol::remove_borrower& msg) {
        borrower_removed(self, msg);
      },
      [self](protocol::lease_spillback& msg) { lease_spilled(self, msg); },
      [self](const protocol::lease_refused& msg) { lease_refused(self, msg); },
      [self](const protocol::worker_lost& msg) { worker_lost(self, msg); },
      [self](lease_idle_atom) { return_idle_leases(self); },
      [self](const protocol::fetch_object& msg) {
        request_object(self, msg.id, msg.owner, msg.address);
      },
      [self](protocol::object_request& msg) { object_requested(self, msg); },
      [self](const protocol::read_object& msg) {
        return read_requested(self, msg);
      },
      [self](protocol::put_object& msg) { return object_put(self, msg); },
      [self](const protocol::object_freed& msg) { object_freed(self, msg.id); },
      [self](rebuild_atom, const object_id& id) { rebuild(self, id); },
      [self](bulk_done_atom, const object_id& id, std::uint64_t serial,
             const std::string& why) { bulk_read_done(self, id, serial, why); },
      [self](requeue_atom, const task_id& tid, std::int32_t attempt) {
        requeue(self, tid, attempt);
      },
      [self](look_atom) { look_at_tasks(self); },
      [self](take_call_events_atom) { send_call_events(self); },
      [self](protocol::flush_events_atom) { return flush_task_events(self); },
      [self](find_home_atom, std::int64_t next_ms) {
        find_home(self, std::chrono::milliseconds{next_ms});
      },
      [self](protocol::adopt_object& msg) { adopt_requested(self, msg); },
      [self](protocol::object_reply& msg) { object_arrived(self, msg); },
      [self](const protocol::copy_kept& msg) { copy_kept(self, msg); },
      [self](const protocol::query_copies& msg) {
        return copies_of(self, msg.id);
      },
      [self](const protocol::query_task& msg) {
        return task_state_of(self, msg.task);
      },
      [self](const protocol::gcs_restarted&) {
        resubscribe_actors(self);
        report_driver(self);
      },
      [self](protocol::resolve_actor_call& msg) {
        resolve_actor_call(self, msg);
      },
  };
}

} // namespace

} // namespace prism::actors::owner_internal

namespace prism::actors {

caf::actor spawn_owner(caf::actor_system& sys, owner_config cfg) {
  return sys.spawn(owner_internal::owner_behavior, std::move(cfg));
}

} // namespace prism::actors
