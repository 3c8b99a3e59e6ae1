#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace prism {

/// Quantities of named resources, e.g. {{"CPU", 1}, {"GPU", 0.5}}.
using resource_map = std::map<std::string, double>;

/// A named group of an actor's methods whose calls run at most `size` at a
/// time, whatever the actor's other groups run: `{"health", 1}`.
struct concurrency_group {
  std::string name;
  std::int32_t size = 1;

  friend bool operator==(const concurrency_group&,
                         const concurrency_group&) = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, concurrency_group& x) {
  return f(x.name, x.size);
}

/// How `prism::init` starts or joins a cluster.
struct config {
  /// Address of a running cluster's head, "host:port" (what
  /// `prism start --head` prints): `init` attaches to that cluster, and
  /// this process runs only the job's driver. Empty (the default) takes
  /// the `PRISM_ADDRESS` environment variable, and without it starts an
  /// embedded cluster inside the calling process. When attached, the
  /// settings of nodes and of the control store below are the cluster's
  /// own (`prism start`'s flags) and are ignored here.
  std::string address;

  /// Mutual TLS of an attached driver, as PEM files: its certificate, its
  /// private key, and the cluster CA's certificate (`prism cert`). A head
  /// started with TLS accepts only processes whose certificate its CA
  /// signed, and this process accepts only such a head. All three or none;
  /// none takes the PRISM_TLS_CERT, PRISM_TLS_KEY and PRISM_TLS_CA
  /// environment variables. See README, "Security".
  std::string tls_cert;
  std::string tls_key;
  std::string tls_ca;
  /// The cluster token an attached driver presents to the head (README,
  /// "Security"). Empty takes, in order: the PRISM_AUTH_TOKEN environment
  /// variable; the file `auth_token_file`; the file named by
  /// PRISM_AUTH_TOKEN_FILE; the token file of a head started on this host
  /// (`$PRISM_SESSION_DIR/token`). A head that asks for a token refuses a
  /// driver without the right one (`permission_denied_error`).
  std::string auth_token;
  std::string auth_token_file;
  /// Whether an attached driver without TLS may listen for the cluster's
  /// processes beyond loopback (a head on another host); it warns. The
  /// environment variable PRISM_INSECURE=1 sets it too.
  bool insecure = false;

  /// CPUs of the embedded node. 0 (the default) uses the number of hardware
  /// threads.
  double num_cpus = 0;

  /// Custom resources of the embedded node, e.g. {{"GPU", 1}}. "CPU" here
  /// overrides `num_cpus`.
  resource_map resources;

  /// Namespace of the driver's job: named actors are found by name within
  /// it. Empty gives the job an anonymous namespace of its own.
  std::string ns;

  /// Log level of Prism's own components: "trace", "debug", "info", "warn",
  /// "error" or "off". Empty reads the PRISM_LOG_LEVEL environment variable,
  /// and falls back to "warn".
  std::string log_level;

  /// Whether this process prints what its job's tasks and actors write to
  /// stdout and stderr in worker processes (on any node of a cluster, or in
  /// the embedded cluster's worker processes), each line after who wrote
  /// it: "(square pid=4123 node=5be0c2a7) text". Every line is also in
  /// files of its worker process on its node (README, "Operating a
  /// cluster"). The environment variable PRISM_LOG_TO_DRIVER=0 turns it
  /// off too.
  bool log_to_driver = true;
  /// Whether a line that many workers print alike prints once, and the
  /// count of its repeats within five seconds after it: "[repeated 9x
  /// across cluster]". PRISM_DEDUP_LOGS=0 turns it off too.
  bool dedup_logs = true;
  /// A worker process's output file (`worker-<job>-<pid>.out` or `.err` in
  /// the session directory of its node) that grows past this many bytes
  /// is rotated: it becomes `.out.1` (the older ones `.2` ...), and a new
  /// one starts. `worker_log_backups` rotated files are kept per stream.
  /// For the embedded cluster's worker processes; a node of `prism start`
  /// takes `--worker-log-max-bytes` and `--worker-log-backups`.
  std::uint64_t worker_log_max_bytes = 100 * 1024 * 1024;
  std::uint32_t worker_log_backups = 5;

  /// Upper bound on the workers one embedded node runs at once, counting
  /// workers that are blocked in `get` and lent their CPU back.
  std::uint32_t max_workers_per_node = 256;

  /// Whether the embedded cluster runs tasks in worker processes instead of
  /// threads of this process: a task that crashes (a segfault, `abort`,
  /// `exit`) then kills only its worker process, and its owner retries it.
  /// Each worker process is this program run again, so `main` must call
  /// `init` (or `serve_if_worker`) first; see README, "Worker processes".
  /// The environment variable PRISM_WORKER_PROCESSES=1 turns it on too.
  bool worker_processes = false;
  /// Whether worker processes are forked from a fork server of their
  /// program, which each node starts at the first worker of a program
  /// (see README, "Worker processes"): a fork takes about a millisecond
  /// where a start of the program by exec takes tens. Off, each worker
  /// process is started by exec. The environment variable
  /// PRISM_FORK_WORKERS=0 turns it off too, for the nodes of `prism start`.
  bool fork_worker_processes = true;
  /// Whether an actor of a process of its own (`prism::isolation::process`)
  /// runs its instance in an instance process: forked from the fork server
  /// for that instance alone, with no actor system of its own, and hosted
  /// by a worker process of its job that hosts others too (README, "Actors
  /// in processes"). Off, each such actor has a worker process of its own,
  /// with its own actor system and connections: some three times the CPU
  /// to start. The environment variable PRISM_INSTANCE_PROCESSES=0 turns it
  /// off too, for the nodes of `prism start`.
  bool actor_instance_processes = true;
  /// How long a node waits for a fork server's answer before it starts the
  /// worker process by exec instead and gives that server up. The node
  /// serves meanwhile: the wait holds no thread.
  std::uint32_t fork_answer_timeout_ms = 1000;
  /// A worker process that has not registered with its node this long
  /// after it started is killed, and another is started.
  std::uint32_t worker_start_timeout_ms = 10000;
  /// Idle worker processes above a node's CPUs stop after this long.
  std::uint32_t idle_worker_timeout_ms = 1000;

  /// Task results and `put` values larger than this many bytes are kept in
  /// the object store of a node (the one the task ran on, or the owner's),
  /// not in their owner's memory. Such an object is lost if its node dies,
  /// and is then rebuilt from its lineage (see README, "Lineage").
  std::uint32_t max_inline_object_bytes = 100 * 1024;

  /// The shared memory of a node's object store, in bytes; 0 (the default)
  /// is 30% of the host's memory (of its cgroup's limit, if lower). A node
  /// whose workers are processes keeps its objects there, and its worker
  /// processes and drivers on the host read them in place, without a copy (see
  /// README, "Objects"). It costs memory only as objects fill it; memory freed
  /// is used again. A node whose workers are threads counts its objects'
  /// bytes against it. Objects past it spill to disk (`spill_dir`; README,
  /// "Memory"). A node of `prism start` takes `--object-store-memory`.
  std::uint64_t object_store_memory = 0;

  /// Where nodes write the objects their stores cannot hold; empty (the
  /// default) is `spill` in the session directory (`PRISM_SESSION_DIR`, or
  /// /tmp/prism-<uid>). A node deletes a file once every object in it is
  /// freed, and on its start the files of nodes that are gone. A node of
  /// `prism start` takes `--spill-dir`.
  std::string spill_dir;

  /// A `put` or a task's result that finds its node's store full, with
  /// spilling unable to make room, waits this long for room, then fails with
  /// `object_store_full_error`.
  std::uint32_t object_store_full_timeout_ms = 10000;

  /// The share of the host's memory (of its cgroup's limit, if lower) past
  /// which a node's memory monitor kills one worker at a time, before the
  /// kernel kills the node (README, "Memory"); 0 turns the monitor off.
  double memory_usage_threshold = 0.95;
  /// How often the memory monitor samples the memory in use.
  std::uint32_t memory_monitor_interval_ms = 250;

  /// Threads of the scheduler that runs Prism's own components. 0 uses the
  /// number of hardware threads.
  std::uint32_t scheduler_threads = 0;

  /// Directory of the control store's tables (jobs, nodes, actors, names,
  /// the key-value table). Empty (the default) uses a new temporary
  /// directory that shutdown removes: nothing outlives the cluster. With a
  /// path, the tables outlive it: a cluster started again on the same path
  /// brings back its detached actors and its key-value table.
  std::string storage_path;
  /// Whether a change is acknowledged only once it is synced to disk
  /// (fsync), so that it survives a crash of the machine. With false it
  /// survives a crash of the process only.
  bool storage_sync = true;
  /// How long a call that needs the control store (creating or looking up
  /// an actor, the key-value table) waits while the control store is down
  /// before it fails with `gcs_unavailable_error`. Calls to live actors and
  /// tasks do not need it.
  std::uint32_t gcs_reconnect_timeout_ms = 60000;
  /// After the control store restarts: how long nodes and owners have to
  /// report back before the actors they held are restarted (or, for an
  /// owner's non-detached actors, end).
  std::uint32_t gcs_recovery_grace_ms = 2000;
  /// How many dead actors the control store remembers, with their cause of
  /// death; past it, it forgets those that died first, also in its storage.
  /// A call to a forgotten actor fails with `actor_died_error` saying that
  /// the control store does not know the actor.
  std::uint32_t gcs_max_dead_actors = 100000;
  /// Whether this process's drivers (and, embedded, its workers) record
  /// their tasks' events (each attempt's state, times, node, worker and
  /// error) for `prism list tasks` and `prism::state`. Off by default: it
  /// costs `single_client_tasks_async` about a fifth of its rate today
  /// (`task_events_cost_pct`). PRISM_TASK_EVENTS=1 or 0 in the environment
  /// overrides it, in any process (a node's, for the tasks its workers
  /// submit).
  bool task_events = false;
  /// How many tasks the control store keeps the events of; past it, it
  /// forgets the tasks recorded first, and says how many in every list.
  std::uint32_t gcs_max_tasks = 100000;
};

} // namespace prism
