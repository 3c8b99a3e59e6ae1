#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "prism/config.hpp"
#include "prism/ids.hpp"

namespace prism::testing {

/// Kills a worker of the embedded cluster as a crash would: its running and
/// queued tasks fail over to their owners, which retry them. The C++ function
/// the worker was running cannot be interrupted inside one process; it runs
/// to its end and its result is discarded. Returns false if no live worker
/// has this id.
bool kill_worker(const worker_id& id);

/// Number of live workers on all nodes of the embedded cluster.
std::size_t num_workers();

/// Resource requests of tasks that wait because no live node can run them:
/// none can ever fit them, or they are pinned (hard) to a node that is not
/// known (each shape once). They are never dropped: a node that fits them,
/// or the node they are pinned to, runs them when it joins.
std::vector<resource_map> pending_infeasible();

/// The state of the task that returns `result`, at the driver that
/// submitted it: "waiting_args", "queued", "running", or "" once it ended
/// (its result or error is stored) or if it is not the driver's. See the
/// task state machine in the README.
std::string task_state(const object_id& result);

/// How many copies of `object`, a driver's object kept in nodes' object
/// stores, its owner counts: the first one made, and those read into other
/// nodes' stores since (by a `get`, or by a borrower on another node). 0 for
/// an object not kept in a store, or not the driver's.
std::size_t object_copies(const object_id& object);

/// How many impossible task state changes the owners of this process
/// refused (each is also logged). Stays 0 unless Prism has a bug; failure
/// tests check it.
std::uint64_t illegal_task_transitions();

/// How many times the owners of this process ran a task again to rebuild a
/// result whose every copy was lost (see "Objects, object stores and
/// lineage" in the README).
std::uint64_t objects_rebuilt();

/// How many reads of large objects from another node's store the owners of
/// this process finished over that node's bulk port, not in chunks over the
/// cluster connection (see "The bulk port" in the README).
std::uint64_t bulk_reads();

/// How many objects the owners and borrowers of this process keep in
/// scope: every entry of every memory store, owned or borrowed. With exact
/// reference counting it returns to its earlier figure once the refs made
/// since are gone (see "Reference counting" in the README).
std::int64_t objects_in_scope();

/// The directory of the embedded cluster's control-store tables: the
/// configured `storage_path`, or the temporary directory shutdown removes.
std::string storage_path();

/// How many lineage records of `.durable()` tasks the control store keeps
/// now (each until its result is freed or its job ends).
std::size_t durable_lineage_records();

/// A cluster of several nodes in this process, for tests of failures and
/// supervision: it starts Prism (`prism::init`) with the first node as the
/// head, where the default job's driver lives, and can kill and add nodes,
/// workers and actors. Destroying it shuts Prism down.
///
///   prism::testing::local_cluster cluster{{{{"CPU", 2}}, {{"CPU", 2}}}};
///   auto doomed = cluster.node(1);
///   cluster.kill_node(doomed);   // its workers and actors die with it
///   cluster.add_node({{"CPU", 2}});
class local_cluster {
public:
  /// Starts one node per entry of `nodes`, each with those resources.
  /// `base` sets everything else (log level, namespace, ...).
  /// REQUIRES: `nodes` is not empty; Prism is not running.
  explicit local_cluster(std::vector<resource_map> nodes, config base = {});

  ~local_cluster();

  local_cluster(const local_cluster&) = delete;
  local_cluster& operator=(const local_cluster&) = delete;

  /// The id of the `i`-th node started (killed ones included).
  node_id node(std::size_t i) const;

  /// Ids of the nodes alive now.
  std::vector<node_id> alive_nodes() const;

  /// Starts another node with `resources` and returns its id.
  node_id add_node(const resource_map& resources);

  /// Kills a node as a machine failure would: its raylet, workers and actors
  /// die; their tasks are retried and their actors restarted elsewhere as
  /// their options say. The head node (index 0) hosts the drivers and cannot
  /// be killed. Returns false if the node is unknown or already dead.
  bool kill_node(const node_id& id);

  /// Kills a worker (see `prism::testing::kill_worker`).
  bool kill_worker(const worker_id& id);

  /// Kills an actor's instance as a crash would: it restarts if its
  /// `max_restarts` allows. Returns false if the actor is not alive.
  bool kill_actor(const actor_id& id);

  /// Kills the control store as a crash would, and starts a new one on the
  /// same storage, which recovers every table from disk. Nodes register
  /// again, live actors keep running and are found again, calls made while
  /// it was down wait for it. Returns once the new one is attached.
  void restart_gcs();

  /// The two halves of `restart_gcs`, to keep the control store down for a
  /// while: `stop_gcs` kills it (calls that need it wait, up to
  /// `config::gcs_reconnect_timeout_ms`); `start_gcs` starts a new one.
  void stop_gcs();
  void start_gcs();

  /// The resources free on a node now (its total minus what leases and
  /// actors hold); nothing if the node is dead or unknown. Once the work on
  /// it is done and no actor lives there, this is the node's total again.
  std::optional<resource_map> available_resources(const node_id& id) const;

  /// The node an actor lives on now, if it is alive.
  std::optional<node_id> actor_node(const actor_id& id) const;

  /// What a node's object store holds: task results and `put` values larger
  /// than `config::max_inline_object_bytes`.
  struct store_usage {
    std::size_t objects = 0;
    std::size_t bytes = 0;
    /// With worker processes: bytes of the store's shared memory in use
    /// (`config::object_store_memory`), and reads in place by processes of
    /// the node's host that pin some of them.
    std::size_t shared_bytes = 0;
    std::size_t mapped_reads = 0;
    /// Objects kept only on disk now (spilled, README "Memory"), their
    /// bytes, and the spill files that hold them.
    std::size_t spilled_objects = 0;
    std::size_t spilled_bytes = 0;
    std::size_t spill_files = 0;
    /// Since the node started: objects spilled, objects read back into
    /// memory, `put`s and results that waited for room, and those that
    /// failed with `object_store_full_error`.
    std::size_t spills = 0;
    std::size_t restores = 0;
    std::size_t full_waits = 0;
    std::size_t full_errors = 0;
  };

  /// The object store of a live node; nothing if it is dead or unknown.
  /// Once no ref to an object remains, its copy is gone from here.
  std::optional<store_usage> object_store(const node_id& id) const;

  /// Empties a node's object store as a crash of the store would, leaving
  /// the node running: task results kept there are rebuilt from their
  /// lineage when next needed, and `put` values there are lost
  /// (`object_lost_error`). Works on the head node too, which holds the
  /// drivers' large puts. Returns how many objects were dropped; nothing if
  /// the node is dead or unknown.
  std::optional<std::size_t> drop_objects(const node_id& id);
};

/// Fault injection at a steady pace: a thread that kills a random node of
/// `cluster` other than the head every `period`, and starts a replacement
/// with `replacement` resources right after, until stopped or destroyed.
/// `seed` picks the victims, so a run can be repeated.
///
///   prism::testing::node_killer killer{cluster, {{"CPU", 2}},
///                                      std::chrono::milliseconds{100}};
///   ... run work that must survive ...
///   killer.stop();   // killer.kills() nodes died meanwhile
class node_killer {
public:
  node_killer(local_cluster& cluster, resource_map replacement,
              std::chrono::milliseconds period, std::uint32_t seed = 0);

  /// Stops, as `stop()`.
  ~node_killer();

  node_killer(const node_killer&) = delete;
  node_killer& operator=(const node_killer&) = delete;

  /// Returns once the thread has ended; no node dies after that.
  void stop();

  /// How many nodes it killed so far.
  int kills() const;

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

/// A cluster of real processes on loopback, for tests: a head and nodes
/// started with the `prism` command in a session directory of their own,
/// and this process attached to the head as the driver (`prism::init`). It
/// kills (SIGKILL), freezes (SIGSTOP) and resumes nodes, kills the head and
/// starts it again on its storage, and adds nodes. At the end the driver
/// shuts down, `prism stop` stops what it started, and the directory goes
/// (unless `PRISM_KEEP_SESSION` is set: then its path is printed).
///
///   prism::testing::process_cluster cluster{{.nodes = 2}};
///   cluster.kill_node(1);             // SIGKILL: dead at once
///   cluster.restart_head();           // SIGKILL, then the same storage
class process_cluster {
public:
  struct options {
    /// Start a head (and `nodes` nodes) at once; without it, only the
    /// session directory, for tests of the command itself.
    bool head = true;
    /// Nodes besides the head's.
    std::size_t nodes = 0;
    /// CPUs of each node, the head's included.
    double cpus = 1;
    /// Attach this process to the head as the driver.
    bool attach = true;
    /// Flags for every `prism start`, e.g. {"--connection-timeout-ms",
    /// "1500"}.
    std::vector<std::string> flags;
    /// The `prism` command: empty takes `PRISM_COMMAND`, then `prism` on
    /// the PATH.
    std::string command;
    /// The driver's settings (namespace, log level, TLS); its address is
    /// set, and the token the head made if it made one and none is set.
    config driver;
  };

  /// What a command printed, and how it ended.
  struct command_result {
    /// The exit status, or 128 + the signal that ended it; -1 if it did not
    /// end in time (it was killed then).
    int status = -1;
    std::string out;
    std::string err;
  };

  explicit process_cluster(options opts);
  ~process_cluster();

  process_cluster(const process_cluster&) = delete;
  process_cluster& operator=(const process_cluster&) = delete;

  /// The head's address, "127.0.0.1:port".
  const std::string& address() const;
  const std::string& session_dir() const;

  /// Starts a node that joins the head; returns its index (0 is the
  /// head's process).
  std::size_t add_node(const std::vector<std::string>& flags = {});

  /// The pid of node `i`'s process (0: the head).
  int node_pid(std::size_t i) const;

  /// Where node `i`'s process (0: the head) serves its metrics,
  /// "http://127.0.0.1:PORT/metrics"; empty if it opened no metrics port.
  std::string metrics_url(std::size_t i) const;

  /// Where the head serves its status page, "http://127.0.0.1:PORT"; a
  /// free port, since tests run side by side.
  std::string status_page_url() const;

  /// Signals node `i`'s process (not the head's): SIGKILL, SIGSTOP,
  /// SIGCONT.
  void kill_node(std::size_t i);
  void freeze_node(std::size_t i);
  void resume_node(std::size_t i);

  /// Kills the head with SIGKILL and starts it again on its storage and
  /// port: nodes and the driver reconnect.
  void restart_head();

  /// Runs `prism args...` in the session and waits for it, for at most
  /// `timeout`.
  command_result run(const std::vector<std::string>& args,
                     std::chrono::seconds timeout = std::chrono::seconds{60});

  /// Starts `prism args...` without waiting; `await` waits for it.
  int spawn(const std::vector<std::string>& args);
  int await(int pid, std::chrono::seconds timeout);
  /// What the command `spawn` started as `pid` printed on stdout so far;
  /// empty for an unknown pid.
  std::string output_of(int pid) const;

  /// Starts a head with `flags` (a free port unless they name one) and
  /// returns its address; `add_node` and `restart_head` use it.
  std::string start_head(const std::vector<std::string>& flags = {});

  /// Starts a node joining `address` with `flags`; returns its pid.
  int start_node(const std::string& address,
                 const std::vector<std::string>& flags = {});

  /// The pid recorded for process `name` ("head", "node-<pid>"), 0 if none.
  int pid_of(const std::string& name) const;

  /// The log of process `name`.
  std::string log_of(const std::string& name) const;

  /// Every sanitizer report or crash in the session's logs and outputs.
  std::string sanitizer_reports() const;

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace prism::testing
