#pragma once

// A whole autoscaled cluster on a virtual clock, for the autoscaler's tests
// and benchmarks: the fake cloud (which also plays the nodes that join), a
// simulated workload, instance storage in memory (which survives a "restart"
// of the head), and the reconciler. After every pass it checks the
// invariants and keeps the first one broken.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "prism/internal/fake_cloud.hpp"
#include "prism/internal/fake_workload.hpp"
#include "prism/internal/reconciler.hpp"

namespace prism::testing::autoscaling {

using namespace std::chrono_literals;
using prism::internal::autoscaler_config;
using prism::internal::autoscaler_time;
using prism::internal::instance;
using prism::internal::instance_state;

/// Instance storage in memory; can be made to fail.
class memory_storage : public prism::internal::instance_storage {
public:
  bool failing = false;

  void save(const std::vector<const instance*>& changed) override {
    if (failing)
      throw std::runtime_error("the disk is full");
    for (const auto* x : changed)
      rows_[x->id] = *x;
  }
  void erase(const std::vector<std::string>& ids) override {
    if (failing)
      throw std::runtime_error("the disk is full");
    for (const auto& id : ids)
      rows_.erase(id);
  }
  std::vector<instance> load() override {
    std::vector<instance> out;
    for (const auto& [id, x] : rows_)
      out.push_back(x);
    return out;
  }
  std::size_t size() const {
    return rows_.size();
  }

private:
  std::map<std::string, instance> rows_;
};

/// A fixed start, so that runs are the same for a seed.
inline constexpr autoscaler_time epoch{
    std::chrono::milliseconds{1'800'000'000'000}};

inline std::map<std::string, resource_map>
type_resources(const autoscaler_config& cfg) {
  std::map<std::string, resource_map> out;
  for (const auto& t : cfg.node_types)
    out[t.name] = t.resources;
  return out;
}

class simulation {
public:
  simulation(autoscaler_config cfg, prism::internal::fake_cloud_faults faults,
             std::uint64_t seed, resource_map head = {{"CPU", 2}})
      : cfg_(std::move(cfg)), seed_(seed), now_(epoch),
        cloud_(seed, std::move(faults), type_resources(cfg_), epoch),
        work_(std::move(head), epoch) {
    restart_head();
  }

  /// One tick of `tick`: the cloud and the workload move on, then one pass.
  void step(std::chrono::milliseconds tick = 1000ms) {
    now_ += tick;
    cloud_.advance_to(now_);
    work_.advance(now_, cloud_.joined());
    auto view = work_.view();
    if (edit_view)
      edit_view(view);
    reconciler_->step(now_, view);
    check();
  }

  /// Changes what the cluster reports before each pass (a node left out,
  /// say), if set.
  std::function<void(prism::internal::cluster_view&)> edit_view;

  /// Steps until `done()` or `limit` passed; returns whether it is done.
  template <class Done>
  bool run_until(Done done, std::chrono::milliseconds limit,
                 std::chrono::milliseconds tick = 1000ms) {
    auto until = now_ + limit;
    while (!done()) {
      if (now_ >= until || !violation_.empty())
        return false;
      step(tick);
    }
    return true;
  }

  /// A new reconciler from what storage holds, as a restarted head has.
  void restart_head() {
    reconciler_ = std::make_unique<prism::internal::reconciler>(
        cfg_, cloud_, &storage_, seed_ * 7919 + ++restarts_);
  }

  // -- invariants
  // --------------------------------------------------------------

  /// The first invariant broken, or empty.
  const std::string& violation() const {
    return violation_;
  }

  void check() {
    if (!violation_.empty())
      return;
    const auto& asked = cloud_.asked_per_request();
    for (const auto& [request, made] : cloud_.made_per_request())
      if (made > asked.at(request))
        return fail("request " + request + " made " + std::to_string(made) +
                    " instances for " + std::to_string(asked.at(request)));
    // Every request made no more instances than the autoscaler sent it for
    // (its instances that reached the provider, in all passes so far).
    for (const auto& [id, x] : reconciler_->instances())
      if (x.launch_attempts > 0)
        sent_[x.request_id].insert(id);
    for (const auto& [request, made] : cloud_.made_per_request())
      if (made > static_cast<int>(sent_[request].size()))
        return fail("request " + request + " made " + std::to_string(made) +
                    " instances, for " + std::to_string(sent_[request].size()) +
                    " sent");
    std::map<std::string, int> active;
    std::map<std::string, std::string> live_cloud_ids;
    int total = 0;
    for (const auto& [id, x] : reconciler_->instances()) {
      if (!x.cloud_id.empty() && x.state != instance_state::terminated &&
          !live_cloud_ids.emplace(x.cloud_id, id).second)
        return fail(id + " and " + live_cloud_ids[x.cloud_id] +
                    " both stand for " + x.cloud_id);
      for (std::size_t k = 1; k < x.history.size(); ++k)
        if (!prism::internal::allowed(x.history[k].from, x.history[k].to))
          return fail(id + " made an illegal change");
      if (!prism::internal::is_active(x.state))
        continue;
      ++active[x.node_type];
      ++total;
    }
    if (total > cfg_.max_workers)
      return fail(std::to_string(total) + " instances active, above " +
                  std::to_string(cfg_.max_workers));
    for (const auto& [type, n] : active) {
      auto* t = cfg_.type(type);
      if (!t || n > t->max_workers)
        return fail(std::to_string(n) + " instances of " + type +
                    " active, above its maximum");
    }
    if (prism::internal::illegal_instance_transitions() != illegal_at_start_)
      return fail("an illegal transition was refused");
  }

  /// Whether the cloud runs no more than the minimums and the autoscaler
  /// waits for nothing: what "no leak" means once demand is gone.
  bool settled_at_minimum() const {
    int mins = 0;
    for (const auto& t : cfg_.node_types)
      mins += t.min_workers;
    if (cloud_.running() > static_cast<std::size_t>(mins))
      return false;
    for (const auto& [id, x] : reconciler_->instances())
      if (x.state != instance_state::terminated &&
          x.state != instance_state::running)
        return false;
    return true;
  }

  // -- access
  // ------------------------------------------------------------------

  prism::internal::fake_cloud& cloud() {
    return cloud_;
  }
  prism::internal::fake_workload& work() {
    return work_;
  }
  prism::internal::reconciler& autoscaler() {
    return *reconciler_;
  }
  memory_storage& storage() {
    return storage_;
  }
  autoscaler_time now() const {
    return now_;
  }
  const autoscaler_config& config() const {
    return cfg_;
  }

  /// Records of `type` in `state`.
  int count(instance_state state, const std::string& type = {}) const {
    int n = 0;
    for (const auto& [id, x] : reconciler_->instances())
      if (x.state == state && (type.empty() || x.node_type == type))
        ++n;
    return n;
  }

  /// Instances the cloud made, over all requests.
  int made() const {
    int n = 0;
    for (const auto& [request, k] : cloud_.made_per_request())
      n += k;
    return n;
  }

private:
  void fail(std::string what) {
    violation_ = "seed " + std::to_string(seed_) + ", at +" +
                 std::to_string((now_ - epoch).count() / 1000) +
                 " s: " + std::move(what);
  }

  autoscaler_config cfg_;
  std::uint64_t seed_;
  autoscaler_time now_;
  prism::internal::fake_cloud cloud_;
  prism::internal::fake_workload work_;
  memory_storage storage_;
  std::unique_ptr<prism::internal::reconciler> reconciler_;
  std::uint64_t restarts_ = 0;
  std::uint64_t illegal_at_start_ =
      prism::internal::illegal_instance_transitions();
  std::string violation_;
  /// Instances the autoscaler sent a launch for, by request id.
  std::map<std::string, std::set<std::string>> sent_;
};

} // namespace prism::testing::autoscaling
