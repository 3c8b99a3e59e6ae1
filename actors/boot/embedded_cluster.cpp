#include "boot/embedded_cluster.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <thread>

#include <caf/all.hpp>

#include "boot/components.hpp"
#include "boot/serve_worker.hpp"
#include "common/log.hpp"
#include "common/output_source.hpp"
#include "common/shared_queue_policy.hpp"
#include "gcs/gcs.hpp"
#include "gcs/gcs_client.hpp"
#include "gcs/gcs_storage.hpp"
#include "join/cluster_token.hpp"
#include "join/head_link.hpp"
#include "join/program_upload.hpp"
#include "net/network.hpp"
#include "net/peers.hpp"
#include "owner/driver_output.hpp"
#include "owner/owner.hpp"
#include "owner/task_events.hpp"
#include "prism/api.hpp"
#include "prism/client.hpp"
#include "prism/detail/function_registry.hpp"
#include "prism/internal/thread_annotations.hpp"
#include "prism/task.hpp"
#include "protocol/gcs_keeper.hpp"
#include "protocol/lineage.hpp"
#include "protocol/object_store.hpp"
#include "protocol/output.hpp"
#include "protocol/owner_gcs.hpp"
#include "protocol/raylet_gcs.hpp"
#include "protocol/raylet_worker.hpp"
#include "protocol/registration.hpp"
#include "protocol/status.hpp"
#include "protocol/supervisor.hpp"
#include "protocol/testing.hpp"
#include "raylet/raylet.hpp"
#include "worker/fork_server.hpp"
#include "worker/instance_serving.hpp"
#include "worker/metrics_shipper.hpp"
#include "worker/worker_process.hpp"

namespace prism::actors {

namespace {

std::string anonymous_namespace() {
  return "anonymous-" + unique_id::random().hex();
}

} // namespace

embedded_cluster::embedded_cluster(const config& cfg,
                                   std::vector<resource_map> nodes)
    : cfg_(cfg) {
  set_log_level(cfg.log_level);
  if (nodes.empty())
    throw invalid_argument_error("a cluster needs at least one node");
  for (auto& n : nodes)
    n = node_resources(cfg, std::move(n));
  sys_cfg_ = std::make_unique<caf::actor_system_config>();
  if (cfg.worker_processes) {
    // Worker processes connect to the nodes' doors over loopback.
    configure_cluster_process(*sys_cfg_, scheduler_threads(cfg),
                              network_settings{});
  } else {
    protocol::add_message_types(*sys_cfg_);
    sys_cfg_->set("scheduler.max-threads", scheduler_threads(cfg));
    // One shared run queue, with idle threads that spin briefly before they
    // sleep (see shared_queue_policy.hpp for why not CAF's work stealing).
    use_shared_queue_scheduler(*sys_cfg_);
  }
  sys_ = std::make_unique<caf::actor_system>(*sys_cfg_);
  directory_ = std::make_shared<owner_directory>();
  actor_pool_ = make_actor_pool();
  set_gcs_wait(std::chrono::milliseconds{cfg.gcs_reconnect_timeout_ms});
  configure_task_events(cfg.task_events);
  try {
    if (cfg.worker_processes) {
      // Worker processes connect to each other and to this one directly.
      listen_for_peers(*sys_, "127.0.0.1");
      start_dialer(*sys_, dial_timeout);
    }
    start_control_store();
    for (auto& n : nodes)
      add_node(n);
    await_views();
    start_adopter();
    driver_ = make_driver(cfg.ns.empty() ? anonymous_namespace() : cfg.ns);
  } catch (...) {
    stop();
    throw;
  }
}

embedded_cluster::embedded_cluster(const config& cfg, const host_port& head)
    : cfg_(cfg), attached_(true) {
  set_log_level(cfg.log_level);
  sys_cfg_ = std::make_unique<caf::actor_system_config>();
  network_settings net;
  net.tls = tls_files{cfg.tls_cert, cfg.tls_key, cfg.tls_ca};
  configure_cluster_process(*sys_cfg_, scheduler_threads(cfg), net);
  sys_ = std::make_unique<caf::actor_system>(*sys_cfg_);
  directory_ = std::make_shared<owner_directory>();
  auto wait = std::chrono::milliseconds{cfg.gcs_reconnect_timeout_ms};
  set_gcs_wait(wait);
  configure_task_events(cfg.task_events);
  try {
    // The processes of the cluster connect to this one directly, on the
    // interface it reaches the head from.
    listen_for_peers(*sys_, local_address_toward(head.host),
                     cfg.insecure || insecure_from_environment());
    start_dialer(*sys_, dial_timeout);
    auto entry = head_entry{resolve_token(cfg.auth_token, cfg.auth_token_file),
                            "driver"};
    auto conn = connect_head(*sys_, head, entry, wait, wait, nullptr);
    gcs_ = conn.endpoint;
    head_link_ = conn.link;
    learn_nodes(conn.head_process);
    driver_ = make_driver(cfg.ns.empty() ? anonymous_namespace() : cfg.ns);
  } catch (...) {
    stop();
    throw;
  }
}

void embedded_cluster::learn_nodes(const caf::node_id& head_process) {
  auto nodes = ask_gcs<std::vector<protocol::node_info>>(
      *sys_, gcs_, protocol::list_nodes{}, "listing the cluster's nodes");
  // Only live nodes: a dead one kept in the table (a restarted head's
  // predecessor among them) has no raylet to reach.
  std::erase_if(nodes, [](const auto& n) { return !n.alive || !n.raylet; });
  // The head's node first: drivers lease from it.
  std::stable_partition(nodes.begin(), nodes.end(), [&](const auto& n) {
    return n.raylet.node() == head_process;
  });
  std::lock_guard<std::mutex> guard{mu_};
  for (auto& n : nodes)
    nodes_.push_back(node_entry{n.node, n.raylet, true});
  if (nodes_.empty())
    throw gcs_unavailable_error("the cluster has no live node to run on");
}

void embedded_cluster::start_control_store() {
  control_ = actors::start_control_store(*sys_, cfg_);
  gcs_ = control_.endpoint;
}

bool embedded_cluster::ask_keeper_bool(caf::atom_value what) {
  return actors::ask_keeper_bool(*sys_, control_.keeper, what);
}

bool embedded_cluster::stop_gcs() {
  return ask_keeper_bool(protocol::gcs_stop_atom::value);
}

bool embedded_cluster::start_gcs() {
  if (!control_.keeper)
    return false;
  bool started = false;
  std::string why;
  caf::scoped_actor self{*sys_};
  self->request(control_.keeper, control_timeout,
                protocol::gcs_start_atom::value)
      .receive(
          [&](bool ok, std::string& failure) {
            started = ok;
            why = std::move(failure);
          },
          [&](caf::error& err) { why = sys_->render(err); });
  if (!why.empty())
    throw invalid_argument_error(why);
  return started;
}

embedded_cluster::~embedded_cluster() {
  stop();
}

node_id embedded_cluster::add_node(const resource_map& resources) {
  auto [node, raylet] =
      start_raylet(*sys_, cfg_, resources, gcs_, directory_, actor_pool_);
  std::lock_guard<std::mutex> guard{mu_};
  nodes_.push_back(node_entry{node, raylet, true});
  return node;
}

embedded_cluster::node_entry embedded_cluster::head() const {
  std::lock_guard<std::mutex> guard{mu_};
  return nodes_.front();
}

void embedded_cluster::start_adopter() {
  auto head_node = head();
  actors::start_adopter(*sys_, head_node.id, head_node.raylet, gcs_,
                        directory_);
}

namespace {

/// How long a job's end waits for the last output of its workers.
constexpr auto output_flush_timeout = std::chrono::seconds{5};
/// How long a driver's end waits for its node to take its last metrics.
constexpr auto last_metrics_timeout = std::chrono::seconds{3};

} // namespace

caf::actor embedded_cluster::print_output_of(job_id job) {
  // Tasks in threads of this process write to its stdout themselves.
  if (!(attached_ || cfg_.worker_processes) ||
      !output_to_driver(cfg_.log_to_driver))
    return nullptr;
  driver_output_config dc;
  dc.job = job;
  dc.gcs = gcs_;
  dc.dedup = dedup_output(cfg_.dedup_logs);
  dc.colour = output_in_colour();
  auto printer = spawn_driver_output(*sys_, std::move(dc));
  try {
    ask_gcs<bool>(*sys_, gcs_, protocol::subscribe_output{job, printer},
                  "asking for the job's output");
  } catch (const error& e) {
    component_logger("cluster")->warn(
        "job {}: its workers' output is not printed here: {}", job.value,
        e.what());
  }
  return printer;
}

void embedded_cluster::stop_output_of(job_id job, bool flush) {
  std::vector<std::pair<job_id, caf::actor>> stopped;
  {
    std::lock_guard<std::mutex> guard{mu_};
    for (auto i = outputs_.begin(); i != outputs_.end();) {
      if (i->first == job || job == job_id{}) {
        stopped.push_back(std::move(*i));
        i = outputs_.erase(i);
      } else {
        ++i;
      }
    }
  }
  for (auto& [id, printer] : stopped) {
    caf::scoped_actor self{*sys_};
    // What the job's workers wrote before it ended is printed first: their
    // nodes send it on now, and answer once it is taken.
    if (flush)
      self->request(gcs_, output_flush_timeout, protocol::flush_output{id})
          .receive([](bool) {}, [](caf::error&) {});
    // Gone before this returns, while the connections are up: a printer
    // (an actor of its own thread) that answered its last lines while the
    // process's connections closed could be held past the end of the actor
    // system, which then waited for its thread for ever.
    self->monitor(printer);
    caf::anon_send_exit(printer, caf::exit_reason::user_shutdown);
    self->receive([](const caf::down_msg&) {},
                  caf::after(output_flush_timeout) >> [] {});
  }
}

std::shared_ptr<owner_client>
embedded_cluster::make_driver(const std::string& ns) {
  auto head_node = head();
  auto self_id = worker_id{unique_id::random()};
  // An attached driver's worker processes run its program on the nodes;
  // the embedded cluster's nodes run this process's program for every job.
  auto program = attached_ ? this_job_program() : protocol::job_program{};
  auto job = ask_gcs<protocol::job_started>(
                 *sys_, gcs_, protocol::start_job{self_id, ns, program},
                 "starting a job")
                 .job;
  auto store = std::make_shared<internal::memory_store>();
  owner_client::config oc;
  oc.self = self_id;
  oc.node = head_node.id;
  oc.job = job;
  oc.raylet = head_node.raylet;
  oc.gcs = gcs_;
  oc.ns = ns;
  oc.store = store;
  oc.max_inline_bytes = cfg_.max_inline_object_bytes;
  oc.directory = directory_;
  oc.driver = true;
  auto driver = std::make_shared<owner_client>(*sys_, std::move(oc));
  driver->owner_handle();
  auto output = print_output_of(job);
  std::lock_guard<std::mutex> guard{mu_};
  drivers_.push_back(driver);
  if (output)
    outputs_.emplace_back(job, std::move(output));
  if (attached_ && !program_offered_) {
    program_offered_ = true;
    program_upload_ = spawn_program_upload(*sys_, gcs_, program);
  }
  // An attached driver's metrics are served by its node, as a worker
  // process's are; an embedded cluster's stay in its process.
  if (attached_ && !metrics_shipper_)
    metrics_shipper_ = spawn_metrics_shipper(*sys_, head_node.raylet, self_id);
  return driver;
}

std::shared_ptr<owner_client>
embedded_cluster::start_job(const std::string& ns) {
  return make_driver(ns.empty() ? anonymous_namespace() : ns);
}

void embedded_cluster::end_job(owner_client& driver) {
  detail::error_info err;
  err.code = errc::not_initialized;
  err.message = "the job ended";
  // Before the end: the control store forgets who takes the job's output
  // once the job ended.
  stop_output_of(driver.current_job(), true);
  driver.flush_task_events();
  try {
    ask_gcs<bool>(*sys_, gcs_, protocol::finish_job{driver.current_job()},
                  "ending a job");
  } catch (const error& e) {
    component_logger("cluster")->warn(
        "job {} ended without the control store: {}",
        driver.current_job().value, e.what());
  }
  driver.fail_all(err);
  directory_->remove(driver.self());
  caf::anon_send_exit(driver.owner_handle(), caf::exit_reason::user_shutdown);
}

// Fails what every driver waits for and records the end of its job.
void embedded_cluster::end_jobs() {
  detail::error_info err;
  err.code = errc::not_initialized;
  err.message = "prism was shut down";
  std::vector<std::shared_ptr<owner_client>> drivers;
  {
    std::lock_guard<std::mutex> guard{mu_};
    for (auto& d : drivers_)
      if (auto p = d.lock())
        drivers.push_back(std::move(p));
  }
  bool gcs_up = attached_ || ask_keeper_bool(protocol::gcs_up_atom::value);
  stop_output_of(job_id{}, gcs_up);
  caf::actor shipper;
  {
    std::lock_guard<std::mutex> guard{mu_};
    shipper = metrics_shipper_;
  }
  // The metrics updated since the last shipment are served too. A node
  // that is gone ended the shipper (it watches the node): then this
  // returns at once; a frozen one costs `last_metrics_timeout`.
  if (shipper)
    ship_metrics_now(*sys_, shipper, last_metrics_timeout);
  for (auto& d : drivers) {
    d->fail_all(err);
    if (gcs_up) {
      // The calls failed just now are among the events flushed.
      d->flush_task_events();
      // Acknowledged, hence durable: the next cluster on this storage knows
      // the job ended and its non-detached actors with it.
      caf::scoped_actor self{*sys_};
      self->request(gcs_, control_timeout,
                    protocol::finish_job{d->current_job()})
          .receive([](bool) {}, [](caf::error&) {});
    }
  }
}

void embedded_cluster::stop() {
  if (!sys_)
    return;
  end_jobs();
  driver_.reset();
  process_parts parts;
  parts.owners = directory_.get();
  {
    std::lock_guard<std::mutex> guard{mu_};
    if (attached_) {
      // The cluster's processes run on; only this process's links go.
      parts.links = {program_upload_, head_link_, gcs_, metrics_shipper_};
      program_upload_ = head_link_ = metrics_shipper_ = nullptr;
    } else {
      parts.control = &control_;
      for (auto& n : nodes_)
        parts.nodes.push_back(n.raylet);
    }
    gcs_ = nullptr;
    nodes_.clear();
  }
  stop_process(*sys_, std::move(parts));
  actor_pool_.reset();
  sys_.reset();
  sys_cfg_.reset();
}

bool embedded_cluster::kill_node(const node_id& id) {
  caf::actor raylet;
  {
    std::lock_guard<std::mutex> guard{mu_};
    for (std::size_t i = 1; i < nodes_.size() && !raylet; ++i) {
      auto& n = nodes_[i];
      if (n.id == id && n.alive) {
        n.alive = false;
        raylet = n.raylet;
      }
    }
  }
  if (!raylet)
    return false;
  // A reason the raylet can trap, so that it takes its workers and actors
  // down with it (exit_reason::kill would skip its handler). Returns once the
  // raylet is gone: its actors got their exit before any later call.
  caf::scoped_actor self{*sys_};
  self->monitor(raylet);
  caf::anon_send_exit(raylet, caf::exit_reason::remote_link_unreachable);
  self->receive([](const caf::down_msg&) {},
                caf::after(control_timeout) >> [] {});
  return true;
}

node_id embedded_cluster::node(std::size_t i) const {
  std::lock_guard<std::mutex> guard{mu_};
  if (i >= nodes_.size())
    throw invalid_argument_error("no node with index " + std::to_string(i));
  return nodes_[i].id;
}

std::vector<node_id> embedded_cluster::alive_nodes() const {
  std::lock_guard<std::mutex> guard{mu_};
  std::vector<node_id> result;
  for (auto& n : nodes_)
    if (n.alive)
      result.push_back(n.id);
  return result;
}

std::vector<caf::actor> embedded_cluster::live_raylets() const {
  std::lock_guard<std::mutex> guard{mu_};
  std::vector<caf::actor> result;
  for (auto& n : nodes_)
    if (n.alive)
      result.push_back(n.raylet);
  return result;
}

bool embedded_cluster::kill_worker(const worker_id& id) {
  auto raylets = live_raylets();
  caf::scoped_actor self{*sys_};
  for (auto& r : raylets) {
    bool killed = false;
    self->request(r, control_timeout, protocol::kill_worker{id})
        .receive([&](bool ok) { killed = ok; }, [](caf::error&) {});
    if (killed)
      return true;
  }
  return false;
}

std::size_t embedded_cluster::lineage_records() {
  return ask_gcs<std::uint64_t>(*sys_, gcs_, protocol::count_lineage{},
                                "counting lineage records");
}

bool embedded_cluster::kill_actor(const actor_id& id) {
  caf::scoped_actor self{*sys_};
  bool killed = false;
  self->request(gcs_, control_timeout, protocol::kill_actor{id, false})
      .receive([&](bool ok) { killed = ok; }, [](caf::error&) {});
  return killed;
}

std::optional<node_id> embedded_cluster::actor_node(const actor_id& id) {
  caf::scoped_actor self{*sys_};
  std::optional<node_id> result;
  self->request(gcs_, control_timeout, protocol::locate_actor{id})
      .receive(
          [&](const protocol::actor_location& loc) {
            if (loc.alive)
              result = loc.node;
          },
          [](caf::error&) {});
  return result;
}

caf::actor embedded_cluster::live_raylet(const node_id& id) const {
  std::lock_guard<std::mutex> guard{mu_};
  for (auto& n : nodes_)
    if (n.alive && n.id == id)
      return n.raylet;
  return nullptr;
}

template <class Reply, class Msg>
std::optional<Reply> embedded_cluster::ask_node(const node_id& id,
                                                const Msg& msg) {
  auto raylet = live_raylet(id);
  if (!raylet)
    return std::nullopt;
  std::optional<Reply> result;
  caf::scoped_actor self{*sys_};
  self->request(raylet, control_timeout, msg)
      .receive([&](Reply& r) { result = std::move(r); }, [](caf::error&) {});
  return result;
}

std::optional<resource_map>
embedded_cluster::available_resources(const node_id& id) {
  auto r = ask_node<protocol::node_resources>(id, protocol::query_resources{});
  if (!r)
    return std::nullopt;
  return r->available.to_map();
}

std::optional<protocol::object_store_usage>
embedded_cluster::object_store(const node_id& id) {
  return ask_node<protocol::object_store_usage>(id, protocol::count_objects{});
}

std::optional<std::size_t> embedded_cluster::drop_objects(const node_id& id) {
  auto r = ask_node<std::uint64_t>(id, protocol::drop_objects{});
  if (!r)
    return std::nullopt;
  return static_cast<std::size_t>(*r);
}

std::vector<resource_map> embedded_cluster::pending_infeasible() {
  auto raylets = live_raylets();
  std::vector<resource_map> result;
  caf::scoped_actor self{*sys_};
  for (auto& r : raylets)
    self->request(r, control_timeout, protocol::query_resources{})
        .receive(
            [&](const protocol::node_resources& nr) {
              for (auto& shape : nr.infeasible) {
                auto m = shape.to_map();
                if (std::find(result.begin(), result.end(), m) == result.end())
                  result.push_back(std::move(m));
              }
            },
            [](caf::error&) {});
  return result;
}

std::string embedded_cluster::task_state(const task_id& id) {
  std::string result;
  caf::scoped_actor self{*sys_};
  self->request(driver_->owner_handle(), control_timeout,
                protocol::query_task{id})
      .receive([&](std::string& s) { result = std::move(s); },
               [](caf::error&) {});
  return result;
}

std::size_t embedded_cluster::object_copies(const object_id& id) {
  std::uint32_t result = 0;
  caf::scoped_actor self{*sys_};
  self->request(driver_->owner_handle(), control_timeout,
                protocol::query_copies{id})
      .receive([&](std::uint32_t n) { result = n; }, [](caf::error&) {});
  return result;
}

void embedded_cluster::await_views() {
  // A raylet that does not know a node yet drops a soft pin to it: a task
  // pinned softly to a node right after it joined could run elsewhere.
  auto deadline = std::chrono::steady_clock::now() + control_timeout;
  caf::scoped_actor self{*sys_};
  for (;;) {
    auto raylets = live_raylets();
    bool all = true;
    for (auto& r : raylets)
      self->request(r, control_timeout, protocol::view_size_atom::value)
          .receive([&](std::uint64_t n) { all = all && n >= raylets.size(); },
                   [&](caf::error&) { all = false; });
    if (all || std::chrono::steady_clock::now() > deadline)
      return;
    std::this_thread::sleep_for(std::chrono::milliseconds{1});
  }
}

std::size_t embedded_cluster::num_workers() {
  auto raylets = live_raylets();
  caf::scoped_actor self{*sys_};
  std::size_t total = 0;
  for (auto& r : raylets)
    self->request(r, control_timeout, protocol::count_workers{})
        .receive([&](std::uint64_t n) { total += n; }, [](caf::error&) {});
  return total;
}

namespace {

std::mutex cluster_mu;
std::unique_ptr<embedded_cluster> cluster GUARDED_BY(cluster_mu);

} // namespace

embedded_cluster& running_cluster() {
  if (!cluster)
    throw not_initialized_error("prism is not initialized: call prism::init()");
  return *cluster;
}

std::mutex& cluster_mutex() {
  return cluster_mu;
}

namespace {

// `cfg` with what the environment sets on top.
config with_environment(config cfg) {
  if (const char* env = std::getenv("PRISM_WORKER_PROCESSES");
      env != nullptr && std::string{env} == "1")
    cfg.worker_processes = true;
  return cfg;
}

} // namespace

void start_cluster(const config& cfg, std::vector<resource_map> nodes,
                   bool may_attach) {
  // A worker process serves as its worker instead, and never returns.
  prism::serve_if_worker();
  std::lock_guard<std::mutex> guard{cluster_mu};
  if (cluster)
    throw error(errc::invalid_argument, "prism is already initialized");
  auto errors = detail::function_registry::instance().static_errors();
  if (!errors.empty()) {
    std::string text;
    for (auto& e : errors)
      text += (text.empty() ? "" : "; ") + e;
    throw registration_error(text);
  }
  auto address = cfg.address;
  if (!address.empty() && !may_attach)
    throw invalid_argument_error("a local_cluster starts its own nodes; "
                                 "config.address must be empty");
  if (address.empty() && may_attach)
    if (const char* env = std::getenv("PRISM_ADDRESS"); env != nullptr)
      address = env;
  std::unique_ptr<embedded_cluster> c;
  if (address.empty())
    c = std::make_unique<embedded_cluster>(with_environment(cfg),
                                           std::move(nodes));
  else
    c = std::make_unique<embedded_cluster>(
        cfg, parse_host_port(address, "the cluster address"));
  detail::set_driver_runtime(c->driver());
  cluster = std::move(c);
}

void stop_cluster() {
  std::unique_ptr<embedded_cluster> c;
  {
    std::lock_guard<std::mutex> guard{cluster_mu};
    detail::set_driver_runtime(nullptr);
    c = std::move(cluster);
  }
  c.reset();
}

} // namespace prism::actors

namespace prism {

void init(const config& cfg) {
  actors::start_cluster(cfg, {cfg.resources}, true);
}

bool is_worker_process() noexcept {
  return actors::started_as_worker() || actors::started_as_fork_server() ||
         actors::started_as_instance();
}

void serve_if_worker() {
  // A fork server returns here only in a process it forked.
  if (actors::started_as_fork_server()) {
    actors::init_output_source();
    // Once, for every worker it forks: their configuration costs no thread.
    actors::configure_worker();
    actors::serve_forks([] { actors::prepare_worker(); });
  }
  if (actors::started_as_instance()) {
    // An actor's instance alone, without an actor system of its own.
    actors::init_output_source();
    actors::serve_as_instance();
  }
  if (actors::started_as_worker()) {
    // Its stdout and stderr are its own now (a forked one's came with its
    // launch).
    actors::init_output_source();
    actors::configure_task_events(false);
    actors::serve_as_worker();
  }
}

void shutdown() {
  actors::stop_cluster();
}

bool is_initialized() noexcept {
  std::lock_guard<std::mutex> guard{actors::cluster_mu};
  return actors::cluster != nullptr;
}

client client::connect(const std::string& ns) {
  std::lock_guard<std::mutex> guard{actors::cluster_mu};
  return client{actors::running_cluster().start_job(ns)};
}

client::~client() {
  shutdown();
}

detail::runtime& client::live() const {
  if (!rt_)
    throw not_initialized_error("this client's job has ended");
  return *rt_;
}

job_id client::job() const {
  return live().current_job();
}

void client::shutdown() {
  if (!rt_)
    return;
  auto rt = std::move(rt_);
  std::lock_guard<std::mutex> guard{actors::cluster_mu};
  if (actors::cluster)
    actors::cluster->end_job(static_cast<actors::owner_client&>(*rt));
}

} // namespace prism
