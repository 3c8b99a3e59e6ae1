#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/node_id.hpp>

#include "boot/components.hpp"
#include "common/executor.hpp"
#include "gcs/gcs.hpp"
#include "net/network.hpp"
#include "owner/owner_client.hpp"
#include "owner/owner_directory.hpp"
#include "prism/config.hpp"
#include "prism/internal/thread_annotations.hpp"
#include "protocol/testing.hpp"

namespace prism::actors {

/// A whole cluster inside one process: the control store, one or more nodes
/// (raylets with their workers and actors), and the drivers of its jobs.
/// `prism::init` makes one with one node; `testing::local_cluster` with
/// several.
class embedded_cluster {
public:
  /// Starts the control store, one node per entry of `nodes`, and the default
  /// job's driver on the first node. Throws `prism::error` if a component
  /// does not come up.
  embedded_cluster(const config& cfg, std::vector<resource_map> nodes);

  /// Attaches to the running cluster whose head listens at `head`: no
  /// control store or node starts here, only the default job's driver,
  /// which leases from the first live node. Throws `gcs_unavailable_error`
  /// if the head does not answer.
  embedded_cluster(const config& cfg, const host_port& head);

  /// Stops every component: blocked `get`s fail, running tasks finish, and
  /// every actor is gone when this returns.
  ~embedded_cluster();

  embedded_cluster(const embedded_cluster&) = delete;
  embedded_cluster& operator=(const embedded_cluster&) = delete;

  const std::shared_ptr<owner_client>& driver() const {
    return driver_;
  }

  /// Starts another job with its own driver on the head node.
  std::shared_ptr<owner_client> start_job(const std::string& ns);

  /// Ends a job: its non-detached actors die and its driver stops.
  void end_job(owner_client& driver);

  /// Starts a node and returns its id.
  node_id add_node(const resource_map& resources);

  /// Kills a node (not the head); false if unknown or dead.
  bool kill_node(const node_id& id);

  /// Ids of the nodes in start order, and which are alive.
  node_id node(std::size_t i) const;
  std::vector<node_id> alive_nodes() const;

  /// Kills a worker as a crash would; false if no node has it.
  bool kill_worker(const worker_id& id);

  /// Kills an actor's instance as a crash would (it restarts if it may).
  bool kill_actor(const actor_id& id);

  /// How many durable lineage records the control store keeps.
  std::size_t lineage_records();

  /// The node an alive actor lives on.
  std::optional<node_id> actor_node(const actor_id& id);

  /// What a live node has free now; nothing if it is dead or unknown.
  std::optional<resource_map> available_resources(const node_id& id);

  /// What a live node's object store holds and has done.
  std::optional<protocol::object_store_usage> object_store(const node_id& id);

  /// Empties a live node's object store; returns how many objects it held.
  std::optional<std::size_t> drop_objects(const node_id& id);

  /// Resource requests waiting that no live node can ever fit.
  std::vector<resource_map> pending_infeasible();

  /// The state of a task at the default driver's owner; "" once it ended.
  std::string task_state(const task_id& id);
  /// The copies of the driver's object `id` its owner counts.
  std::size_t object_copies(const object_id& id);

  /// Live workers on all nodes.
  std::size_t num_workers();

  /// Returns once every live raylet's cluster view holds every live node
  /// (or after `control_timeout`).
  void await_views();

  /// Kills the control store as a crash would: what it had not made
  /// durable is lost; messages to it wait at its endpoint. Returns once it
  /// is gone. False if it was not running.
  bool stop_gcs();

  /// Starts a control store on the cluster's storage, which recovers its
  /// tables and takes over from the endpoint. False if one is running.
  bool start_gcs();

  caf::actor_system& system() {
    return *sys_;
  }

  const std::string& storage_path() const {
    return control_.storage_path;
  }

  /// The control store's endpoint: the address that stays the same across
  /// restarts of the control store.
  const caf::actor& gcs() const {
    return gcs_;
  }

private:
  struct node_entry {
    node_id id;
    caf::actor raylet;
    bool alive = true;
  };

  void stop();
  void end_jobs();
  void start_control_store();
  /// The head node (the first started), where drivers attach.
  node_entry head() const;
  /// The raylets of the nodes alive now.
  std::vector<caf::actor> live_raylets() const;
  /// The raylet of node `id` if it is alive, else an invalid handle.
  caf::actor live_raylet(const node_id& id) const;
  /// Asks a live node's raylet; nothing if it is dead or does not answer.
  template <class Reply, class Msg>
  std::optional<Reply> ask_node(const node_id& id, const Msg& msg);
  /// Asks the keeper; false if it does not answer.
  bool ask_keeper_bool(caf::atom_value what);
  std::shared_ptr<owner_client> make_driver(const std::string& ns);
  /// Starts an actor printing `job`'s worker processes' output here, if
  /// this process prints it (`config::log_to_driver`); else nothing.
  caf::actor print_output_of(job_id job);
  /// Stops the actor printing `job`'s output (every job's, for a nil job),
  /// after the output its workers wrote so far, if `flush`.
  void stop_output_of(job_id job, bool flush);
  /// Starts the control store's owner (see `owner_directory::adopter`).
  void start_adopter();

  /// Learns the live nodes of an attached cluster from its control store,
  /// the node in the head's process first.
  void learn_nodes(const caf::node_id& head_process);

  config cfg_;
  /// Attached to a cluster of other processes: nothing here is its to stop
  /// but its own drivers.
  bool attached_ = false;
  /// Attached: keeps this process's endpoint connected to the head's.
  caf::actor head_link_;
  std::unique_ptr<caf::actor_system_config> sys_cfg_;
  std::unique_ptr<caf::actor_system> sys_;
  std::shared_ptr<owner_directory> directory_;
  std::shared_ptr<executor> actor_pool_;
  /// The endpoint of the control store everyone here talks to: the one of
  /// `control_`, or, attached, one that `head_link_` keeps connected.
  caf::actor gcs_;
  /// Not attached: the control store this process runs.
  control_store control_;
  mutable std::mutex mu_;
  /// The actor printing each job's output here (see `print_output_of`).
  std::vector<std::pair<job_id, caf::actor>> outputs_ GUARDED_BY(mu_);
  /// Attached: hands this program to the control store, once.
  caf::actor program_upload_ GUARDED_BY(mu_);
  /// Attached: ships this process's metrics (`prism::metrics`) to its
  /// drivers' node, from the first driver on.
  caf::actor metrics_shipper_ GUARDED_BY(mu_);
  bool program_offered_ GUARDED_BY(mu_) = false;
  std::vector<node_entry> nodes_ GUARDED_BY(mu_);
  std::vector<std::weak_ptr<owner_client>> drivers_ GUARDED_BY(mu_);
  std::shared_ptr<owner_client> driver_;
};

/// The running cluster, or throws `not_initialized_error`.
/// REQUIRES: `cluster_mutex()` held.
embedded_cluster& running_cluster();

/// Guards the process's one running cluster.
std::mutex& cluster_mutex();

/// Starts the process's one cluster with a node per entry of `nodes`, or,
/// with `may_attach`, attaches to the cluster at `cfg.address` (else at
/// `PRISM_ADDRESS`) if one is given. Throws if one runs already, if `cfg` is
/// malformed, if a static registration failed, or if the cluster to attach
/// to does not answer.
void start_cluster(const config& cfg, std::vector<resource_map> nodes,
                   bool may_attach = false);

/// Stops the running cluster, if any.
void stop_cluster();

} // namespace prism::actors
