#include "autoscaler/autoscaler_service.hpp"

#include <chrono>

#include <caf/all.hpp>

#include "autoscaler/local_provider.hpp"
#include "common/log.hpp"
#include "prism/error.hpp"
#include "prism/internal/instance_codec.hpp"
#include "prism/internal/reconciler.hpp"
#include "protocol/kv.hpp"
#include "protocol/raylet_gcs.hpp"
#include "protocol/status.hpp"

namespace prism::actors {

namespace {

using namespace std::chrono_literals;

constexpr auto store_timeout = 5s;
constexpr auto node_timeout = 2s;
constexpr const char* instance_key_prefix = "instance/";

internal::autoscaler_time wall_now() {
  return std::chrono::floor<std::chrono::milliseconds>(
      std::chrono::system_clock::now());
}

/// Instances as keys of the control store's key-value table: written
/// durably, one key each.
class control_store_instances : public internal::instance_storage {
public:
  control_store_instances(caf::actor_system& sys, caf::actor gcs,
                          std::shared_ptr<spdlog::logger> log)
      : sys_(sys), gcs_(std::move(gcs)), log_(std::move(log)) {}

  void save(const std::vector<const internal::instance*>& changed) override {
    caf::scoped_actor self{sys_};
    for (const auto* x : changed)
      ask<bool>(self, protocol::kv_put{autoscaler_namespace,
                                       instance_key_prefix + x->id,
                                       internal::encode_instance(*x),
                                       true,
                                       {}});
  }

  void erase(const std::vector<std::string>& ids) override {
    caf::scoped_actor self{sys_};
    for (const auto& id : ids)
      ask<bool>(self, protocol::kv_del{
                          autoscaler_namespace, instance_key_prefix + id, {}});
  }

  std::vector<internal::instance> load() override {
    caf::scoped_actor self{sys_};
    auto keys = ask<std::vector<std::string>>(
        self, protocol::kv_keys{autoscaler_namespace, instance_key_prefix});
    std::vector<internal::instance> out;
    for (const auto& key : keys) {
      auto v = ask<protocol::kv_value>(
          self, protocol::kv_get{autoscaler_namespace, key});
      if (!v.found)
        continue;
      if (auto x = internal::decode_instance(v.value))
        out.push_back(std::move(*x));
      else
        log_->error("the control store's autoscaler instance {} is damaged "
                    "and is skipped",
                    key);
    }
    return out;
  }

private:
  template <class Answer, class Request>
  Answer ask(caf::scoped_actor& self, Request request) {
    Answer answer{};
    std::string failure;
    self->request(gcs_, store_timeout, std::move(request))
        .receive([&](Answer& a) { answer = std::move(a); },
                 [&](caf::error& e) { failure = sys_.render(e); });
    if (!failure.empty())
      throw gcs_unavailable_error("the control store did not answer: " +
                                  failure);
    return answer;
  }

  caf::actor_system& sys_;
  caf::actor gcs_;
  std::shared_ptr<spdlog::logger> log_;
};

/// What the control store and the nodes report, as the reconciler reads it.
class cluster_reader {
public:
  cluster_reader(caf::actor_system& sys, caf::actor gcs)
      : sys_(sys), gcs_(std::move(gcs)) {}

  /// Throws `gcs_unavailable_error` if the control store does not answer;
  /// a node that does not answer is left out for this pass.
  internal::cluster_view read(internal::autoscaler_time now) {
    caf::scoped_actor self{sys_};
    std::vector<protocol::node_info> nodes;
    protocol::cluster_summary summary;
    std::string failure;
    auto fail = [&](caf::error& e) { failure = sys_.render(e); };
    self->request(gcs_, store_timeout, protocol::list_nodes{})
        .receive(
            [&](std::vector<protocol::node_info>& n) { nodes = std::move(n); },
            fail);
    self->request(gcs_, store_timeout, protocol::query_summary{})
        .receive([&](protocol::cluster_summary& s) { summary = std::move(s); },
                 fail);
    if (!failure.empty())
      throw gcs_unavailable_error("the control store did not answer: " +
                                  failure);
    internal::cluster_view view;
    std::map<node_id, internal::autoscaler_time> still_idle;
    for (const auto& n : nodes) {
      if (!n.alive)
        continue;
      internal::cluster_node_view v;
      v.node_id = n.node.hex();
      if (auto l = n.labels.find(instance_label); l != n.labels.end())
        v.cloud_id = l->second;
      std::optional<protocol::node_resources> r;
      self->request(n.raylet, node_timeout, protocol::query_resources{})
          .receive([&](protocol::node_resources& x) { r = std::move(x); },
                   [](caf::error&) {});
      if (!r) {
        // Alive, as the control store says, but slow to answer: in the
        // cluster, busy, and with nothing free as far as is known.
        v.total = n.resources.to_map();
        view.nodes.push_back(std::move(v));
        continue;
      }
      v.total = r->total.to_map();
      v.free = r->available.to_map();
      v.idle = r->available == r->total && r->waiting.empty() &&
               r->infeasible.empty();
      if (v.idle) {
        auto since = idle_since_.find(n.node);
        v.idle_since = since == idle_since_.end() ? now : since->second;
        still_idle[n.node] = v.idle_since;
      }
      for (const auto& w : r->waiting)
        view.demand.push_back(w.to_map());
      for (const auto& w : r->infeasible)
        view.demand.push_back(w.to_map());
      view.nodes.push_back(std::move(v));
    }
    for (const auto& a : summary.unplaced_actors)
      view.demand.push_back(a.to_map());
    idle_since_ = std::move(still_idle);
    return view;
  }

private:
  caf::actor_system& sys_;
  caf::actor gcs_;
  std::map<node_id, internal::autoscaler_time> idle_since_;
};

} // namespace

std::unique_ptr<node_provider>
make_node_provider(const autoscaler_settings& s) {
  if (s.cfg.provider == "local") {
    local_provider_settings ls;
    ls.program = s.program;
    ls.head_address = s.head_address;
    for (const auto& t : s.cfg.node_types)
      ls.types[t.name] = t.resources;
    ls.log_dir = s.log_dir;
    ls.environment = s.node_environment;
    return std::make_unique<local_process_provider>(std::move(ls));
  }
  throw invalid_argument_error("autoscaler config: provider: no provider '" +
                               s.cfg.provider + "' (this build has: local)");
}

autoscaler_service::autoscaler_service(caf::actor_system& sys, caf::actor gcs,
                                       autoscaler_settings settings,
                                       std::unique_ptr<node_provider> provider)
    : sys_(sys), gcs_(std::move(gcs)), settings_(std::move(settings)),
      provider_(std::move(provider)) {
  thread_ = std::thread{[this] { run(); }};
}

std::vector<std::pair<std::string, std::uint64_t>>
autoscaler_service::instances_by_state() const {
  std::vector<std::pair<std::string, std::uint64_t>> result;
  std::lock_guard<std::mutex> guard{mu_};
  for (std::size_t i = 0; i < by_state_.size(); ++i)
    result.emplace_back(
        internal::to_string(static_cast<internal::instance_state>(i)),
        by_state_[i]);
  return result;
}

void autoscaler_service::count_instances(const internal::reconciler& r) {
  std::array<std::uint64_t, internal::num_instance_states> counts{};
  for (const auto& [id, x] : r.instances())
    ++counts[static_cast<std::size_t>(x.state)];
  std::lock_guard<std::mutex> guard{mu_};
  by_state_ = counts;
}

autoscaler_service::~autoscaler_service() {
  {
    std::lock_guard<std::mutex> guard{mu_};
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void autoscaler_service::run() {
  auto log = component_logger("autoscaler");
  control_store_instances storage{sys_, gcs_, log};
  std::unique_ptr<internal::reconciler> reconciler;
  cluster_reader reader{sys_, gcs_};
  internal::autoscaler_time last_failure{};
  for (;;) {
    {
      std::unique_lock<std::mutex> guard{mu_};
      if (reconciler)
        wake_.wait_for(guard, settings_.cfg.interval,
                       [this]()
                           EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_; });
      if (stopping_)
        return;
    }
    try {
      if (!reconciler) {
        // Reads the instances of the head before this one, if any.
        reconciler = std::make_unique<internal::reconciler>(
            settings_.cfg, *provider_, &storage,
            static_cast<std::uint64_t>(
                std::chrono::system_clock::now().time_since_epoch().count()));
        reconciler->set_log(
            [log](const std::string& line) { log->info("{}", line); });
        log->info("autoscaling {} node types with the {} provider, "
                  "{} instances known",
                  settings_.cfg.node_types.size(), settings_.cfg.provider,
                  reconciler->instances().size());
      }
      auto now = wall_now();
      auto view = reader.read(now);
      reconciler->step(now, view);
      count_instances(*reconciler);
      const auto& status = reconciler->status();
      // The failures of this pass (those of earlier ones are older).
      for (const auto& f : status.failures)
        if (f.at > last_failure)
          log->warn("{} {}: {}", f.node_type.empty() ? "-" : f.node_type,
                    f.cause, f.message);
      last_failure = now;
      caf::scoped_actor self{sys_};
      self->request(gcs_, store_timeout,
                    protocol::kv_put{autoscaler_namespace,
                                     autoscaler_status_key,
                                     internal::format_status(status),
                                     true,
                                     {}})
          .receive([](bool) {},
                   [&](caf::error& e) {
                     log->warn("could not write the status: {}",
                               sys_.render(e));
                   });
    } catch (const std::exception& e) {
      // The control store is restarting, say: the next pass tries again.
      log->warn("this pass was skipped: {}", e.what());
      if (!reconciler) {
        std::unique_lock<std::mutex> guard{mu_};
        wake_.wait_for(guard, settings_.cfg.interval,
                       [this]()
                           EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_; });
      }
    }
  }
}

} // namespace prism::actors
