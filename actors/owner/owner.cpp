#include "owner/owner.hpp"

#include <algorithm>
#include <atomic>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <caf/all.hpp>

#include "common/default_handlers.hpp"
#include "common/lineage_record.hpp"
#include "common/log.hpp"
#include "prism/internal/task_state.hpp"
#include "protocol/gcs_restart.hpp"
#include "protocol/lineage.hpp"
#include "protocol/object_store.hpp"
#include "protocol/owner_actor.hpp"
#include "protocol/owner_gcs.hpp"
#include "protocol/owner_owner.hpp"
#include "protocol/owner_raylet.hpp"
#include "protocol/owner_worker.hpp"
#include "protocol/testing.hpp"

namespace prism::actors {

namespace {

// One logger for every instance; looking it up by name takes a global lock.
const std::shared_ptr<spdlog::logger>& shared_logger() {
  static const auto log = component_logger("owner");
  return log;
}

using lease_idle_atom = caf::atom_constant<caf::atom("leaseidle")>;
using rebuild_atom = caf::atom_constant<caf::atom("rebuild")>;

/// The worker id under which a fetch waits for the control store's owner.
const worker_id adopter_id{};

/// Rebuilds of lost objects started by the owners of this process.
std::atomic<std::uint64_t> rebuilds_started{0};

/// How long the control store may take to answer about lineage records.
constexpr auto lineage_timeout = std::chrono::seconds{10};

/// How long a read from a live node's object store may take.
constexpr auto pull_timeout = std::chrono::seconds{30};

/// How long a lease with no work stays with the owner before it goes back to
/// the raylet; a caller that submits again within it skips the lease round
/// trip.
constexpr auto lease_idle_timeout = std::chrono::milliseconds{2};

/// Lease requests in flight per scheduling key.
constexpr std::size_t max_pending_lease_requests = 10;

/// Tasks pushed to one worker ahead of its replies once a key's tasks are
/// known to be short. Tasks of unknown or long duration go one at a time, so
/// that N long tasks spread over N workers.
constexpr std::size_t max_pipeline_depth = 64;
constexpr double short_task_ns = 200'000;

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
};

/// One of this owner's objects kept in a node's object store.
struct located_object {
  node_id node;
  caf::actor raylet;
  /// The run of the task that made this copy (0 for a put).
  std::int32_t attempt = 0;
  /// The node died or its store no longer holds the object.
  bool lost = false;
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

struct lease_entry {
  std::uint64_t id = 0;
  worker_id worker;
  caf::actor handle;
  /// The raylet that granted the lease.
  caf::actor raylet;
  std::string key;
  std::vector<task_id> in_flight;
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

  std::size_t depth() const {
    return avg_run_ns >= 0 && avg_run_ns < short_task_ns ? max_pipeline_depth
                                                         : 1;
  }
};

struct owner_state {
  static inline const char* name = "owner";

  owner_config cfg;
  std::shared_ptr<spdlog::logger> log;
  std::unordered_map<task_id, task_entry> tasks;
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
  std::uint64_t next_request_id = 1;
  /// Tasks waiting for an argument object, by object.
  std::unordered_map<object_id, std::vector<task_id>> waiting_tasks;
  /// Borrowers waiting for one of this owner's objects, by object.
  std::unordered_map<object_id, std::vector<caf::actor>> waiting_borrowers;
  /// Objects requested from their owners and not answered yet.
  std::unordered_map<object_id, worker_id> fetching;
  /// Owners this owner fetched from, watched so that a fetch from one that
  /// dies fails instead of waiting forever.
  std::unordered_map<caf::actor_addr, worker_id> watched_owners;
  /// Processes registered as borrowers of this owner's objects, watched so
  /// that their registrations end when they die.
  std::unordered_map<caf::actor_addr, worker_id> watched_borrowers;
  /// This owner's objects kept in nodes' object stores, and the lineage of
  /// those that tasks made.
  std::unordered_map<object_id, located_object> located;
  std::unordered_map<object_id, lineage_entry> lineage;
  /// Results of durable tasks whose lineage this owner recorded in the
  /// control store.
  std::unordered_set<object_id> durable;
  /// Objects whose owner died that this owner (the control store's) is
  /// adopting: their records are being read.
  std::unordered_set<object_id> adopting;
  /// Whether a check of idle leases is scheduled.
  bool idle_check_pending = false;
  /// Objects being read from a node's store now.
  std::unordered_set<object_id> pulling;
  /// API threads waiting in `get` for an object kept in a node's store.
  std::unordered_map<object_id, std::vector<caf::response_promise>> readers;
  owner_state() = default;
  owner_state(const owner_state&) = delete;
  owner_state& operator=(const owner_state&) = delete;

  ~owner_state() {
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
    for (auto& [id, waiting] : readers) {
      protocol::object_reply reply;
      reply.id = id;
      reply.error = err;
      for (auto& rp : waiting)
        rp.deliver(reply);
    }
  }
};

using owner_actor = caf::stateful_actor<owner_state>;

caf::actor self_handle(owner_actor* self) {
  return caf::actor_cast<caf::actor>(self);
}

std::string key_of(const internal::task_spec& spec) {
  auto key = std::to_string(spec.job.value) + '|' + spec.resources.to_string();
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

detail::error_info worker_died_error(const task_entry& t,
                                     const std::string& reason) {
  detail::error_info err;
  err.code = errc::worker_crashed;
  err.function_name = t.spec.function;
  err.message = "the worker running task '" + t.spec.display_name() +
                "' died and no retries are left: " + reason;
  return err;
}

// -- objects ------------------------------------------------------------------

protocol::object_reply make_reply(const object_id& id,
                                  const internal::memory_store::result& found) {
  protocol::object_reply reply;
  reply.id = id;
  if (found.st != internal::memory_store::state::ready) {
    // A live owner that never made the object (or freed it, so no ref
    // should still name it) was handed a bad ref: the asker's mistake.
    reply.error.code = errc::invalid_argument;
    reply.error.message =
        "object " + id.hex() + " is unknown to its owner (freed or never made)";
  } else if (found.err) {
    reply.error = *found.err;
  } else {
    reply.ok = true;
    reply.result = found.val;
  }
  return reply;
}

void reply_object(owner_actor* self, const caf::actor& to, const object_id& id,
                  const internal::memory_store::result& found) {
  self->send(to, make_reply(id, found));
}

void request_object(owner_actor* self, const object_id& id,
                    const worker_id& owner);

void fail_task(owner_actor* self, const task_id& tid,
               const detail::error_info& err);
void enqueue(owner_actor* self, const task_id& tid);

// Gives an object's value (or error, if `err` is set) to the tasks waiting
// for it as an argument; a task whose last argument arrives is queued.
void hand_to_waiting_tasks(owner_actor* self, const object_id& id,
                           const detail::value& val,
                           const detail::error_info* err) {
  auto& st = self->state;
  auto i = st.waiting_tasks.find(id);
  if (i == st.waiting_tasks.end())
    return;
  auto waiting = std::move(i->second);
  st.waiting_tasks.erase(i);
  for (auto& tid : waiting) {
    auto t = st.tasks.find(tid);
    if (t == st.tasks.end())
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

// Gives a value or error of one of this owner's objects to everyone waiting
// for it: borrowers, tasks that take it as an argument, and API threads.
void deliver(owner_actor* self, const object_id& id,
             const internal::memory_store::result& found) {
  auto& st = self->state;
  if (auto i = st.waiting_borrowers.find(id); i != st.waiting_borrowers.end()) {
    auto borrowers = std::move(i->second);
    st.waiting_borrowers.erase(i);
    for (auto& b : borrowers)
      reply_object(self, b, id, found);
  }
  if (auto i = st.readers.find(id); i != st.readers.end()) {
    auto readers = std::move(i->second);
    st.readers.erase(i);
    auto reply = make_reply(id, found);
    for (auto& rp : readers)
      rp.deliver(reply);
  }
  hand_to_waiting_tasks(self, id, found.val, found.err.get());
}

bool has_waiters(owner_actor* self, const object_id& id) {
  auto& st = self->state;
  return st.waiting_borrowers.count(id) > 0 || st.readers.count(id) > 0 ||
         st.waiting_tasks.count(id) > 0;
}

void need_value(owner_actor* self, const object_id& id);

// An object this owner waited for is ready: the borrowers that asked for it
// get it, and the tasks that need it take its value. One kept in a node's
// store is read from there first, if anyone waits for it.
void object_ready(owner_actor* self, const object_id& id) {
  // Most results are awaited by no one here (an API thread's `get` reads
  // the store): reading the entry would copy its value for nothing.
  if (!has_waiters(self, id))
    return;
  auto found = self->state.cfg.store->lookup(id);
  if (found.st == internal::memory_store::state::ready &&
      !found.location.nil()) {
    need_value(self, id);
    return;
  }
  deliver(self, id, found);
}

// A borrowed object arrived from its owner. Tasks waiting for it take it from
// the reply; an API thread waiting in `get` finds it in the local store.
void object_arrived(owner_actor* self, protocol::object_reply& reply) {
  auto& st = self->state;
  st.fetching.erase(reply.id);
  if (reply.ok)
    st.cfg.store->complete(reply.id, reply.result);
  else
    st.cfg.store->fail(reply.id, reply.error);
  hand_to_waiting_tasks(self, reply.id, reply.result,
                        reply.ok ? nullptr : &reply.error);
}

// The answer to a fetch of `id` whose owner died, and what it knew of the
// object with it.
protocol::object_reply owner_died_reply(const object_id& id,
                                        const worker_id& owner) {
  protocol::object_reply reply;
  reply.id = id;
  reply.error.code = errc::owner_died;
  reply.error.message = "the owner of object " + id.hex() + " (worker " +
                        owner.hex() + ") died; the object cannot be fetched";
  return reply;
}

// The owner of `id` died: the control store's owner answers instead, with
// the object made again if it was durable, else with owner_died.
void ask_adopter(owner_actor* self, const object_id& id,
                 const worker_id& owner) {
  auto& st = self->state;
  auto adopter = st.cfg.directory->adopter();
  if (!adopter || adopter == self_handle(self)) {
    // Answered as a message, not here: the caller may still be resolving
    // the arguments of a task that this answer fails.
    self->send(self, owner_died_reply(id, owner));
    return;
  }
  st.fetching[id] = adopter_id;
  if (st.watched_owners.emplace(adopter.address(), adopter_id).second)
    self->monitor(adopter);
  self->send(adopter, protocol::adopt_object{id, owner, self_handle(self)});
}

void request_object(owner_actor* self, const object_id& id,
                    const worker_id& owner) {
  auto& st = self->state;
  if (!st.fetching.emplace(id, owner).second)
    return;
  auto handle = st.cfg.directory->find(owner);
  if (!handle) {
    ask_adopter(self, id, owner);
    return;
  }
  if (st.watched_owners.emplace(handle.address(), owner).second)
    self->monitor(handle);
  self->send(handle, protocol::object_request{id, self_handle(self)});
}

// An owner this one fetched from is gone: its objects not received yet never
// will be.
void fetched_owner_gone(owner_actor* self, const worker_id& owner) {
  auto& st = self->state;
  std::vector<object_id> lost;
  for (auto& [id, from] : st.fetching)
    if (from == owner)
      lost.push_back(id);
  for (auto& id : lost) {
    if (owner == adopter_id) {
      auto reply = owner_died_reply(id, owner);
      object_arrived(self, reply);
    } else {
      ask_adopter(self, id, owner);
    }
  }
}

// -- borrowers ----------------------------------------------------------------

// A result that arrived with refs inside it was not kept (nobody references
// it any more, or it came late): the registrations its worker made for this
// process end.
void disown(owner_actor* self, const std::vector<detail::contained_ref>& refs) {
  auto& st = self->state;
  for (const auto& r : refs) {
    if (r.owner == st.cfg.self)
      continue;
    if (auto to = st.cfg.directory->find(r.owner))
      self->send(to, protocol::remove_borrower{r.id, st.cfg.self, 1});
  }
}

// A process borrows one of this owner's objects: the object stays until the
// process ends its registrations or dies.
void borrower_added(owner_actor* self, protocol::add_borrower& msg) {
  auto& st = self->state;
  if (msg.n > 0 && !st.cfg.store->add_borrower(msg.id, msg.borrower, msg.n)) {
    st.log->debug("object {} has no entry here (freed or never made); "
                  "borrower {} holds nothing",
                  msg.id.hex(), msg.borrower.hex());
    return;
  }
  if (msg.handle && msg.handle != self_handle(self) &&
      st.watched_borrowers.emplace(msg.handle.address(), msg.borrower).second)
    self->monitor(msg.handle);
}

// -- objects in nodes' stores, and lineage ------------------------------------

void submit_entry(owner_actor* self, task_entry& t);
void submit(owner_actor* self, internal::task_spec&& spec,
            std::vector<object_id> held);
void forget_lineage(owner_actor* self, const object_id& id);
void end_task(owner_actor* self,
              std::unordered_map<task_id, task_entry>::iterator t);
void watch_raylet(owner_actor* self, const caf::actor& raylet);

// Drops the lineage of `id`, and with it the hold on its arguments.
void drop_lineage(owner_actor* self, const object_id& id) {
  auto& st = self->state;
  auto i = st.lineage.find(id);
  if (i == st.lineage.end())
    return;
  auto held = std::move(i->second.held);
  st.lineage.erase(i);
  for (auto& id : held)
    st.cfg.store->release_task_ref(id);
}

// Keeps how task `t` made `id`: the task as submitted, its retries left, and
// its arguments owned here.
void keep_lineage(owner_actor* self, const task_entry& t, const object_id& id) {
  auto& st = self->state;
  drop_lineage(self, id);
  lineage_entry lin;
  lin.spec = t.spec;
  for (auto& [pos, arg] : t.ref_args)
    lin.spec.args[pos] = arg;
  lin.retries_left = t.retries_left;
  lin.held = st.cfg.store->add_task_refs(lin.spec.args);
  st.lineage.emplace(id, std::move(lin));
}

// Fails an object whose copies are lost and which cannot be made again.
void lost_for_good(owner_actor* self, const object_id& id,
                   const detail::error_info& err) {
  auto& st = self->state;
  st.log->warn("{}", err.message);
  st.located.erase(id);
  drop_lineage(self, id);
  st.cfg.store->reopen(id);
  st.cfg.store->fail(id, err);
  object_ready(self, id);
}

// Every copy of `id` is lost: runs the task that made it again (its lost
// arguments are rebuilt the same way when it resolves them), or fails the
// object if it has no lineage or no retries left.
void rebuild(owner_actor* self, const object_id& id) {
  auto& st = self->state;
  if (st.tasks.count(id.task) > 0)
    return; // being rebuilt already
  auto loc = st.located.find(id);
  if (loc == st.located.end() || !loc->second.lost)
    return; // freed, rebuilt or failed meanwhile
  auto where = "node " + loc->second.node.hex();
  auto lin = st.lineage.find(id);
  detail::error_info err;
  if (lin == st.lineage.end()) {
    err.code = errc::object_lost;
    err.message = "object " + id.hex() + " was lost with the object store of " +
                  where + "; it was made by put, which has no lineage to " +
                  "rebuild it from";
    lost_for_good(self, id, err);
    return;
  }
  if (lin->second.retries_left == 0) {
    err.code = errc::reconstruction_failed;
    err.function_name = lin->second.spec.function;
    err.message = "object " + id.hex() + " of task '" +
                  lin->second.spec.display_name() + "' was lost with " + where +
                  ", and the task has no retries left to rebuild it";
    lost_for_good(self, id, err);
    return;
  }
  st.located.erase(loc);
  if (!st.cfg.store->reopen(id)) {
    drop_lineage(self, id);
    return;
  }
  auto& t = st.tasks[id.task];
  t.spec = lin->second.spec;
  t.retries_left = lin->second.retries_left;
  if (t.retries_left > 0)
    --t.retries_left;
  ++t.spec.attempt;
  t.rebuilding = true;
  t.key = key_of(t.spec);
  for (auto& arg : t.spec.args) {
    if (arg.by_ref && arg.owner == st.cfg.self) {
      st.cfg.store->add_task_ref(arg.ref);
      t.held_args.push_back(arg.ref);
    }
  }
  rebuilds_started.fetch_add(1, std::memory_order_relaxed);
  st.log->info("object {} was lost with {}: running task {} ({}) again, "
               "attempt {}",
               id.hex(), where, id.task.hex(), t.spec.display_name(),
               t.spec.attempt);
  submit_entry(self, t);
}

void mark_lost(owner_actor* self, const object_id& id) {
  if (auto l = self->state.located.find(id); l != self->state.located.end())
    l->second.lost = true;
}

// Someone needs the value of `id`, kept in a node's store: reads it from
// there and hands it out, or rebuilds it if that copy is lost.
void need_value(owner_actor* self, const object_id& id) {
  auto& st = self->state;
  if (st.pulling.count(id) > 0)
    return;
  auto l = st.located.find(id);
  if (l == st.located.end())
    return;
  if (l->second.lost) {
    // As a message: the caller may be resolving a task that this fails.
    self->send(self, rebuild_atom::value, id);
    return;
  }
  st.pulling.insert(id);
  self->request(l->second.raylet, pull_timeout, protocol::pull_object{id})
      .then(
          [self, id](protocol::object_reply& reply) {
            self->state.pulling.erase(id);
            if (reply.ok) {
              internal::memory_store::result found;
              found.st = internal::memory_store::state::ready;
              found.val = std::move(reply.result);
              deliver(self, id, found);
              return;
            }
            mark_lost(self, id);
            rebuild(self, id);
          },
          [self, id](caf::error&) {
            // The node died under the read.
            self->state.pulling.erase(id);
            mark_lost(self, id);
            rebuild(self, id);
          });
}

// An object kept in a node's store is no longer referenced here.
void object_freed(owner_actor* self, const object_id& id) {
  auto& st = self->state;
  if (auto l = st.located.find(id); l != st.located.end()) {
    if (!l->second.lost)
      self->send(l->second.raylet,
                 protocol::free_object{id, l->second.attempt});
    st.located.erase(l);
  }
  drop_lineage(self, id);
  forget_lineage(self, id);
}

// -- durable lineage
// ------------------------------------------------------------

// Records a durable task's lineage (its arguments are values by now) in the
// control store, once; the record goes when the result is freed here.
void save_lineage(owner_actor* self, const internal::task_spec& spec) {
  auto& st = self->state;
  auto id = spec.return_id();
  if (!st.cfg.gcs || !st.durable.insert(id).second)
    return;
  st.cfg.store->report_free(id);
  // The record keeps the argument values, and a run from it reads the refs
  // inside them: they stay alive as long as this owner (see README,
  // "Limits").
  for (auto& arg : spec.args)
    for (auto& r : arg.inline_value.refs)
      st.cfg.store->pin(r.id);
  self->request(st.cfg.gcs, lineage_timeout,
                protocol::lineage_put{id, spec.job, encode_lineage(spec)})
      .then([](bool) {},
            [self, id](caf::error& err) {
              self->state.log->warn(
                  "object {}: its lineage could not be made durable: {}",
                  id.hex(), self->system().render(err));
            });
}

void forget_lineage(owner_actor* self, const object_id& id) {
  auto& st = self->state;
  if (st.durable.erase(id) == 0)
    return;
  self->request(st.cfg.gcs, lineage_timeout, protocol::lineage_del{id})
      .then([](bool) {}, [](caf::error&) {});
}

// Gives the borrowers waiting for `id` an error.
void fail_waiters(owner_actor* self, const object_id& id,
                  detail::error_info err) {
  internal::memory_store::result found;
  found.st = internal::memory_store::state::ready;
  found.err = std::make_shared<const detail::error_info>(std::move(err));
  deliver(self, id, found);
}

// The control store's owner adopts `id`, whose owner died: it runs the task
// in the durable record again, as its own, and keeps the result.
void adopt(owner_actor* self, const object_id& id, const worker_id& owner,
           const protocol::lineage_value& record) {
  auto& st = self->state;
  st.adopting.erase(id);
  auto spec = record.found ? decode_lineage(record.task_spec) : std::nullopt;
  if (!spec) {
    auto err = owner_died_reply(id, owner).error;
    if (record.found)
      err.message += " (its lineage record is malformed)";
    fail_waiters(self, id, std::move(err));
    return;
  }
  st.log->info("adopting object {} of task '{}', whose owner (worker {}) "
               "died: running the task again",
               id.hex(), spec->display_name(), owner.hex());
  spec->owner = st.cfg.self;
  spec->durable = false; // the record stays as it is
  st.cfg.store->add_pending(id);
  st.cfg.store->pin(id);
  submit(self, std::move(*spec), {});
}

// A borrower asks the control store's owner for an object whose owner died.
void adopt_requested(owner_actor* self, protocol::adopt_object& msg) {
  auto& st = self->state;
  auto found = st.cfg.store->lookup(msg.id);
  if (found.st == internal::memory_store::state::ready) {
    reply_object(self, msg.requester, msg.id, found);
    return;
  }
  st.waiting_borrowers[msg.id].push_back(msg.requester);
  if (found.st == internal::memory_store::state::pending ||
      !st.adopting.insert(msg.id).second)
    return; // being made already
  auto id = msg.id;
  auto owner = msg.owner;
  self->request(st.cfg.gcs, lineage_timeout, protocol::lineage_get{id})
      .then(
          [self, id, owner](protocol::lineage_value& record) {
            adopt(self, id, owner, record);
          },
          [self, id, owner](caf::error& err) {
            self->state.adopting.erase(id);
            auto reply = owner_died_reply(id, owner);
            reply.error.message += "; the control store did not say whether "
                                   "it was durable (" +
                                   self->system().render(err) + ")";
            fail_waiters(self, id, std::move(reply.error));
          });
}

// -- task lifecycle -----------------------------------------------------------

void end_task(owner_actor* self,
              std::unordered_map<task_id, task_entry>::iterator t) {
  auto& st = self->state;
  for (auto& id : t->second.held_args)
    st.cfg.store->release_task_ref(id);
  auto result_id = t->second.spec.return_id();
  st.tasks.erase(t);
  object_ready(self, result_id);
}

// A run ended well. A small result comes with the report; a large one is
// in the store of the node that ran the task, which the report names.
void finish_task(owner_actor* self, protocol::task_done& d) {
  auto& st = self->state;
  auto t = st.tasks.find(d.task);
  if (t == st.tasks.end() ||
      !set_state(self, t->second, internal::task_state::finished))
    return;
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
    st.located[id] = located_object{d.stored_at, d.store, d.attempt, false};
    watch_raylet(self, d.store);
    keep_lineage(self, t->second, id);
  }
  end_task(self, t);
}

void fail_task(owner_actor* self, const task_id& tid,
               const detail::error_info& err) {
  auto& st = self->state;
  auto t = st.tasks.find(tid);
  if (t == st.tasks.end() ||
      !set_state(self, t->second, internal::task_state::failed))
    return;
  if (!t->second.actor_call.nil()) {
    st.cfg.routes->fail_call(t->second.actor_call, tid, err);
    st.tasks.erase(t);
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
bool retry_task(owner_actor* self, task_entry& t) {
  if (t.retries_left == 0)
    return false;
  if (t.retries_left > 0)
    --t.retries_left;
  ++t.spec.attempt;
  t.lease_id = 0;
  self->state.log->info("retrying task {} ({}), attempt {}", t.spec.id.hex(),
                        t.spec.display_name(), t.spec.attempt);
  enqueue(self, t.spec.id);
  return true;
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
      // Kept in a node's store: read it from there (or rebuild it) first.
      auto& waiting = st.waiting_tasks[arg.ref];
      if (std::find(waiting.begin(), waiting.end(), t.spec.id) == waiting.end())
        waiting.push_back(t.spec.id);
      ++t.missing_args;
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
    auto& waiting = st.waiting_tasks[arg.ref];
    if (std::find(waiting.begin(), waiting.end(), t.spec.id) == waiting.end())
      waiting.push_back(t.spec.id);
    ++t.missing_args;
    if (arg.owner != st.cfg.self)
      request_object(self, arg.ref, arg.owner);
  }
  return true;
}

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
}

void submit(owner_actor* self, internal::task_spec&& spec,
            std::vector<object_id> held) {
  auto& st = self->state;
  auto& t = st.tasks[spec.id];
  t.retries_left = spec.max_retries;
  t.key = key_of(spec);
  t.spec = std::move(spec);
  t.held_args = std::move(held);
  submit_entry(self, t);
}

// -- scheduling ---------------------------------------------------------------

void return_lease(owner_actor* self, std::uint64_t lease_id) {
  auto& st = self->state;
  auto l = st.leases.find(lease_id);
  if (l == st.leases.end())
    return;
  if (auto q = st.queues.find(l->second.key); q != st.queues.end()) {
    auto& ls = q->second.leases;
    ls.erase(std::remove(ls.begin(), ls.end(), lease_id), ls.end());
  }
  auto raylet = std::move(l->second.raylet);
  st.leases.erase(l);
  self->send(raylet, protocol::lease_return{lease_id});
}

// A lease without work is kept for a moment, then returned. One timer per
// owner checks the idle leases, not one per lease going idle: a timer per
// finished task would keep CAF's clock thread busy on every short task.
void maybe_idle(owner_actor* self, lease_entry& l) {
  if (!l.in_flight.empty())
    return;
  l.idle_since = std::chrono::steady_clock::now();
  if (!self->state.idle_check_pending) {
    self->state.idle_check_pending = true;
    self->delayed_send(self, lease_idle_timeout, lease_idle_atom::value);
  }
}

void dispatch(owner_actor* self, const std::string& key);

// Returns the leases that have been idle for `lease_idle_timeout`, with no
// task waiting for them; checks again later if some are idle for less.
void return_idle_leases(owner_actor* self) {
  auto& st = self->state;
  st.idle_check_pending = false;
  auto now = std::chrono::steady_clock::now();
  auto next = std::chrono::steady_clock::time_point::max();
  std::vector<std::uint64_t> expired;
  std::unordered_set<std::string> keys;
  for (auto& [id, l] : st.leases) {
    if (!l.in_flight.empty())
      continue;
    auto q = st.queues.find(l.key);
    if (q != st.queues.end() && !q->second.ready.empty()) {
      // Tasks wait while a lease of their key is idle: those are tasks that
      // ended while queued, which dispatching drops.
      keys.insert(l.key);
      next = std::min(next, now + lease_idle_timeout);
      continue;
    }
    auto due = l.idle_since + lease_idle_timeout;
    if (due <= now)
      expired.push_back(id);
    else
      next = std::min(next, due);
  }
  for (auto id : expired)
    return_lease(self, id);
  for (auto& key : keys)
    dispatch(self, key);
  if (next != std::chrono::steady_clock::time_point::max()) {
    st.idle_check_pending = true;
    self->delayed_send(self, next - now, lease_idle_atom::value);
  }
}

void push(owner_actor* self, task_entry& t, lease_entry& lease) {
  if (!set_state(self, t, internal::task_state::running))
    return;
  t.lease_id = lease.id;
  lease.in_flight.push_back(t.spec.id);
  self->send(lease.handle,
             protocol::push_task{t.spec, lease.id, self_handle(self)});
}

// The request for a lease that fits the tasks of queue `q`.
protocol::lease_request lease_request_for(owner_actor* self, const key_queue& q,
                                          std::uint64_t request_id) {
  return protocol::lease_request{request_id,  q.job,
                                 q.resources, self_handle(self),
                                 q.affinity,  q.affinity_soft};
}

// Pushes the ready tasks of queue `q` (scheduling key `key`) to its leases,
// and asks for more leases while tasks wait.
void dispatch(owner_actor* self, const std::string& key, key_queue& q) {
  auto& st = self->state;
  auto depth = q.depth();
  while (!q.ready.empty()) {
    lease_entry* best = nullptr;
    for (auto lid : q.leases) {
      auto& l = st.leases[lid];
      if (l.in_flight.size() < depth &&
          (best == nullptr || l.in_flight.size() < best->in_flight.size()))
        best = &l;
    }
    if (best == nullptr)
      break;
    auto t = st.tasks.find(q.ready.front());
    q.ready.pop_front();
    if (t == st.tasks.end())
      continue; // ended while it waited
    push(self, t->second, *best);
  }
  auto wanted = std::min(q.ready.size(), max_pending_lease_requests);
  while (q.pending_requests < wanted) {
    ++q.pending_requests;
    auto rid = st.next_request_id++;
    st.requests.emplace(rid, owner_state::request{key, st.cfg.raylet});
    self->send(st.cfg.raylet, lease_request_for(self, q, rid));
  }
}

void dispatch(owner_actor* self, const std::string& key) {
  auto& st = self->state;
  if (auto q = st.queues.find(key); q != st.queues.end())
    dispatch(self, key, q->second);
}

void enqueue(owner_actor* self, const task_id& tid) {
  auto& st = self->state;
  auto& t = st.tasks[tid];
  if (!t.actor_call.nil()) {
    if (!set_state(self, t, internal::task_state::forwarded))
      return;
    st.cfg.routes->resolved(t.actor_call, tid, std::move(t.spec.args));
    st.tasks.erase(tid);
    return;
  }
  if (!set_state(self, t, internal::task_state::queued))
    return;
  if (t.spec.durable)
    save_lineage(self, t.spec);
  auto [q, added] = st.queues.try_emplace(t.key);
  if (added) {
    q->second.resources = t.spec.resources;
    q->second.job = t.spec.job;
    q->second.affinity = t.spec.affinity;
    q->second.affinity_soft = t.spec.affinity_soft;
  }
  q->second.ready.push_back(tid);
  dispatch(self, q->first, q->second);
}

// A lease request was answered: it is no longer in flight. Returns its
// scheduling key, or nothing if it was unknown.
std::optional<std::string> answered(owner_actor* self,
                                    std::uint64_t request_id) {
  auto& st = self->state;
  auto r = st.requests.find(request_id);
  if (r == st.requests.end())
    return std::nullopt;
  auto key = std::move(r->second.key);
  st.requests.erase(r);
  auto& q = st.queues[key];
  if (q.pending_requests > 0)
    --q.pending_requests;
  return key;
}

void lease_granted(owner_actor* self, protocol::lease_grant& g) {
  auto& st = self->state;
  auto answered_key = answered(self, g.request_id);
  if (!answered_key) {
    self->send(g.raylet, protocol::lease_return{g.lease_id});
    return;
  }
  auto key = std::move(*answered_key);
  auto& q = st.queues[key];
  auto& l = st.leases[g.lease_id];
  l.id = g.lease_id;
  l.worker = g.worker;
  l.handle = std::move(g.worker_handle);
  l.raylet = std::move(g.raylet);
  l.key = key;
  q.leases.push_back(g.lease_id);
  dispatch(self, key);
  maybe_idle(self, l);
}

void worker_lost(owner_actor* self, const protocol::worker_lost& msg);

void watch_raylet(owner_actor* self, const caf::actor& raylet) {
  if (self->state.watched_raylets.insert(raylet.address()).second)
    self->monitor(raylet);
}

// The raylet could not run a request; its node named another one that can.
void lease_spilled(owner_actor* self, protocol::lease_spillback& msg) {
  auto& st = self->state;
  auto r = st.requests.find(msg.request_id);
  if (r == st.requests.end())
    return;
  auto& q = st.queues[r->second.key];
  r->second.raylet = msg.raylet;
  watch_raylet(self, msg.raylet);
  self->send(msg.raylet, lease_request_for(self, q, msg.request_id));
}

// No node will ever grant the request: the tasks queued for it fail.
void lease_refused(owner_actor* self, const protocol::lease_refused& msg) {
  auto key = answered(self, msg.request_id);
  if (!key)
    return;
  auto& q = self->state.queues[*key];
  auto refused = std::move(q.ready);
  q.ready.clear();
  for (auto& tid : refused)
    fail_task(self, tid, msg.error);
}

// A raylet is gone with its node: its leases and their tasks are lost, and
// requests waiting there go to this owner's own raylet again.
void raylet_gone(owner_actor* self, const caf::actor_addr& raylet) {
  auto& st = self->state;
  st.watched_raylets.erase(raylet);
  // Objects kept there are lost; they are rebuilt when someone needs them.
  for (auto& [id, loc] : st.located)
    if (loc.raylet.address() == raylet)
      loc.lost = true;
  std::vector<std::pair<std::uint64_t, worker_id>> lost;
  for (auto& [id, l] : st.leases)
    if (l.raylet.address() == raylet)
      lost.emplace_back(id, l.worker);
  for (auto& [id, worker] : lost)
    worker_lost(self, protocol::worker_lost{id, worker, "its node died"});
  std::vector<std::string> keys;
  for (auto i = st.requests.begin(); i != st.requests.end();) {
    if (i->second.raylet.address() == raylet) {
      keys.push_back(i->second.key);
      auto& q = st.queues[i->second.key];
      if (q.pending_requests > 0)
        --q.pending_requests;
      i = st.requests.erase(i);
    } else {
      ++i;
    }
  }
  for (auto& key : keys)
    dispatch(self, key);
}

void task_finished(owner_actor* self, protocol::task_done& d) {
  auto& st = self->state;
  auto t = st.tasks.find(d.task);
  if (t == st.tasks.end() || t->second.lease_id != d.lease_id ||
      t->second.spec.attempt != d.attempt) {
    // A late report of a run that was already failed over; its retry owns
    // the result now.
    st.log->debug("dropping stale result of task {} attempt {}", d.task.hex(),
                  d.attempt);
    disown(self, d.result.refs);
    if (d.store)
      self->send(d.store,
                 protocol::free_object{object_id{d.task, 1}, d.attempt});
    return;
  }
  auto key = t->second.key;
  auto l = st.leases.find(d.lease_id);
  if (l != st.leases.end()) {
    auto& in_flight = l->second.in_flight;
    if (auto i = std::find(in_flight.begin(), in_flight.end(), d.task);
        i != in_flight.end())
      in_flight.erase(i);
  }
  auto& q = st.queues[key];
  auto run = static_cast<double>(d.run_ns);
  q.avg_run_ns = q.avg_run_ns < 0 ? run : 0.8 * q.avg_run_ns + 0.2 * run;
  t->second.lease_id = 0;
  if (d.ok) {
    finish_task(self, d);
  } else {
    bool may_retry = d.error.code == errc::task_failed
                         ? t->second.spec.retry_exceptions
                         : is_retryable(d.error.code);
    if (!may_retry || !retry_task(self, t->second))
      fail_task(self, d.task, d.error);
  }
  dispatch(self, key);
  if (l != st.leases.end())
    maybe_idle(self, l->second);
}

void worker_lost(owner_actor* self, const protocol::worker_lost& msg) {
  auto& st = self->state;
  auto l = st.leases.find(msg.lease_id);
  if (l == st.leases.end())
    return;
  auto key = l->second.key;
  auto lost = std::move(l->second.in_flight);
  if (auto q = st.queues.find(key); q != st.queues.end()) {
    auto& ls = q->second.leases;
    ls.erase(std::remove(ls.begin(), ls.end(), msg.lease_id), ls.end());
  }
  st.leases.erase(l);
  st.log->info("worker {} of lease {} lost: {}; {} task(s) affected",
               msg.worker.hex(), msg.lease_id, msg.reason, lost.size());
  for (auto& tid : lost) {
    auto t = st.tasks.find(tid);
    if (t == st.tasks.end())
      continue;
    t->second.lease_id = 0;
    if (!retry_task(self, t->second))
      fail_task(self, tid, worker_died_error(t->second, msg.reason));
  }
  dispatch(self, key);
}

/// An actor call this owner made has ended.
void actor_call_done(owner_actor* self, protocol::actor_task_done& msg) {
  auto id = object_id{msg.task, 1};
  auto refs = msg.result.refs;
  if (!self->state.cfg.routes->on_done(msg))
    disown(self, refs);
  object_ready(self, id);
}

caf::behavior owner_behavior(owner_actor* self, owner_config cfg) {
  self->state.cfg = std::move(cfg);
  self->state.log = shared_logger();
  install_default_handlers(self, self->state.log);
  self->monitor(self->state.cfg.raylet);
  self->state.watched_raylets.insert(self->state.cfg.raylet.address());
  self->set_down_handler([self](caf::down_msg& msg) {
    auto& st = self->state;
    if (st.watched_raylets.count(msg.source) > 0) {
      raylet_gone(self, msg.source);
      return;
    }
    if (auto b = st.watched_borrowers.find(msg.source);
        b != st.watched_borrowers.end()) {
      // Its registrations end: it holds nothing any more.
      auto borrower = b->second;
      st.watched_borrowers.erase(b);
      st.cfg.store->drop_borrower(borrower);
    }
    if (auto o = st.watched_owners.find(msg.source);
        o != st.watched_owners.end()) {
      auto owner = o->second;
      st.watched_owners.erase(o);
      fetched_owner_gone(self, owner);
    }
  });
  return {
      [self](protocol::submit_task& msg) {
        submit(self, std::move(msg.spec), std::move(msg.held));
      },
      [self](protocol::add_borrower& msg) { borrower_added(self, msg); },
      [self](const protocol::remove_borrower& msg) {
        self->state.cfg.store->remove_borrower(msg.id, msg.borrower, msg.n);
      },
      [self](protocol::lease_grant& msg) { lease_granted(self, msg); },
      [self](protocol::lease_spillback& msg) { lease_spilled(self, msg); },
      [self](const protocol::lease_refused& msg) { lease_refused(self, msg); },
      [self](protocol::task_done& msg) { task_finished(self, msg); },
      [self](const protocol::worker_lost& msg) { worker_lost(self, msg); },
      [self](lease_idle_atom) { return_idle_leases(self); },
      [self](const protocol::fetch_object& msg) {
        request_object(self, msg.id, msg.owner);
      },
      [self](protocol::object_request& msg) {
        auto found = self->state.cfg.store->lookup(msg.id);
        if (found.st == internal::memory_store::state::pending) {
          self->state.waiting_borrowers[msg.id].push_back(msg.requester);
        } else if (found.st == internal::memory_store::state::ready &&
                   !found.location.nil()) {
          self->state.waiting_borrowers[msg.id].push_back(msg.requester);
          need_value(self, msg.id);
        } else {
          reply_object(self, msg.requester, msg.id, found);
        }
      },
      [self](const protocol::read_object& msg)
          -> caf::result<protocol::object_reply> {
        auto& st = self->state;
        auto found = st.cfg.store->lookup(msg.id);
        using state = internal::memory_store::state;
        if (found.st == state::missing ||
            (found.st == state::ready && found.location.nil()))
          return make_reply(msg.id, found);
        auto rp = self->make_response_promise();
        st.readers[msg.id].push_back(rp);
        if (found.st == state::ready)
          need_value(self, msg.id);
        return caf::delegated<protocol::object_reply>{};
      },
      [self](protocol::put_object& msg) {
        auto& st = self->state;
        st.located[msg.id] =
            located_object{st.cfg.node, st.cfg.raylet, 0, false};
        self->send(st.cfg.raylet,
                   protocol::store_object{msg.id, std::move(msg.value)});
        return true;
      },
      [self](const protocol::object_freed& msg) { object_freed(self, msg.id); },
      [self](rebuild_atom, const object_id& id) { rebuild(self, id); },
      [self](protocol::adopt_object& msg) { adopt_requested(self, msg); },
      [self](protocol::object_reply& msg) { object_arrived(self, msg); },
      [self](const protocol::query_task& msg) -> std::string {
        auto& tasks = self->state.tasks;
        auto t = tasks.find(msg.task);
        return t == tasks.end() ? std::string{}
                                : internal::to_string(t->second.state);
      },
      [self](const protocol::actor_update& msg) {
        // Calls that failed with the actor may be awaited by borrowers and
        // by tasks that take their results as arguments.
        for (auto& id : self->state.cfg.routes->on_update(msg))
          object_ready(self, id);
      },
      [self](const protocol::gcs_restarted&) {
        self->state.cfg.routes->resubscribe(self->state.cfg.self);
      },
      [self](protocol::actor_task_done& msg) { actor_call_done(self, msg); },
      [self](protocol::actor_tasks_done& batch) {
        for (auto& msg : batch)
          actor_call_done(self, msg);
      },
      [self](protocol::resolve_actor_call& msg) {
        auto& st = self->state;
        auto& t = st.tasks[msg.task];
        t.actor_call = msg.actor;
        t.spec.id = msg.task;
        t.spec.owner = st.cfg.self;
        t.spec.args = std::move(msg.args);
        if (resolve_args(self, t) && t.missing_args == 0)
          enqueue(self, msg.task);
      },
  };
}

} // namespace

caf::actor spawn_owner(caf::actor_system& sys, owner_config cfg) {
  return sys.spawn(owner_behavior, std::move(cfg));
}

std::uint64_t objects_rebuilt() {
  return rebuilds_started.load(std::memory_order_relaxed);
}

} // namespace prism::actors
