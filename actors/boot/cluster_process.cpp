#include "boot/cluster_process.hpp"

#include <filesystem>
#include <functional>
#include <thread>

#include <caf/all.hpp>
#include <caf/io/middleman.hpp>

#include "autoscaler/autoscaler_service.hpp"
#include "common/default_handlers.hpp"
#include "common/log.hpp"
#include "gcs/gcs.hpp"
#include "gcs/gcs_client.hpp"
#include "gcs/job_runner.hpp"
#include "join/cluster_door.hpp"
#include "join/head_link.hpp"
#include "net/peers.hpp"
#include "observe/cluster_status.hpp"
#include "observe/metrics_route.hpp"
#include "observe/status_history.hpp"
#include "observe/status_page.hpp"
#include "prism/error.hpp"
#include "protocol/kv.hpp"
#include "protocol/metrics.hpp"

namespace prism::actors {

namespace {

/// Where others reach a process that listens on `host`: `host` itself,
/// unless it is every interface; then `node_ip` if given, else the
/// interface this host reaches `peer` from ("" for the default route).
std::string reached_at(const std::string& host, const std::string& node_ip,
                       const std::string& peer) {
  if (!is_wildcard(host))
    return host;
  return !node_ip.empty() ? node_ip : local_address_toward(peer);
}

using start_raylet_fn = std::function<std::pair<node_id, caf::actor>()>;

struct node_keeper_state {
  static inline const char* name = "node_keeper";

  start_raylet_fn start;
  caf::actor raylet;
  std::shared_ptr<spdlog::logger> log;
};

using node_keeper_actor = caf::stateful_actor<node_keeper_state>;

void start_raylet_of(node_keeper_actor* self) {
  auto& st = self->state;
  auto [node, raylet] = st.start();
  st.raylet = std::move(raylet);
  self->monitor(st.raylet);
  st.log->info("node {} started", node.hex());
}

/// Keeps a node of this process: when its raylet ends unasked (the control
/// store refused it after declaring it dead), a new raylet joins as a new
/// node. The raylet ends with the keeper.
caf::behavior node_keeper(node_keeper_actor* self, caf::actor first,
                          start_raylet_fn start) {
  auto& st = self->state;
  st.start = std::move(start);
  st.log = component_logger("cluster");
  st.raylet = std::move(first);
  install_default_handlers(self, st.log);
  self->monitor(st.raylet);
  set_checked_down_handler(self, [self](caf::down_msg& msg) {
    auto& st = self->state;
    if (msg.source != st.raylet.address())
      return;
    st.log->warn("the node's raylet ended ({}); joining again as a new node",
                 self->system().render(msg.reason));
    start_raylet_of(self);
  });
  self->set_exit_handler([self](caf::exit_msg& msg) {
    self->demonitor(self->state.raylet);
    self->send_exit(self->state.raylet, msg.reason);
    self->quit(msg.reason);
  });
  return {
      [](caf::get_atom) {},
      [self](const protocol::query_node_metrics& q) {
        return self->delegate(self->state.raylet, q);
      },
  };
}

} // namespace

cluster_process::cluster_process(const options& opts) : opts_(opts) {
  set_log_level(opts.cfg.log_level);
}

void cluster_process::start_actor_system() {
  node_resources(opts_.cfg, opts_.cfg.resources); // throws on bad settings
  sys_cfg_ = std::make_unique<caf::actor_system_config>();
  configure_cluster_process(*sys_cfg_, scheduler_threads(opts_.cfg), opts_.net);
  sys_ = std::make_unique<caf::actor_system>(*sys_cfg_);
  start_dialer(*sys_, dial_timeout);
  directory_ = std::make_shared<owner_directory>();
  actor_pool_ = make_actor_pool();
  set_gcs_wait(std::chrono::milliseconds{opts_.cfg.gcs_reconnect_timeout_ms});
}

std::pair<node_id, caf::actor> cluster_process::start_raylet_here() const {
  return start_raylet(*sys_, opts_.cfg, opts_.cfg.resources, endpoint_,
                      directory_, actor_pool_, worker_kind::job_programs,
                      opts_.program_cache, opts_.labels);
}

std::unique_ptr<cluster_process>
cluster_process::start_head(const options& opts) {
  std::unique_ptr<cluster_process> p{new cluster_process(opts)};
  try {
    p->start_actor_system();
    auto log = component_logger("cluster");
    if (check_exposure(opts.listen.host, uses_tls(*p->sys_), opts.insecure))
      log->warn("{}", insecure_warning(opts.listen.host));
    // On a storage of its own, the head may be one that died and started
    // again: nodes and drivers of the stored cluster get the recovery grace
    // to report back, as after a restart of the control store.
    auto first = opts.cfg.storage_path.empty() ? gcs_start::fresh_cluster
                                               : gcs_start::restart;
    if (!opts.session_dir.empty())
      p->jobs_ =
          spawn_job_runner(*p->sys_, job_runner_config{opts.session_dir});
    p->control_ = start_control_store(*p->sys_, p->opts_.cfg, first,
                                      /*keep_programs=*/true, p->jobs_);
    p->endpoint_ = p->control_.endpoint;
    // Reusing the address: the connections of a head that died wait in
    // TIME_WAIT on its port, and its successor listens there at once. Two
    // heads still never listen on one port.
    // The port serves the door only: it hands out the control store to a
    // process that presents the token.
    p->door_ = spawn_cluster_door(*p->sys_, p->endpoint_, opts.token);
    auto port = publish_actor(*p->sys_, p->door_, opts.listen.port,
                              opts.listen.host, true);
    if (!port)
      throw invalid_argument_error("cannot listen on " +
                                   address_of(opts.listen) + ": " +
                                   p->sys_->render(port.error()));
    p->port_ = *port;
    set_own_contact(
        *p->sys_, address_of(host_port{
                      reached_at(opts.listen.host, opts.node_ip, ""), *port}));
    if (p->jobs_)
      p->start_job_runner();
    std::tie(p->node_, p->raylet_) = p->start_raylet_here();
    start_adopter(*p->sys_, p->node_, p->raylet_, p->endpoint_, p->directory_);
    if (opts.autoscaler)
      p->start_autoscaler();
    p->start_metrics(opts.listen.host);
    p->start_status_page(opts.listen.host);
  } catch (...) {
    p->shutdown();
    throw;
  }
  return p;
}

std::unique_ptr<cluster_process>
cluster_process::start_node(const options& opts) {
  std::unique_ptr<cluster_process> p{new cluster_process(opts)};
  try {
    p->start_actor_system();
    // Other processes connect to this one on the interface it reaches the
    // head from, unless told otherwise.
    auto host = opts.listen.host.empty() ? local_address_toward(opts.head.host)
                                         : opts.listen.host;
    listen_for_peers(*p->sys_, host, opts.insecure,
                     reached_at(host, opts.node_ip, opts.head.host));
    auto conn = connect_head(
        *p->sys_, opts.head, head_entry{opts.token, "node"},
        std::chrono::milliseconds{opts.cfg.gcs_reconnect_timeout_ms},
        opts.head_timeout,
        [raw = p.get()](const std::string& why) { raw->stop(why); });
    p->endpoint_ = conn.endpoint;
    p->link_ = conn.link;
    caf::actor first;
    std::tie(p->node_, first) = p->start_raylet_here();
    auto again = [raw = p.get()] { return raw->start_raylet_here(); };
    p->raylet_ = p->sys_->spawn(node_keeper, std::move(first), again);
    p->start_metrics(host);
  } catch (...) {
    p->shutdown();
    throw;
  }
  return p;
}

http_settings cluster_process::http_port_settings(const std::string& what,
                                                  const std::string& host,
                                                  std::uint16_t port,
                                                  bool insecure) const {
  http_settings s;
  s.what = what;
  s.listen = host_port{host, port};
  auto tls = tls_of(*sys_cfg_);
  s.tls.cert = tls.cert;
  s.tls.key = tls.key;
  s.token = opts_.token;
  // A process that listens insecure opens every port so.
  s.insecure = insecure || opts_.insecure;
  return s;
}

void cluster_process::start_metrics(const std::string& host) {
  if (!opts_.metrics_port)
    return;
  metrics_sources sources;
  sources.sys = sys_.get();
  sources.node = raylet_;
  if (control_.keeper)
    sources.gcs = endpoint_;
  if (autoscaler_)
    sources.autoscaler = [a = autoscaler_.get()] {
      return a->instances_by_state();
    };
  auto s = http_port_settings("metrics", host, *opts_.metrics_port,
                              opts_.metrics_insecure);
  s.routes["/metrics"] = metrics_route(std::move(sources));
  try {
    metrics_ = std::make_unique<http_server>(std::move(s));
  } catch (const invalid_argument_error& e) {
    throw invalid_argument_error(
        std::string{e.what()} +
        " (--metrics-insecure allows it; --metrics-export-port -1 opens "
        "none)");
  }
}

void cluster_process::start_status_page(const std::string& host) {
  if (!opts_.dashboard_port)
    return;
  history_ = std::make_unique<status_history>(*sys_, endpoint_);
  status_page_sources sources;
  sources.sys = sys_.get();
  sources.gcs = endpoint_;
  sources.history = history_.get();
  auto open = [&](std::uint16_t port) {
    auto s = http_port_settings("status page", host, port, false);
    add_status_page_routes(s.routes, sources);
    return std::make_unique<http_server>(std::move(s));
  };
  try {
    try {
      status_page_ = open(*opts_.dashboard_port);
    } catch (const invalid_argument_error& e) {
      // Only a port that is taken is worth another try.
      if (!opts_.dashboard_port_fallback || *opts_.dashboard_port == 0 ||
          std::string{e.what()}.find("beyond loopback") != std::string::npos)
        throw;
      component_logger("cluster")->warn(
          "{}; the status page takes a free port instead", e.what());
      status_page_ = open(0);
    }
  } catch (const invalid_argument_error& e) {
    throw invalid_argument_error(std::string{e.what()} +
                                 " (--insecure allows it; --dashboard-port "
                                 "-1 opens none)");
  }
  // For `prism status`; a head that cannot write it still serves the page.
  caf::scoped_actor self{*sys_};
  self->request(endpoint_, std::chrono::seconds{5},
                protocol::kv_put{status_page_namespace,
                                 status_page_key,
                                 status_page_url(),
                                 true,
                                 {}})
      .receive([](bool) {}, [](const caf::error&) {});
}

std::string cluster_process::metrics_url() const {
  if (!metrics_)
    return {};
  auto host = opts_.node_ip.empty() ? local_address_toward("") : opts_.node_ip;
  return metrics_->url(host) + "/metrics";
}

std::string cluster_process::status_page_url() const {
  if (!status_page_)
    return {};
  auto host = opts_.node_ip.empty() ? local_address_toward("") : opts_.node_ip;
  return status_page_->url(host);
}

std::string cluster_process::contact() const {
  return own_contact(*sys_);
}

std::string cluster_process::wait() {
  std::unique_lock<std::mutex> guard{mu_};
  ended_cv_.wait(guard, [this] { return ended_.has_value(); });
  return *ended_;
}

void cluster_process::stop(const std::string& why) {
  {
    std::lock_guard<std::mutex> guard{mu_};
    if (ended_)
      return;
    ended_ = why;
  }
  ended_cv_.notify_all();
}

cluster_process::~cluster_process() {
  shutdown();
}

void cluster_process::start_autoscaler() {
  autoscaler_settings s;
  s.cfg = *opts_.autoscaler;
  s.head_address = contact();
  s.log_dir = opts_.autoscaler_log_dir;
  std::error_code ec;
  s.program = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  // Its nodes use this process's credentials.
  for (auto& [name, value] : credentials())
    s.node_environment[name] = value;
  auto provider = make_node_provider(s);
  autoscaler_ = std::make_unique<autoscaler_service>(
      *sys_, endpoint_, std::move(s), std::move(provider));
}

std::map<std::string, std::string> cluster_process::credentials() const {
  std::map<std::string, std::string> result;
  if (opts_.net.tls.enabled()) {
    result["PRISM_TLS_CERT"] = opts_.net.tls.cert;
    result["PRISM_TLS_KEY"] = opts_.net.tls.key;
    result["PRISM_TLS_CA"] = opts_.net.tls.ca;
  }
  if (!opts_.token.empty())
    result["PRISM_AUTH_TOKEN"] = opts_.token;
  return result;
}

void cluster_process::start_job_runner() {
  job_runner_start start;
  start.gcs = endpoint_;
  start.programs_dir = control_.storage_path + "/programs";
  // Its drivers attach to this head, with this process's credentials.
  start.driver_env.push_back("PRISM_ADDRESS=" + contact());
  for (auto& [name, value] : credentials())
    start.driver_env.push_back(name + "=" + value);
  caf::anon_send(jobs_, std::move(start));
}

void cluster_process::shutdown() {
  if (!sys_)
    return;
  // The metrics port and the autoscaler first: their requests need
  // everything else.
  metrics_.reset();
  status_page_.reset();
  history_.reset();
  autoscaler_.reset();
  process_parts parts;
  parts.owners = directory_.get();
  parts.nodes = {raylet_};
  parts.links = {link_, door_, jobs_};
  // A head runs the control store; a node reaches it through its endpoint.
  if (control_.keeper)
    parts.control = &control_;
  else
    parts.links.push_back(endpoint_);
  stop_process(*sys_, std::move(parts));
  raylet_ = link_ = endpoint_ = door_ = jobs_ = nullptr;
  sys_.reset();
  sys_cfg_.reset();
}

} // namespace prism::actors
