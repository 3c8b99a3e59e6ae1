#include "cluster/embedded_cluster.hpp"

#include <cmath>
#include <mutex>
#include <thread>

#include <caf/all.hpp>

#include "common/log.hpp"
#include "gcs/gcs.hpp"
#include "owner/owner.hpp"
#include "prism/api.hpp"
#include "prism/detail/function_registry.hpp"
#include "prism/task.hpp"
#include "prism/testing.hpp"
#include "protocol/raylet_gcs.hpp"
#include "protocol/raylet_worker.hpp"
#include "protocol/registration.hpp"
#include "raylet/raylet.hpp"

namespace prism::actors {

namespace {

constexpr auto control_timeout = std::chrono::seconds{10};

resource_map node_resources(const config& cfg) {
  if (cfg.num_cpus < 0 || !std::isfinite(cfg.num_cpus))
    throw invalid_argument_error("num_cpus must be 0 (all hardware threads) "
                                 "or positive");
  resource_map result = cfg.resources;
  for (const auto& [name, quantity] : result) {
    if (name.empty())
      throw invalid_argument_error("node resource names must not be empty");
    if (!std::isfinite(quantity) || quantity < 0)
      throw invalid_argument_error("node resource '" + name +
                                   "' must not be negative");
  }
  if (result.count("CPU") == 0) {
    double cpus = cfg.num_cpus;
    if (cpus == 0)
      cpus = std::max(1u, std::thread::hardware_concurrency());
    result["CPU"] = cpus;
  }
  return result;
}

} // namespace

embedded_cluster::embedded_cluster(const config& cfg) {
  set_log_level(cfg.log_level);
  auto resources = node_resources(cfg);
  sys_cfg_ = std::make_unique<caf::actor_system_config>();
  protocol::add_message_types(*sys_cfg_);
  auto threads = cfg.scheduler_threads != 0
                     ? cfg.scheduler_threads
                     : std::max(2u, std::thread::hardware_concurrency());
  sys_cfg_->set("scheduler.max-threads", static_cast<size_t>(threads));
  // Idle scheduler threads spin briefly, then sleep on a condition variable
  // that a new message wakes. CAF's middle phase (polling with 50 us sleeps
  // that nothing interrupts) would add its sleep to every hop of a
  // request/response chain.
  sys_cfg_->set("work-stealing.moderate-poll-attempts", size_t{0});
  sys_ = std::make_unique<caf::actor_system>(*sys_cfg_);
  directory_ = std::make_shared<owner_directory>();
  gcs_ = spawn_gcs(*sys_);
  raylet_config rc;
  rc.node = node_id{unique_id::random()};
  rc.resources = internal::resource_set{resources};
  rc.gcs = gcs_;
  rc.directory = directory_;
  rc.prestart_workers =
      static_cast<std::uint32_t>(std::ceil(rc.resources.quantity("CPU")));
  rc.max_workers = cfg.max_workers_per_node;
  auto raylet = spawn_raylet(*sys_, rc);
  raylets_.push_back(raylet);
  auto self_id = worker_id{unique_id::random()};
  driver_store_ = std::make_shared<internal::memory_store>();
  driver_owner_ = spawn_owner(
      *sys_, owner_config{self_id, rc.node, raylet, driver_store_, directory_});
  directory_->add(self_id, driver_owner_);
  caf::scoped_actor self{*sys_};
  bool started = false;
  std::string failure;
  self->request(gcs_, control_timeout, protocol::start_job{self_id, ""})
      .receive(
          [&](const protocol::job_started& msg) {
            job_ = msg.job;
            started = true;
          },
          [&](caf::error& err) { failure = sys_->render(err); });
  if (!started) {
    stop();
    throw error(errc::internal,
                "the control store did not start a job: " + failure);
  }
  driver_ = std::make_shared<owner_client>(
      *sys_, owner_client::config{self_id, rc.node, job_, driver_owner_, raylet,
                                  driver_store_});
}

embedded_cluster::~embedded_cluster() {
  stop();
}

void embedded_cluster::stop() {
  if (!sys_)
    return;
  detail::error_info err;
  err.code = errc::not_initialized;
  err.message = "prism was shut down";
  if (driver_store_)
    driver_store_->fail_all_pending(err);
  driver_.reset();
  if (gcs_) {
    caf::scoped_actor self{*sys_};
    self->send(gcs_, protocol::finish_job{job_});
  }
  // Owners first: their stores fail pending objects, so a task blocked in
  // `get` returns; then the nodes, which take their workers along.
  directory_->for_each([this](const caf::actor& owner) {
    caf::anon_send_exit(owner, caf::exit_reason::user_shutdown);
  });
  for (auto& r : raylets_)
    caf::anon_send_exit(r, caf::exit_reason::user_shutdown);
  if (gcs_)
    caf::anon_send_exit(gcs_, caf::exit_reason::user_shutdown);
  raylets_.clear();
  gcs_ = nullptr;
  driver_owner_ = nullptr;
  directory_->clear();
  sys_.reset();
  sys_cfg_.reset();
}

bool embedded_cluster::kill_worker(const worker_id& id) {
  caf::scoped_actor self{*sys_};
  for (auto& r : raylets_) {
    bool killed = false;
    self->request(r, control_timeout, protocol::kill_worker{id})
        .receive([&](bool ok) { killed = ok; }, [](caf::error&) {});
    if (killed)
      return true;
  }
  return false;
}

std::size_t embedded_cluster::num_workers() {
  caf::scoped_actor self{*sys_};
  std::size_t total = 0;
  for (auto& r : raylets_)
    self->request(r, control_timeout, protocol::count_workers{})
        .receive([&](std::uint64_t n) { total += n; }, [](caf::error&) {});
  return total;
}

namespace {

std::mutex cluster_mu;
std::unique_ptr<embedded_cluster> cluster; // guarded by cluster_mu

embedded_cluster& running_cluster() {
  if (!cluster)
    throw not_initialized_error("prism is not initialized: call prism::init()");
  return *cluster;
}

} // namespace

} // namespace prism::actors

namespace prism {

void init(const config& cfg) {
  std::lock_guard<std::mutex> guard{actors::cluster_mu};
  if (actors::cluster)
    throw error(errc::invalid_argument, "prism is already initialized");
  if (!cfg.address.empty())
    throw invalid_argument_error(
        "joining a cluster at '" + cfg.address +
        "' is not supported yet; leave config.address empty to start an "
        "embedded cluster");
  auto errors = detail::function_registry::instance().static_errors();
  if (!errors.empty()) {
    std::string text;
    for (auto& e : errors)
      text += (text.empty() ? "" : "; ") + e;
    throw registration_error(text);
  }
  auto c = std::make_unique<actors::embedded_cluster>(cfg);
  detail::set_driver_runtime(c->driver());
  actors::cluster = std::move(c);
}

void shutdown() {
  std::unique_ptr<actors::embedded_cluster> c;
  {
    std::lock_guard<std::mutex> guard{actors::cluster_mu};
    detail::set_driver_runtime(nullptr);
    c = std::move(actors::cluster);
  }
  c.reset();
}

bool is_initialized() noexcept {
  std::lock_guard<std::mutex> guard{actors::cluster_mu};
  return actors::cluster != nullptr;
}

namespace testing {

bool kill_worker(const worker_id& id) {
  std::lock_guard<std::mutex> guard{actors::cluster_mu};
  return actors::running_cluster().kill_worker(id);
}

std::size_t num_workers() {
  std::lock_guard<std::mutex> guard{actors::cluster_mu};
  return actors::running_cluster().num_workers();
}

} // namespace testing

} // namespace prism
