#pragma once

// The state of one owner actor, one struct per job, and the functions each
// job's file offers the others. Only the owner's own files include this; the
// rest of Prism sees owner.hpp.
//
//   object_serving.cpp   serves this owner's objects, fetches borrowed ones
//   lineage.cpp          objects in nodes' stores, their lineage, rebuilds
//   adoption.cpp         the control store's owner takes over durable objects
//                        whose owner died
//   task_lifecycle.cpp   submit, resolve arguments, run ended, retry, fail,
//                        cancel
//   lease_scheduling.cpp leases per scheduling key, pushing tasks to them
//   owner.cpp            the actor: its state's life and its behaviour

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <caf/all.hpp>

#include "common/log.hpp"
#include "net/bulk.hpp"
#include "net/peers.hpp"
#include "owner/owner.hpp"
#include "prism/internal/object_arena.hpp"
#include "prism/internal/task_events.hpp"
#include "prism/internal/task_state.hpp"
#include "protocol/lineage.hpp"
#include "protocol/object_store.hpp"
#include "protocol/owner_actor.hpp"
#include "protocol/owner_gcs.hpp"
#include "protocol/owner_owner.hpp"
#include "protocol/owner_raylet.hpp"
#include "protocol/owner_worker.hpp"

namespace prism::actors::owner_internal {

using lease_idle_atom = caf::atom_constant<caf::atom("leaseidle")>;
using rebuild_atom = caf::atom_constant<caf::atom("rebuild")>;
/// Time to send the task events recorded on.
using look_atom = caf::atom_constant<caf::atom("lookevents")>;
/// Time for an owner whose raylet died to ask again for a new one; the
/// number is the wait before the next ask, in milliseconds.
using find_home_atom = caf::atom_constant<caf::atom("findhome")>;
/// Time for a task whose worker was killed for memory to queue again, after
/// its backoff (`retry_task`).
using requeue_atom = caf::atom_constant<caf::atom("requeue")>;
/// A read's bulk part (`bulk_fetch`) ended; the text says why not, if not.
using bulk_done_atom = caf::atom_constant<caf::atom("bulkdone")>;

/// The worker id under which a fetch waits for the control store's owner.
inline const worker_id adopter_id{};

/// How long the control store may take to answer about lineage records.
constexpr auto lineage_timeout = std::chrono::seconds{10};

// -- object serving -----------------------------------------------------------

/// One copy of an object in a node's store.
using object_copy = protocol::stored_copy;

/// Bytes of this node's store mapped in this process (a value read in place,
/// or room a read writes into): pinned there until the last copy of this
/// goes, then the node is told.
struct mapped_bytes {
  std::shared_ptr<const internal::arena_view> arena;
  caf::weak_actor_ptr raylet;
  std::uint64_t pin = 0;

  ~mapped_bytes();
};

/// A read of an object from a node's store, chunk by chunk, a few chunks at
/// a time: one of this owner's objects, or one it borrows, whose owner said
/// where its copies are.
struct object_pull {
  /// Tells its answers apart from those of a read given up before.
  std::uint64_t serial = 0;
  object_copy from;
  /// The owner of a borrowed object (else null), and the run of its task
  /// that made the copy read.
  caf::actor owner;
  std::int32_t attempt = 0;
  /// When it started, in microseconds since the Unix epoch.
  std::int64_t start_us = 0;
  /// The payload size (known from the first chunk on).
  std::uint64_t total = 0;
  /// The offset of the next chunk to ask for.
  std::uint64_t next = 0;
  std::uint64_t received = 0;
  int in_flight = 0;
  /// Its tag and refs (from the first chunk), and the payload read so far:
  /// in `bytes` (this process's memory), or in room in this node's store
  /// (`room`, pinned by `room_keeper`), asked for once the first chunk told
  /// the size; chunks that come before the answer wait in `early`.
  detail::value value;
  std::shared_ptr<detail::byte_buffer> bytes;
  char* room = nullptr;
  std::shared_ptr<mapped_bytes> room_keeper;
  std::vector<protocol::object_chunk> early;
  /// Where the rest of the payload, from `bulk_offset` on, waits on the
  /// node's bulk port (the first chunk said so); read by `fetch` once
  /// there is room for it. Last: it goes (and stops writing) first.
  std::string bulk_host;
  std::uint16_t bulk_port = 0;
  std::string bulk_ticket;
  std::uint64_t bulk_offset = 0;
  std::unique_ptr<bulk_fetch> fetch;
};

/// Who waits for objects, and which processes this owner watches for them.
struct object_serving_state {
  /// Borrowers waiting for the value of one of this owner's objects, by
  /// object.
  std::unordered_map<object_id, std::vector<caf::actor>> waiting_borrowers;
  /// Borrowers that asked for an object before it was ready: told where it
  /// is kept once it is (or given its value, if it is kept nowhere).
  std::unordered_map<object_id, std::vector<caf::actor>> waiting_for_copies;
  /// Objects requested from their owners and not answered yet.
  std::unordered_map<object_id, worker_id> fetching;
  /// Owners this owner fetched from, watched so that a fetch from one that
  /// dies fails instead of waiting forever.
  std::unordered_map<caf::actor_addr, worker_id> watched_owners;
  /// Processes registered as borrowers of this owner's objects, watched so
  /// that their registrations end when they die.
  std::unordered_map<caf::actor_addr, worker_id> watched_borrowers;
  /// Objects being read from a node's store now.
  std::unordered_map<object_id, object_pull> pulling;
  /// Nodes whose bulk port failed a read: read in chunks from then on.
  std::unordered_set<node_id> no_bulk;
  /// The serial number of the next read from a node's store.
  std::uint64_t next_pull = 1;
  /// This node's store's shared memory, mapped once for reads in place; the
  /// mark of one that could not be mapped, not tried again.
  std::shared_ptr<const internal::arena_view> arena;
  unique_id arena_refused;
  /// Values just read into room in this node's store, by the pin of that
  /// room: a copy the node keeps by `seal_object`, without their bytes.
  std::unordered_map<object_id, std::uint64_t> sealable;
  /// API threads waiting in `get` for an object kept in a node's store.
  std::unordered_map<object_id, std::vector<caf::response_promise>> readers;
};

// -- lineage ------------------------------------------------------------------

/// One of this owner's objects kept in nodes' object stores: where it was
/// made, and the copies read from there into other nodes' stores.
struct located_object {
  /// Every copy known to be alive, the first made one first.
  std::vector<object_copy> copies;
  /// The run of the task that made these copies (0 for a put).
  std::int32_t attempt = 0;
  /// The node of the last copy lost.
  node_id lost_at;

  /// Every copy's node died or its store no longer keeps the object.
  bool lost() const noexcept {
    return copies.empty();
  }

  /// Whether a copy is counted in the store of `node`.
  bool has_copy_on(const node_id& node) const noexcept {
    return std::any_of(copies.begin(), copies.end(),
                       [&](const object_copy& c) { return c.node == node; });
  }
};

/// How to make a task's result again: the task as submitted (its ref
/// arguments as refs), and the retries it has left. Kept while the result
/// lives in a node's store; its arguments owned here stay alive with it.
struct lineage_entry {
  internal::task_spec spec;
  std::int32_t retries_left = 0;
  /// Its ref arguments and the refs inside its argument values, held.
  std::vector<object_id> held;
};

struct lineage_state {
  /// This owner's objects kept in nodes' object stores, and the lineage of
  /// those that tasks made.
  std::unordered_map<object_id, located_object> located;
  std::unordered_map<object_id, lineage_entry> entries;
  /// Results of durable tasks whose lineage this owner recorded in the
  /// control store.
  std::unordered_set<object_id> durable;
};

// -- adoption -----------------------------------------------------------------

struct adoption_state {
  /// Objects whose owner died that this owner (the control store's) is
  /// adopting: their records are being read.
  std::unordered_set<object_id> adopting;
};

// -- task lifecycle -----------------------------------------------------------

/// What the owner learned of a task for its events (task_events.cpp).
struct task_event_note {
  std::int64_t submit_us = 0;
  /// Of the current attempt: when it was pushed to its worker, then as
  /// the worker timed its run; the run's end, once reported.
  std::int64_t start_us = 0;
  std::int64_t end_us = 0;
  /// When the owner last noted a change of its state (the clock's last
  /// tick).
  std::int64_t changed_us = 0;
  node_id node;
  worker_id worker;
  std::int32_t pid = 0;
  std::int32_t attempt = 0;
  /// The state its last event told, if `reported`.
  internal::task_state last = internal::task_state::waiting_args;
  bool reported = false;
  /// Its name went with an event already.
  bool named = false;
};

struct task_entry {
  internal::task_spec spec;
  /// Changed only by `set_state`.
  internal::task_state state = internal::task_state::waiting_args;
  /// Retries left; -1 retries forever.
  std::int32_t retries_left = 0;
  std::size_t missing_args = 0;
  /// The lease the task was pushed to; 0 while it is not running.
  std::uint64_t lease_id = 0;
  std::string key;
  /// Arguments that are objects of this owner, held until the task ends.
  std::vector<object_id> held_args;
  /// Set for the call of an actor whose ref arguments this owner resolves;
  /// once they are values the call goes back to the actor routes.
  actor_id actor_call;
  /// The ref arguments as submitted, by position: resolving replaces them
  /// with values, and the task's lineage needs them as refs.
  std::vector<std::pair<std::size_t, detail::task_arg>> ref_args;
  /// Set when this run rebuilds a result whose copies were lost.
  bool rebuilding = false;
  /// Runs of it that a node's memory monitor killed: each retry after such
  /// a kill waits twice as long as the last.
  std::uint32_t memory_kills = 0;
  /// Cancelled while pushed to a worker: its result failed already, and the
  /// entry waits for the run to end (or its worker to die) to free the
  /// lease. Never retried.
  bool cancelled = false;
  /// The task whose run submitted it (nil if a driver or an actor did): a
  /// recursive cancellation of that run reaches it.
  task_id parent;
  task_event_note note;
};

struct task_lifecycle_state {
  std::unordered_map<task_id, task_entry> entries;
  /// Runs of this owner's worker cancelled recursively, the latest few: a
  /// task one of them submitted that arrives after its cancellation is
  /// cancelled as it arrives.
  std::vector<task_id> cancelled_runs;
  /// Tasks waiting for an argument object, by object.
  std::unordered_map<object_id, std::vector<task_id>> waiting_for_arg;
};

// -- lease scheduling ---------------------------------------------------------

struct lease_entry {
  std::uint64_t id = 0;
  worker_id worker;
  /// Where the worker runs: its node and process.
  node_id node;
  std::int32_t pid = 0;
  caf::actor handle;
  /// The raylet that granted the lease.
  caf::actor raylet;
  std::string key;
  std::vector<task_id> in_flight;
  /// The worker's owner actor, which takes cancellations while the worker
  /// runs.
  caf::actor control;
  /// Its worker is being killed to cancel a task with force: nothing more
  /// is pushed to it, and what else it had in flight is retried as after
  /// any death of a worker.
  bool killed_for_cancel = false;
  /// When `in_flight` last became empty.
  std::chrono::steady_clock::time_point idle_since;
};

struct key_queue {
  internal::resource_set resources;
  job_id job;
  node_id affinity;
  bool affinity_soft = false;
  std::deque<task_id> ready;
  std::vector<std::uint64_t> leases;
  std::size_t pending_requests = 0;
  /// Moving average of a run's duration; negative while unknown.
  double avg_run_ns = -1;
};

struct lease_scheduling_state {
  std::unordered_map<std::string, key_queue> queues;
  std::unordered_map<std::uint64_t, lease_entry> leases;
  /// Lease requests in flight: the scheduling key each was made for, and the
  /// raylet it waits at.
  struct request {
    std::string key;
    caf::actor raylet;
  };
  std::unordered_map<std::uint64_t, request> requests;
  /// Raylets this owner watches (its own, and those it leased from).
  std::unordered_set<caf::actor_addr> watched_raylets;
  /// The raylet of this owner's node that died (its head restarted, for an
  /// attached driver). While `cfg.raylet` is null, lease requests wait in
  /// their queues and the control store is asked for a live node to take
  /// its place (not this one, which it may still list).
  caf::actor_addr lost_home;
  std::uint64_t next_request_id = 1;
  /// Whether a check of idle leases is scheduled.
  bool idle_check_pending = false;
  /// Scratch space of `push_ready`, kept so that pushing a task allocates
  /// nothing: a queue's leases and the tasks each has in flight.
  std::vector<lease_entry*> scratch_leases;
  std::vector<std::size_t> scratch_in_flight;
};

// -- the owner ----------------------------------------------------------------

// -- task events (task_events.cpp) --------------------------------------------

struct task_events_state {
  internal::task_event_buffer buffer{100'000};
  /// The object transfers that ended since the last batch went, at most
  /// `internal::max_transfer_events`; the buffer counts those dropped.
  std::vector<internal::transfer_event> transfers;
  /// The last name that went with an event of this batch.
  std::string last_name;
  /// A task changed state since the last look at the tasks in flight.
  bool changed = false;
  /// A look at the tasks in flight is due (`look_atom`).
  bool look_scheduled = false;
};

struct owner_state {
  static inline const char* name = "owner";

  owner_config cfg;
  std::shared_ptr<spdlog::logger> log;
  /// Where this owner's process takes connections; empty without a
  /// middleman.
  std::string contact;
  object_serving_state objects;
  lineage_state lineage;
  adoption_state adoption;
  task_lifecycle_state tasks;
  lease_scheduling_state scheduling;
  task_events_state events;

  owner_state() = default;
  owner_state(const owner_state&) = delete;
  owner_state& operator=(const owner_state&) = delete;

  /// Fails whatever still waits on this owner (see owner.cpp).
  ~owner_state();
};

using owner_actor = caf::stateful_actor<owner_state>;

inline caf::actor self_handle(owner_actor* self) {
  return caf::actor_cast<caf::actor>(self);
}

// -- object serving (object_serving.cpp) --------------------------------------

/// Sends `to` the value or error of `id` as `found` says.
void reply_object(owner_actor* self, const caf::actor& to, const object_id& id,
                  const internal::memory_store::result& found);
/// Gives a value or error of one of this owner's objects to everyone waiting
/// for it: borrowers, tasks that take it as an argument, and API threads.
void deliver(owner_actor* self, const object_id& id,
             const internal::memory_store::result& found);
/// One of this owner's objects is ready: hands it to whoever waits for it.
void object_ready(owner_actor* self, const object_id& id);
/// A borrowed object arrived from its owner (or a fetch of it failed).
void object_arrived(owner_actor* self, protocol::object_reply& reply);
/// Asks `owner` for `id`, once; the answer comes as an `object_reply`.
void request_object(owner_actor* self, const object_id& id,
                    const worker_id& owner,
                    const detail::owner_address& address);
/// An owner this one fetched from is gone.
void fetched_owner_gone(owner_actor* self, const worker_id& owner);
/// Someone needs the value of `id`, kept in a node's store: reads it from
/// the nearest copy, or rebuilds it if every copy is lost.
void need_value(owner_actor* self, const object_id& id);
/// Gives up the reads from the store of `raylet` (its node died); they go
/// on from another copy, or rebuild.
void pulls_lost_with(owner_actor* self, const caf::actor_addr& raylet);
/// Registers a borrower with the owners of refs a result hands it, and lets
/// go of this process's holds on them as each owner acknowledges.
void register_borrowers(owner_actor* self, protocol::register_borrowers& msg);
/// Registers this process as a borrower with the owner of an object a call
/// it runs has come to borrow; answers whether that owner counted it.
caf::result<bool> register_own_borrow(owner_actor* self,
                                      const protocol::register_borrow& msg);
/// The bulk part of the read `serial` of `id` ended: `why` not, if not
/// empty (the read goes on in chunks).
void bulk_read_done(owner_actor* self, const object_id& id,
                    std::uint64_t serial, const std::string& why);
/// Ends the registrations a result's worker made for this process.
void disown(owner_actor* self, const std::vector<detail::contained_ref>& refs);
void borrower_added(owner_actor* self, protocol::add_borrower& msg);
void borrower_removed(owner_actor* self, const protocol::remove_borrower& msg);
/// A watched borrower died: its registrations end.
void borrower_gone(owner_actor* self, const caf::actor_addr& source);
/// Another process asks for one of this owner's objects.
void object_requested(owner_actor* self, protocol::object_request& msg);
/// An API thread of this process reads one of this owner's objects.
caf::result<protocol::object_reply>
read_requested(owner_actor* self, const protocol::read_object& msg);

// -- lineage (lineage.cpp) ----------------------------------------------------

/// Drops the lineage of `id`, and with it the hold on its arguments.
void drop_lineage(owner_actor* self, const object_id& id);
/// The result `id` of task `t` is kept in the store `where` (made by run
/// `attempt`): remembers where, and how to rebuild it.
void stored_in_node(owner_actor* self, const task_entry& t, const object_id& id,
                    object_copy where, std::int32_t attempt);
/// Every copy of `id` is lost: runs the task that made it again, or fails it.
void rebuild(owner_actor* self, const object_id& id);
/// Forgets the copy of `id` in the store of `raylet`: the store does not
/// keep it (any more).
void copy_lost(owner_actor* self, const object_id& id,
               const caf::actor_addr& raylet);
/// Counts `copy` among the copies of `id` made by run `attempt`; returns
/// false (and counts nothing) if `id` is freed, made again since, or kept
/// on that node already.
bool add_copy(owner_actor* self, const object_id& id, const object_copy& copy,
              std::int32_t attempt);
/// Whether a copy of `id` is kept in a node's store (and not known lost).
bool kept_in_a_store(owner_actor* self, const object_id& id);
/// How many copies of `id` this owner counts (0 if it keeps none).
std::uint32_t copies_of(owner_actor* self, const object_id& id);
/// A borrower keeps a copy of one of this owner's objects in its node's
/// store: counted, or freed at once if not needed.
void copy_kept(owner_actor* self, const protocol::copy_kept& msg);
/// Forgets every copy kept in the store of the node of `raylet`, and gives
/// up the reads from there.
void objects_lost_with(owner_actor* self, const caf::actor_addr& raylet);
/// Keeps `value` (`id`, made by run `attempt`) in the store of this
/// owner's node, as the object's primary copy (a put's) or a secondary one;
/// `kept` runs with the store's contact once it is there, `refused` (if
/// set) with the error if the store did not keep it (it was full,
/// `object_store_full`).
void keep_in_node(
    owner_actor* self, const object_id& id, detail::value value,
    std::int32_t attempt,
    std::function<void(const std::string&)> kept = [](const std::string&) {},
    std::function<void(detail::error_info)> refused = {}, bool primary = false);
/// Keeps a put's value in this node's store; answers once it is there, or
/// with why not.
caf::result<detail::error_info> object_put(owner_actor* self,
                                           protocol::put_object& msg);
/// An object kept in a node's store is no longer referenced here.
void object_freed(owner_actor* self, const object_id& id);
/// Records a durable task's lineage in the control store, once.
void save_lineage(owner_actor* self, const internal::task_spec& spec);

// -- adoption (adoption.cpp) --------------------------------------------------

/// The answer to a fetch of `id` whose owner died.
protocol::object_reply owner_died_reply(const object_id& id,
                                        const worker_id& owner);
/// The owner of `id` died: asks the control store's owner instead.
void ask_adopter(owner_actor* self, const object_id& id,
                 const worker_id& owner);
/// A borrower asks the control store's owner for an object whose owner died.
void adopt_requested(owner_actor* self, protocol::adopt_object& msg);

// -- task lifecycle (task_lifecycle.cpp) --------------------------------------

/// Notes that `t` waits for arguments or a worker (its current attempt).
void note_task_waiting(owner_actor* self, task_entry& t);
/// Notes that `t` runs on `lease`'s worker.
void note_task_running(owner_actor* self, task_entry& t,
                       const lease_entry& lease);
/// Notes when the run of `t` that `done` reports began and ended, as its
/// worker timed it.
void note_run_reported(task_entry& t, const protocol::task_done& done);
/// Records that the current attempt of `t` ended in `state` (finished or
/// failed, with `error`).
void note_attempt_ended(owner_actor* self, task_entry& t,
                        internal::task_state state,
                        const std::string& error = {});
/// Records the read `p` of `id` from another node's store, ended with
/// `bytes` arrived (and `error`, if it stopped short); a read from this
/// node's store moves no bytes and is not recorded.
void note_transfer(owner_actor* self, const object_id& id, const object_pull& p,
                   std::uint64_t bytes, const std::string& error = {});
/// Records every task in flight whose state changed since its last event,
/// and sends the events recorded since the last batch.
void look_at_tasks(owner_actor* self);
/// Sends the events of this owner's actor calls that ended (recorded by
/// its `actor_routes`).
void send_call_events(owner_actor* self);
/// Records every change of the tasks in flight, however young, sends it
/// with every event kept (also the actor calls'), and answers once the
/// control store has them (protocol::flush_events_atom).
caf::result<bool> flush_task_events(owner_actor* self);
/// The scheduling key of a task: tasks of one key share leases.
std::string key_of(const internal::task_spec& spec);
/// Changes the state of `t`; refuses (and logs) an impossible change.
bool set_state(owner_actor* self, task_entry& t, internal::task_state to);
/// The error of a task whose worker died with no retries left: killed by
/// its node's memory monitor (`cause` out_of_memory) or any other way.
detail::error_info worker_died_error(const task_entry& t,
                                     const std::string& reason,
                                     errc cause = errc::worker_crashed);
/// Gives an object's value (or error, if `err` is set) to the tasks waiting
/// for it as an argument.
void hand_to_waiting_tasks(owner_actor* self, const object_id& id,
                           const detail::value& val,
                           const detail::error_info* err);
void submit(owner_actor* self, internal::task_spec&& spec,
            std::vector<object_id> held, const task_id& parent);
/// Resolves the arguments of a new or rebuilt task, and queues it once they
/// are values.
void submit_entry(owner_actor* self, task_entry& t);
void fail_task(owner_actor* self, const task_id& tid,
               const detail::error_info& err);
/// Runs the task again if it has retries left, queued after `delay`;
/// returns false if none are left.
bool retry_task(owner_actor* self, task_entry& t, const std::string& why,
                std::chrono::milliseconds delay = {});
/// A retry's delay is over: run `attempt` of `tid` queues (unless it was
/// cancelled meanwhile).
void requeue(owner_actor* self, const task_id& tid, std::int32_t attempt);
/// A worker reports that a run of a task ended.
void task_finished(owner_actor* self, protocol::task_done& d);
/// Cancels task `tid` (or, if this owner has no such task, its actor call
/// `tid`): see `prism::cancel`.
void cancel_task(owner_actor* self, const task_id& tid, bool force,
                 bool recursive);
/// The owner of a task this owner's worker runs cancelled it.
void cancel_run(owner_actor* self, const protocol::cancel_run& msg);
/// The run of `tid` on a worker that is gone ended: it is finished as
/// cancelled if it was, else retried or failed.
void run_lost(owner_actor* self, const task_id& tid, const std::string& reason,
              errc cause = errc::worker_crashed);
/// The state of a task, or an empty string if this owner has none.
std::string task_state_of(owner_actor* self, const task_id& tid);
/// An actor call needs its ref arguments resolved by this owner.
void resolve_actor_call(owner_actor* self, protocol::resolve_actor_call& msg);
/// An actor call this owner made has ended.
void actor_call_done(owner_actor* self, protocol::actor_task_done& msg);
void actor_calls_done(owner_actor* self, protocol::actor_tasks_done& batch);
/// The control store reports a new state of an actor this owner calls.
void actor_updated(owner_actor* self, const protocol::actor_update& msg);

// -- lease scheduling (lease_scheduling.cpp) ----------------------------------

/// Queues task `tid` (entry `t`), whose arguments are values, for a lease
/// of its scheduling key.
void queue_ready(owner_actor* self, const task_id& tid, const task_entry& t);
/// Pushes the ready tasks of scheduling key `key` to its leases, and asks for
/// more leases while tasks wait.
void dispatch(owner_actor* self, const std::string& key);
/// A run of task `tid` on lease `lease_id` ended after `run_ns`: the lease
/// has one task less in flight. Returns the lease, unless it is gone.
lease_entry* run_ended_on_lease(owner_actor* self, std::uint64_t lease_id,
                                const task_id& tid, const std::string& key,
                                std::int64_t run_ns);
/// A lease without work is kept for a moment, then returned.
void maybe_idle(owner_actor* self, lease_entry& l);
void return_idle_leases(owner_actor* self);
void watch_raylet(owner_actor* self, const caf::actor& raylet);
void lease_granted(owner_actor* self, protocol::lease_grant& g);
void lease_spilled(owner_actor* self, protocol::lease_spillback& msg);
void lease_refused(owner_actor* self, const protocol::lease_refused& msg);
void raylet_gone(owner_actor* self, const caf::actor_addr& raylet);
/// Asks the control store for a live node to take the place of this
/// owner's dead raylet; asks again after `retry` while there is none.
void find_home(owner_actor* self, std::chrono::milliseconds retry);
void worker_lost(owner_actor* self, const protocol::worker_lost& msg);

} // namespace prism::actors::owner_internal
