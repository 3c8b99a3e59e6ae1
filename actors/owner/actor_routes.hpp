#pragma once

#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <caf/actor.hpp>
#include <caf/atom.hpp>

#include "prism/internal/actor_spec.hpp"
#include "prism/internal/memory_store.hpp"
#include "prism/internal/task_events.hpp"
#include "prism/internal/thread_annotations.hpp"
#include "protocol/gcs_restart.hpp"
#include "protocol/owner_actor.hpp"
#include "protocol/owner_gcs.hpp"

namespace prism::actors {

/// Sent to an owner when its calls' task events are due (see
/// `actor_routes::take_events`).
using take_call_events_atom = caf::atom_constant<caf::atom("callevents")>;

/// The calls one owner makes to actors, per actor: where the actor lives,
/// calls waiting for it, and calls sent and not answered. Calls leave in the
/// order they were made, straight from the calling thread when the actor is
/// alive; the owner actor feeds in the control store's updates and the
/// actors' replies. Thread-safe.
class actor_routes {
public:
  explicit actor_routes(std::shared_ptr<internal::memory_store> store);

  /// Sets who receives replies and who is asked for updates.
  void connect(caf::actor owner, caf::actor gcs);

  /// Asks a restarted control store for updates of every actor this owner
  /// knows; `self` is the owner's worker id.
  void resubscribe(const worker_id& self);

  /// Notes that this owner created `actor` with `msg`: the control store
  /// sends it updates without a subscription. Until the first update the
  /// request is kept, to be sent again to a control store that restarted
  /// before it was durable.
  void created(const actor_id& actor, std::int32_t max_task_retries,
               const protocol::create_actor& msg);

  /// Forgets `actor`, which this owner asked to create and the control
  /// store did not (`get_if_exists` found another): no call was made to it.
  void forget(const actor_id& actor);

  /// Queues a call and sends what can be sent. A call with `ready` false
  /// waits (and later calls wait behind it) until `resolved`.
  /// `held` are objects of this owner the call holds until it ends; `job`
  /// is the caller's, for the call's task events.
  void submit(const actor_id& actor, protocol::actor_task call, bool ready,
              std::vector<object_id> held, job_id job);

  /// The ref arguments of a waiting call are now values.
  void resolved(const actor_id& actor, const task_id& task,
                std::vector<detail::task_arg> args);

  /// A waiting call cannot run (an argument failed).
  void fail_call(const actor_id& actor, const task_id& task,
                 const detail::error_info& err);

  /// The control store reports a new state of `actor`. Returns the results
  /// of calls this failed.
  std::vector<object_id> on_update(const protocol::actor_update& update);

  /// An actor answered a call.
  /// Returns whether the result was kept (false for a late answer, or one
  /// nobody references any more).
  bool on_done(protocol::actor_task_done& done);

  /// What `cancel` found: whether the call is known, and the host to stop
  /// it if it was sent.
  struct cancelled_call {
    bool found = false;
    caf::actor host;
  };

  /// Cancels the call `task`: fails its result with `err`; one still
  /// waiting here is dropped, one sent stays in flight until its host
  /// answers (it is never retried), and its host is returned.
  cancelled_call cancel(const task_id& task, const detail::error_info& err);

  /// Whether `task` is a call this owner made that has not ended.
  bool has_call(const task_id& task);

  /// Fails every call (at shutdown), so that no `get` hangs.
  void fail_all(const detail::error_info& err);

  /// The task events of the attempts of calls that ended since the last
  /// take, when this process records task events (see
  /// owner/task_events.hpp), and how many a full buffer dropped. The owner
  /// is sent `take_call_events_atom` a second after the first of them, or
  /// at once when a batch's worth waits.
  std::pair<std::vector<internal::task_event>, std::uint64_t> take_events();

private:
  struct call {
    protocol::actor_task msg;
    bool ready = true;
    std::int32_t retries_used = 0;
    std::vector<object_id> held;
    job_id job;
    /// Cancelled after it was sent: its result failed; its answer only
    /// ends it.
    bool cancelled = false;
    /// Its method's name, if it is recorded (see `name_of`): the call's own
    /// name goes to its actor with the message.
    const std::string* name = nullptr;
  };

  /// An actor's route: 96 bytes, so that with its id and the map's link
  /// (120) it is in the allocator's 128-byte size, not 192 (the
  /// static_assert in actor_routes.cpp). A dead actor has none: its route goes
  /// as the owner learns of its death.
  struct route {
    caf::actor host;
    /// Where its instance runs, for the calls' task events.
    node_id node;
    /// Lists, not deques: an empty one allocates nothing, and most actors
    /// have no call waiting or in flight most of the time.
    std::list<call> waiting;
    std::list<call> in_flight;
    /// The creation request, until the control store confirms it; held
    /// apart, so that a route's own size stays small once it is confirmed.
    std::unique_ptr<protocol::create_actor> creation;
    std::int32_t incarnation = -1;
    std::int32_t max_task_retries = 0;
    std::int32_t pid = 0;
    internal::actor_state state = internal::actor_state::pending;
    bool known = false;
  };

  route& route_of(const actor_id& actor) EXCLUSIVE_LOCKS_REQUIRED(mu_);
  /// Sends the route's waiting calls that are ready, in order, up to the
  /// first that is not, while the actor is alive.
  void send_queued(route& r) EXCLUSIVE_LOCKS_REQUIRED(mu_);
  /// Sends `c` to the actor's host and keeps it in flight; the message is
  /// kept whole only if the call may be sent again (max_task_retries).
  void send(route& r, call&& c) EXCLUSIVE_LOCKS_REQUIRED(mu_);
  /// The actor instance that had `r`'s calls in flight is gone (update
  /// `u`): those that may be retried wait again, ahead of the others; the
  /// rest fail.
  void requeue_or_fail_in_flight(route& r, const protocol::actor_update& u)
      EXCLUSIVE_LOCKS_REQUIRED(mu_);
  /// Fails `c`; `where` is its route if it was sent to the actor's
  /// instance, else null.
  void fail(const actor_id& actor, const route* where, call& c,
            const detail::error_info& err,
            internal::task_state state = internal::task_state::failed)
      EXCLUSIVE_LOCKS_REQUIRED(mu_);
  /// Records how attempt `c.retries_used` of `c` ended, if it is recorded:
  /// where it ran (if sent), and with `done` if its host answered.
  void record(const actor_id& actor, const route* where, const call& c,
              internal::task_state state, const std::string& error,
              const protocol::actor_task_done* done)
      EXCLUSIVE_LOCKS_REQUIRED(mu_);
  /// Results failed during one `on_update`, which returns them.
  std::vector<object_id> failed_ GUARDED_BY(mu_);
  bool collecting_ GUARDED_BY(mu_) = false;
  void release(call& c);
  detail::error_info died(const actor_id& actor,
                          const std::string& cause) const;

  std::shared_ptr<internal::memory_store> store_;
  std::mutex mu_;
  caf::actor owner_ GUARDED_BY(mu_);
  caf::actor gcs_ GUARDED_BY(mu_);
  std::unordered_map<actor_id, route> routes_ GUARDED_BY(mu_);
  internal::task_event_buffer events_ GUARDED_BY(mu_){100'000};
  /// The name that `name` stands for, kept once per method for the events
  /// of its calls: a copy per call cost an allocation per call.
  const std::string* name_of(const std::string& method)
      EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::unordered_set<std::string> names_ GUARDED_BY(mu_);
  const std::string* last_named_ GUARDED_BY(mu_) = nullptr;
  /// The last name that went with an event of the next batch.
  const std::string* last_name_ GUARDED_BY(mu_) = nullptr;
  /// The owner was asked to take the events.
  bool take_asked_ GUARDED_BY(mu_) = false;
};

} // namespace prism::actors
