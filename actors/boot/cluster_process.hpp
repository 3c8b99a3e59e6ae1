#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

#include "boot/components.hpp"
#include "common/executor.hpp"
#include "http/http_server.hpp"
#include "net/network.hpp"
#include "owner/owner_directory.hpp"
#include "prism/config.hpp"
#include "prism/internal/autoscaler_config.hpp"
#include "prism/internal/thread_annotations.hpp"

namespace prism::actors {

class autoscaler_service;
class status_history;

/// One process of a cluster, as `prism start` runs it: the head (the
/// control store, published on a port, and a node) or a node that joins the
/// head. The same actors as in the embedded cluster; only the process
/// boundary and the middleman between them are new.
class cluster_process {
public:
  /// The head's port unless told otherwise.
  static constexpr std::uint16_t default_port = 6380;

  struct options {
    /// The control store's and the node's settings: `num_cpus`,
    /// `resources`, `storage_path`, `log_level`, the gcs timeouts.
    config cfg;
    /// Head: where it listens (port 0 picks a free one). Node: the host of
    /// its port for the other processes (the port is any free one); empty
    /// takes the address of the interface it reaches the head from.
    host_port listen{"127.0.0.1", default_port};
    /// The address other processes reach this one at, when it listens on
    /// every interface ("0.0.0.0"); empty takes the address of the
    /// interface of the default route.
    std::string node_ip;
    /// Whether it may listen beyond loopback without TLS (it warns).
    bool insecure = false;
    /// Head: the cluster token every node and driver must present ("":
    /// none is asked). Node: the token it presents.
    std::string token;
    /// Node: where the head listens.
    host_port head;
    network_settings net;
    /// Node: how long the head may stay unreachable before the node ends.
    std::chrono::milliseconds head_timeout{60000};
    /// Where the node keeps programs fetched from the control store; empty:
    /// `default_program_cache()`.
    std::string program_cache;
    /// What the node says of itself when it joins (`add_node::labels`).
    std::map<std::string, std::string> labels;
    /// Head: runs the autoscaler with this configuration; its local
    /// provider's nodes log into `autoscaler_log_dir`.
    std::optional<internal::autoscaler_config> autoscaler;
    std::string autoscaler_log_dir;
    /// Head: runs the jobs `prism job submit` hands it, with their files in
    /// this session directory (gcs/job_runner.hpp); empty: none.
    std::string session_dir;
    /// The metrics port (`/metrics`, Prometheus text) on the host this
    /// process listens on: its port, 0 for a free one; nullopt: none.
    std::optional<std::uint16_t> metrics_port = 0;
    /// Whether the metrics port may listen beyond loopback without TLS or
    /// the token (`insecure` allows it too).
    bool metrics_insecure = false;
    /// Head: the status page's port (observe/status_page.hpp) on the host
    /// it listens on: its port, 0 for a free one; nullopt: none. Its TLS
    /// and token rules are the metrics port's.
    std::optional<std::uint16_t> dashboard_port = 0;
    /// Head: if `dashboard_port` is taken, take a free port instead of
    /// failing (for a default port, which another head may hold).
    bool dashboard_port_fallback = false;
  };

  /// Starts the control store on `opts.cfg.storage_path`, publishes it on
  /// `opts.listen`, and starts the head's node. Throws a Prism error (bad
  /// settings, a storage that cannot be used, a port that is taken).
  static std::unique_ptr<cluster_process> start_head(const options& opts);

  /// Starts a node that joins the head at `opts.head`. Throws
  /// `gcs_unavailable_error` if the head does not answer.
  static std::unique_ptr<cluster_process> start_node(const options& opts);

  /// Stops every component of the process.
  ~cluster_process();

  cluster_process(const cluster_process&) = delete;
  cluster_process& operator=(const cluster_process&) = delete;

  /// Where other processes reach this one, "HOST:PORT".
  std::string contact() const;

  /// The port the head listens on; 0 for a node.
  std::uint16_t port() const {
    return port_;
  }

  const node_id& node() const {
    return node_;
  }

  /// Where its metrics are read, "http://HOST:PORT/metrics" (https with
  /// TLS); empty without a metrics port.
  std::string metrics_url() const;

  /// Head: where its status page is read, "http://HOST:PORT" (https with
  /// TLS); empty without one.
  std::string status_page_url() const;

  /// Blocks until `stop` is called, or until a node lost its head for
  /// good; returns why the process ends.
  std::string wait();

  /// Ends `wait` with `why`. Safe from any thread.
  void stop(const std::string& why);

private:
  explicit cluster_process(const options& opts);
  void start_actor_system();
  /// Starts a raylet of this process's node, joining through `endpoint_`.
  std::pair<node_id, caf::actor> start_raylet_here() const;
  /// Head: starts the autoscaler of `opts_.autoscaler`.
  void start_autoscaler();
  /// What a process this one starts needs to enter the cluster: the
  /// cluster token and the TLS files, as environment entries.
  std::map<std::string, std::string> credentials() const;
  /// Head: tells the job runner where the cluster is.
  void start_job_runner();
  /// Opens the metrics port on `host`, if `opts_.metrics_port` asks for one.
  void start_metrics(const std::string& host);
  /// Head: opens the status page on `host`, if `opts_.dashboard_port` asks
  /// for one, and publishes its address for `prism status`.
  void start_status_page(const std::string& host);
  /// The HTTP port `what` on `host`, with this process's TLS files and
  /// token.
  http_settings http_port_settings(const std::string& what,
                                   const std::string& host, std::uint16_t port,
                                   bool insecure) const;
  void shutdown();

  options opts_;
  std::unique_ptr<caf::actor_system_config> sys_cfg_;
  std::unique_ptr<caf::actor_system> sys_;
  std::shared_ptr<owner_directory> directory_;
  std::shared_ptr<executor> actor_pool_;
  /// Head only: the control store.
  control_store control_;
  /// The control store's endpoint in this process: the head's own, or on a
  /// node one that the head link attaches to the head's.
  caf::actor endpoint_;
  /// Head only: the door it publishes (`cluster_door.hpp`).
  caf::actor door_;
  /// Head only, if `opts_.session_dir` is set: the job runner.
  caf::actor jobs_;
  /// Head only, if configured: the autoscaler.
  std::unique_ptr<autoscaler_service> autoscaler_;
  caf::actor link_;
  /// The first node of this process (a node may join again as a new one).
  node_id node_;
  /// The head's raylet, or the keeper of a node's raylet.
  caf::actor raylet_;
  std::uint16_t port_ = 0;
  /// The metrics port, if open.
  std::unique_ptr<http_server> metrics_;
  /// Head: the status page's samples and port, if open.
  std::unique_ptr<status_history> history_;
  std::unique_ptr<http_server> status_page_;
  std::mutex mu_;
  std::condition_variable ended_cv_;
  std::optional<std::string> ended_ GUARDED_BY(mu_);
};

} // namespace prism::actors
