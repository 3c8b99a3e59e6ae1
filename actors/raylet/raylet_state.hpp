#pragma once

// The state of one raylet actor and the functions each job's file offers the
// others. Only the raylet's own files include this; the rest of Prism sees
// raylet.hpp.
//
//   leasing.cpp         the queue of lease requests: placement (through
//                       prism/internal/task_placement.hpp), grants,
//                       spillback, refusals, lending a blocked worker's CPU
//   workers.cpp         the life of the node's workers: start, take for a
//                       lease, death, kills, and the death of a lease's owner
//   actor_hosting.cpp   the actors the control store places on the node
//   object_serving.cpp  the node's object store (node_object_store.hpp) as
//                       the node's workers and owners use it
//   state_answers.cpp   its workers and objects as `prism list` shows them
//   raylet.cpp          the actor: its start, its end and its behaviour

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <caf/all.hpp>

#include "common/log.hpp"
#include "net/bulk.hpp"
#include "net/peers.hpp"
#include "prism/internal/random_seed.hpp"
#include "prism/internal/resource_set.hpp"
#include "prism/internal/task_placement.hpp"
#include "protocol/gcs_raylet_actors.hpp"
#include "protocol/gcs_restart.hpp"
#include "protocol/metrics.hpp"
#include "protocol/object_store.hpp"
#include "protocol/owner_owner.hpp"
#include "protocol/owner_raylet.hpp"
#include "protocol/raylet_gcs.hpp"
#include "protocol/raylet_worker.hpp"
#include "protocol/state.hpp"
#include "protocol/status.hpp"
#include "protocol/testing.hpp"
#include "raylet/host_memory.hpp"
#include "raylet/node_object_store.hpp"
#include "raylet/raylet.hpp"
#include "raylet/worker_pool.hpp"

namespace prism::actors {
class actor_client_settings;
} // namespace prism::actors

namespace prism::actors::raylet_internal {

struct lease {
  std::uint64_t id = 0;
  worker_id worker;
  caf::actor owner;
  /// Resources the lease takes from the node now; the CPU part is given back
  /// while its worker is blocked.
  internal::resource_set granted;
  internal::resource_set cpu;
  bool blocked = false;
  /// Its work runs again if its worker is killed (`lease_request`).
  bool retriable = true;
};

/// The raylet hands the instances queued for running actor host processes
/// (`raylet_state::to_hand`).
using hand_atom = caf::atom_constant<caf::atom("hand")>;

/// Lines of worker processes' output wait to be sent (`raylet_config::output`);
/// with a job, that job's driver may be sent lines again.
using output_atom = caf::atom_constant<caf::atom("output")>;

/// Time to try again the results and puts waiting for room in the store.
using room_atom = caf::atom_constant<caf::atom("room")>;

/// Time for the memory monitor's next sample (`check_memory`).
using memory_atom = caf::atom_constant<caf::atom("memory")>;

/// Time for the node's report to the control store (`report_node`).
using report_atom = caf::atom_constant<caf::atom("report")>;

struct hosted_instance {
  caf::actor host;
  /// What it takes from the node; null if nothing, as for most actors (an
  /// actor needs no resource once placed unless it asks), so that an idle
  /// actor's entry here is 80 bytes, not 128.
  std::unique_ptr<internal::resource_set> resources;
  actor_id actor;
  std::int32_t incarnation = 0;
  /// The worker process it runs in; nil for a host in this process.
  worker_id worker;
};

static_assert(sizeof(hosted_instance) <= 56,
              "a hosted instance no longer fits the allocator's 80-byte size "
              "with its address and the map's link and hash");

/// `r` as a hosted instance keeps it: null if it is empty.
inline std::unique_ptr<internal::resource_set>
held_resources(const internal::resource_set& r) {
  return r.empty() ? nullptr : std::make_unique<internal::resource_set>(r);
}

struct raylet_state {
  static inline const char* name = "raylet";

  raylet_config cfg;
  std::shared_ptr<spdlog::logger> log;
  /// Where this process takes connections; empty without a middleman.
  std::string contact;
  /// This node as placement sees it: its id and everything it has.
  internal::cluster_node here;
  internal::resource_set available;
  worker_pool pool;
  /// Jobs that finished: a worker of one whose lease ends stops instead of
  /// waiting idle (a detached actor of the job may still lease new ones).
  std::unordered_set<job_id> finished_jobs;

  // -- leasing ----------------------------------------------------------------

  std::unordered_map<std::uint64_t, lease> leases;
  std::unordered_map<worker_id, std::uint64_t> lease_of_worker;
  std::deque<protocol::lease_request> queue;
  std::unordered_set<caf::actor_addr> watched_owners;
  std::unordered_set<std::string> reported_infeasible;
  /// Lease ids start at a random base per raylet: an owner has leases of
  /// several raylets at once and tells them apart by id.
  std::uint64_t next_lease_id = (internal::random_seed() << 32) | 1;

  // -- the cluster ------------------------------------------------------------

  /// The cluster's nodes, as the control store last reported them.
  std::vector<protocol::node_info> view;
  /// The same nodes in the same order, as placement sees them: a verdict's
  /// position in `nodes` names the node of `view` it means.
  std::vector<internal::cluster_node> nodes;
  std::size_t next_spill = 0;

  // -- hosted actors ----------------------------------------------------------

  /// Actor hosts on this node, and the resources each takes.
  std::unordered_map<caf::actor_addr, hosted_instance> hosts;
  /// What the owner clients of the actors hosted in this process share;
  /// made with the first.
  std::shared_ptr<actor_client_settings> actor_clients;

  // -- the object store -------------------------------------------------------

  /// The node's object store.
  node_object_store objects;
  /// Where other nodes read large objects of the store (net/bulk.hpp);
  /// null on a TLS cluster, and without a middleman.
  std::unique_ptr<bulk_server> bulk;
  /// Bytes of the store that readers on the host map, by pin: kept where
  /// they are (freed or not) until unmapped or their reader is gone.
  struct mapped_read {
    caf::actor_addr reader;
    detail::shared_bytes bytes;
  };
  std::unordered_map<std::uint64_t, mapped_read> mapped;
  /// The pins of each reader ever watched for them.
  std::unordered_map<caf::actor_addr, std::unordered_set<std::uint64_t>>
      mapped_by_reader;
  /// A result or put that found no room in the store, even by spilling,
  /// waiting for room until its deadline. `done` takes the outcome: code
  /// `ok` once kept, else `object_store_full`.
  struct waiting_keep {
    object_id id;
    detail::value value;
    std::int32_t attempt = 0;
    node_object_store::copy_kind kind = node_object_store::copy_kind::primary;
    std::chrono::steady_clock::time_point since;
    std::function<void(detail::error_info)> done;
  };
  /// In the order they came: a later one waits behind an earlier one.
  std::deque<waiting_keep> waiting_keeps;
  bool room_check_due = false;
  /// Keeps that waited for room, and keeps that gave up.
  std::uint64_t full_waits = 0;
  std::uint64_t full_errors = 0;

  // -- the memory monitor (memory_monitor.cpp) --------------------------------

  /// The memory in use where the node runs, as last sampled.
  memory_use memory;
  /// The process the monitor killed last, until its exit is reported (its
  /// memory is free then): the next kill waits for it, 5 s at most.
  int memory_victim_pid = 0;
  std::chrono::steady_clock::time_point memory_killed_at;
  std::uint64_t memory_kills = 0;

  // -- worker processes -------------------------------------------------------

  /// Per job, the requests of the current scheduling pass that found no
  /// idle worker: the processes worth starting for it.
  std::unordered_map<job_id, std::size_t> short_of_workers;
  /// Per job, worker processes that ended before they registered, in a
  /// row, and how the last one ended.
  std::unordered_map<job_id, std::pair<std::uint32_t, std::string>>
      failed_starts;
  /// Actor instances waiting for the worker process started to host them
  /// (each its own, or a shared one), by that worker.
  std::unordered_map<worker_id, std::vector<protocol::host_actor>>
      pending_hosts;
  /// Actor instances waiting for a start-up slot to launch their process.
  std::deque<protocol::host_actor> hosts_to_start;
  /// Actor instances for processes that run, sent to each in one message
  /// once the messages before them are handled (`hand_atom`): a burst of
  /// shared actors takes a message per process, not one per actor.
  std::unordered_map<worker_id, protocol::host_actors> to_hand;
  /// Whether a `hand_atom` is on its way.
  bool hand_scheduled = false;
  /// An instance process, started for an actor host in a worker process.
  struct instance_process {
    /// The worker process of its host: it ends with that process.
    worker_id host;
    /// The actor host that asked for it, which learns how it ended, and
    /// ships its user metrics as `metrics_id`.
    caf::actor requester;
    worker_id metrics_id;
    std::int32_t pid = 0;
    /// Numbers the starts: a later one has a larger number.
    std::uint64_t start_number = 0;
    /// Why the node killed it, if it did: its exit report says so.
    std::string killed_for;
    /// The host's request, until the process runs.
    caf::typed_response_promise<std::int32_t> started;
  };
  /// Instance processes, by their token, and how many were started.
  std::unordered_map<std::string, instance_process> instance_processes;
  std::uint64_t instance_starts = 0;
  /// Jobs whose batch of output lines is on its way to their driver,
  /// unanswered (or whose driver did not answer the last in time): their
  /// next lines go once it is taken, and wait (or are dropped) meanwhile.
  std::unordered_set<job_id> output_busy;
  /// Per job, the number of batches sent and of the last one answered.
  std::unordered_map<job_id, std::uint64_t> output_sent;
  std::unordered_map<job_id, std::uint64_t> output_answered;
  /// An answer to `flush_output`, due once the job's batch `after` was
  /// answered (or none of its batches is in flight).
  struct output_flush {
    job_id job;
    std::uint64_t after = 0;
    caf::response_promise promise;
  };
  std::vector<output_flush> output_flushes;
  /// Per job, the program its worker processes run, checked on this host
  /// (unless the node runs one program for every job, `cfg.program`).
  std::unordered_map<job_id, worker_program> programs;
  /// Jobs whose program is being looked up or checked.
  std::unordered_set<job_id> programs_pending;
  /// Jobs whose program this host does not hold at its driver's path, being
  /// fetched from the control store.
  std::unordered_set<job_id> programs_fetching;
  // -- figures ----------------------------------------------------------------
  /// Worker processes launched, and those that ended unasked (a crash, an
  /// exit, a start that failed).
  std::uint64_t processes_started = 0;
  std::uint64_t processes_failed = 0;
  /// The program's metrics, as its worker processes and the drivers whose
  /// home it is shipped them.
  internal::user_metric_table user_metrics;
  /// The metrics shippers of drivers whose home this node is, watched so
  /// that their series settle when they go; at most `max_metric_drivers`.
  std::unordered_map<caf::actor_addr, worker_id> metric_drivers;
  /// A driver's metrics were dropped, the drivers' table full (logged once).
  bool metric_drivers_full = false;
};

/// Drivers whose metrics one node takes, at most: what a driver ships
/// beyond is dropped (and logged once).
constexpr std::size_t max_metric_drivers = 256;

using raylet_actor = caf::stateful_actor<raylet_state>;

inline caf::actor self_handle(raylet_actor* self) {
  return caf::actor_cast<caf::actor>(self);
}

/// Whether `x` and `y` name the same actor: compared by id and process, as
/// a handle and a sender are.
template <class X, class Y>
bool same_actor(const X& x, const Y& y) {
  return x && y && x->id() == y->id() && x->node() == y->node();
}

/// The node's registration with the control store, without hosted actors.
protocol::add_node registration(raylet_actor* self);

// -- leasing (leasing.cpp) ----------------------------------------------------

/// Queues `req` and grants what can be granted.
void request_lease(raylet_actor* self, protocol::lease_request& req);

/// Goes over the queue in order: grants what fits here now, sends on what
/// another node must run, refuses what no node ever will.
void schedule(raylet_actor* self);

/// Ends a lease: its resources are free again, its worker goes back to the
/// pool, or stops if its job finished. It is not an error if the lease is
/// over already.
void end_lease(raylet_actor* self, std::uint64_t lease_id);

/// An owner is done with a lease.
void lease_returned(raylet_actor* self, std::uint64_t lease_id);
/// The owner `sender` of lease `lease_id` cancelled its task with force:
/// the lease's worker is killed.
void kill_for_cancel(raylet_actor* self, std::uint64_t lease_id,
                     const caf::actor_addr& sender);

/// The lease a worker serves, or nullptr.
lease* lease_of(raylet_actor* self, const worker_id& id);

/// Lends the CPU of a worker blocked in `get` to other work.
void lend_cpu(raylet_actor* self, const worker_id& worker);

/// Takes back the CPU of a worker that runs again.
void reclaim_cpu(raylet_actor* self, const worker_id& worker);

/// The node's figures for its metrics port (state_answers.cpp).
protocol::node_metrics node_metrics(raylet_actor* self);

/// Reports to the control store that the node is there, and again after
/// `cfg.report_interval` (state_answers.cpp).
void report_node(raylet_actor* self);

/// The node's resources, and the queued requests no live node can ever fit.
protocol::node_resources node_resources(raylet_actor* self);

/// The control store reports the cluster's nodes anew.
void view_changed(raylet_actor* self, std::vector<protocol::node_info> nodes);

/// How many nodes of the cluster are alive, as last reported.
std::uint64_t live_node_count(raylet_actor* self);

// -- workers (workers.cpp) ----------------------------------------------------

/// Starts a worker, idle and unbound, and watches it.
worker_pool::worker* start_worker(raylet_actor* self);

/// Takes a worker for `job`, starting one if the pool allows; nullptr if the
/// pool is full of busy workers or workers of other jobs that are busy.
worker_pool::worker* take_worker(raylet_actor* self, job_id job,
                                 std::uint64_t lease_id);

/// Kills the owner a worker hosts, as a crash would.
void kill_owner_of(raylet_actor* self, const worker_id& id,
                   const caf::error& reason);

/// A worker died: its lease's owner learns it and the lease ends.
void worker_gone(raylet_actor* self, worker_id id, const std::string& reason,
                 errc cause = errc::worker_crashed);

/// Kills a worker of this node as a crash would: its owner first, then the
/// worker; its lease, if any, ends, and the lease's owner learns `why` and
/// `cause`. Returns false if the worker is unknown.
bool kill_worker(raylet_actor* self, const worker_id& id,
                 const std::string& why, errc cause = errc::worker_crashed);

/// The owner of leases died: its requests and leased workers go with it.
void owner_gone(raylet_actor* self, const caf::actor_addr& owner);

/// A job ended: its idle workers stop.
void finish_job(raylet_actor* self, job_id job);

/// Stops a worker that is not leased: a thread ends, a process exits.
void stop_idle_worker(raylet_actor* self, worker_pool::worker& w);

/// Stops the worker `id` if it is idle and its job finished.
void stop_if_job_finished(raylet_actor* self, const worker_id& id);

// -- worker processes (worker_processes.cpp) ----------------------------------

/// Whether the node's workers are processes.
inline bool runs_processes(const raylet_actor* self) {
  return self->state.cfg.launcher != nullptr;
}

/// Starts a worker process for `job` if the requests short of a worker
/// call for one and the bounds allow it.
void maybe_start_worker_process(raylet_actor* self, job_id job);

/// A worker process says hello: its welcome, or an error.
caf::result<protocol::worker_welcome>
worker_hello(raylet_actor* self, const protocol::worker_hello& msg);

/// A worker process reports its worker actor ready.
caf::result<bool> worker_ready(raylet_actor* self,
                               const protocol::worker_ready& msg);

/// A worker process's launch was answered: it runs, or could not start.
void worker_launched(raylet_actor* self, const protocol::worker_launched& msg);

/// A worker process ended.
void worker_exited(raylet_actor* self, const protocol::worker_exited& msg);

/// Starts a worker process of the actor's job to host the instance `msg`
/// asks for; the instance takes its resources from now.
void host_in_process(raylet_actor* self, protocol::host_actor& msg);
caf::result<std::int32_t>
start_instance_process(raylet_actor* self,
                       const protocol::start_instance_process& msg);
void instance_process_launched(raylet_actor* self,
                               const protocol::instance_process_launched& msg);
void instance_process_exited(raylet_actor* self,
                             const protocol::instance_process_exited& msg);
/// Kills the instance processes of the worker process `host`, which ended.
void kill_instance_processes(raylet_actor* self, const worker_id& host);

/// Forgets the instance `msg` names if it waits for its process to start
/// or to register: its resources are free again, and a process started for
/// it is stopped once it registers. Returns whether it found the instance.
bool drop_unstarted_host(raylet_actor* self,
                         const protocol::drop_instance& msg);

/// Sends each running actor host process the instances queued for it.
void hand_queued_instances(raylet_actor* self);

/// Launches the processes of queued actor instances while start-up slots
/// are free and their jobs' programs are checked.
void start_queued_hosts(raylet_actor* self);

/// An instance that the actor host process `w` hosted, or was to host,
/// ended or was dropped: a process left with none stops (once it registers,
/// if it starts); a shared one only when its job has finished, or once it
/// idled as long as an idle worker.
void instance_ended_in(raylet_actor* self, worker_pool::worker& w);

/// The instance `msg` asks for could not start here: the control store
/// hears why, and its resources are free again.
void host_failed(raylet_actor* self, const protocol::host_actor& msg,
                 const std::string& why);

/// Refuses the job's waiting lease requests and fails its queued actor
/// instances with `code` and `why`: none of its work can run here.
void refuse_job(raylet_actor* self, job_id job, errc code,
                const std::string& why);

// -- job programs (job_programs.cpp) ------------------------------------------

/// The program worker processes of `job` run on this node, or nullptr while
/// it is looked up and checked (the raylet schedules again once it is).
const worker_program* program_of(raylet_actor* self, job_id job);

/// The program of a job was checked on this host.
void program_checked(raylet_actor* self, protocol::program_checked& msg);

/// `job` finished a while ago (`fork_server_grace`): if no running job runs
/// its program, the program's fork server ends (once its workers have).
void forget_program_if_unused(raylet_actor* self, job_id job);

/// A worker process's time to register, or to exit, is up.
void check_worker_process(raylet_actor* self, const worker_id& id);

/// The connection of a registered worker process dropped.
void worker_disconnected(raylet_actor* self, worker_pool::worker& w);

/// Kills a worker process (SIGKILL); its exit report says `why`.
void kill_worker_process(raylet_actor* self, worker_pool::worker& w,
                         const std::string& why);

/// Stops idle worker processes above the node's CPUs that idled too long,
/// and arms the next round.
void reap_idle_workers(raylet_actor* self);

// -- hosted actors (actor_hosting.cpp) ----------------------------------------

/// Starts a host for an actor instance the control store placed here.
void start_actor_host(raylet_actor* self, protocol::host_actor& msg);

/// The control store no longer wants the instance `msg` names (its actor
/// died before the instance reported): it never starts, or is killed.
void drop_instance(raylet_actor* self, const protocol::drop_instance& msg);

/// If `source` is an actor host of this node, forgets it, frees its
/// resources and returns true.
bool host_gone(raylet_actor* self, const caf::down_msg& msg);

/// Registers the node again with a restarted control store.
void register_again(raylet_actor* self, const protocol::gcs_restarted& msg);

/// Reads the log files `msg` asks for (`prism logs`).
protocol::log_pieces read_logs(raylet_actor* self,
                               const protocol::read_logs& msg);

/// Reads what the worker processes wrote so far and sends it; answers once
/// `job`'s driver took its part (`protocol::flush_output`).
caf::result<bool> flush_output(raylet_actor* self, job_id job);

/// Sends the worker processes' output lines waiting, a message per job
/// whose lines sent before were answered.
void send_output(raylet_actor* self);

/// `job`'s driver took its batch `seq` (or was given up on for a while).
void output_taken(raylet_actor* self, job_id job, std::uint64_t seq);

// -- lists of the node's workers and objects (state_answers.cpp) --------------

/// A page of this node's workers or objects (`prism list`).
protocol::state_page list_node_state(raylet_actor* self,
                                     const protocol::list_state& msg);

/// Every worker or object copy of this node that `msg.id` names, each in
/// the history (`prism get`).
protocol::state_found get_node_state(raylet_actor* self,
                                     const protocol::get_state& msg);

/// This node's workers by a key and state, or objects by a key and type.
protocol::state_counts
summarize_node_state(raylet_actor* self, const protocol::summarize_state& msg);

// -- the memory monitor (memory_monitor.cpp) ----------------------------------

/// Samples the memory in use; past the threshold, kills one worker (see
/// prism/internal/memory_policy.hpp); arms the next sample.
void check_memory(raylet_actor* self);

// -- the object store (object_serving.cpp) ------------------------------------

/// Keeps the large result of a task and passes its report on to its owner.
bool keep_result(raylet_actor* self, protocol::seal_result& msg);

/// A part of a stored object's value (all of it if it fits), or an
/// object_lost error.
protocol::object_chunk read_stored(raylet_actor* self,
                                   const protocol::pull_object& msg);

/// Where a stored object lies in the store's shared memory, pinned there for
/// the asking reader (or why it cannot be mapped).
protocol::object_mapped map_stored(raylet_actor* self,
                                   const protocol::map_object& msg);

/// Room in the store's shared memory, pinned for the asking owner to write a
/// value into (or why there is none).
protocol::object_mapped create_stored(raylet_actor* self,
                                      const protocol::create_object& msg);

/// Keeps a put or a copy of an object an owner sends, once there is room.
caf::result<protocol::object_kept> store_sent(raylet_actor* self,
                                              protocol::store_object& msg);

/// Keeps the value an owner wrote into pinned room.
caf::result<protocol::object_kept> seal_stored(raylet_actor* self,
                                               protocol::seal_object& msg);

/// Keeps what waits for room in the store, now that there may be some, and
/// fails what waited past its deadline.
void try_waiting_keeps(raylet_actor* self);

/// Frees a stored object (a stale run's free keeps a later copy).
void free_stored(raylet_actor* self, const protocol::free_object& msg);

/// A reader is done with the bytes pinned as `pin`.
void unmap(raylet_actor* self, std::uint64_t pin);

/// A reader is gone: its pins go (nothing if it held none).
void unmap_all(raylet_actor* self, const caf::actor_addr& reader);

/// Drops every stored object (fault injection); returns how many.
std::uint64_t drop_objects(raylet_actor* self);

/// How many objects and bytes the node's store keeps.
protocol::object_store_usage object_usage(raylet_actor* self);

} // namespace prism::actors::raylet_internal
