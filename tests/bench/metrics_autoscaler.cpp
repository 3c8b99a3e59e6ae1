// The autoscaler on the fake cloud: one reconcile pass over 10,000
// instances, next to its floor (the bare bookkeeping any reconciler does per
// pass: index a listing of 10,000 and look each instance up), and how long
// a demand for 1,000 nodes takes to settle on a cloud that lags, in virtual
// time and in real time.

#include "bench.hpp"

#include <chrono>
#include <unordered_map>
#include <unordered_set>

#include "autoscaler_simulation.hpp"

namespace prism::bench {

namespace {

using namespace std::chrono_literals;
using namespace prism::testing::autoscaling;
using prism::internal::fake_cloud_faults;
using prism::internal::node_type_config;

using clock_type = std::chrono::steady_clock;

double ms_since(clock_type::time_point start) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - start)
      .count();
}

autoscaler_config large_cluster(int nodes, int max_pending) {
  autoscaler_config cfg;
  cfg.node_types = {node_type_config{"cpu8", {{"CPU", 8}}, 0, nodes}};
  cfg.max_workers = nodes;
  cfg.max_pending = max_pending;
  return cfg;
}

/// A cluster of `nodes` busy instances, grown on a healthy cloud.
simulation grown(int nodes) {
  fake_cloud_faults healthy;
  healthy.boot_min = 1s;
  healthy.boot_max = 1s;
  simulation sim{large_cluster(nodes, nodes), healthy, 1, {}};
  sim.work().submit({{"CPU", 8}}, nodes, 24h);
  if (!sim.run_until([&] { return sim.work().waiting() == 0; }, 10min))
    throw std::runtime_error("10,000 instances did not start");
  return sim;
}

double reconcile_10k(const run_options&) {
  auto sim = grown(10000);
  auto view = sim.work().view();
  // The mean of five passes over 10,000 running instances.
  auto now = sim.now();
  auto start = clock_type::now();
  for (int k = 0; k < 5; ++k) {
    now += 1s;
    sim.autoscaler().step(now, view);
  }
  auto per_pass = ms_since(start) / 5;
  if (sim.count(instance_state::running) != 10000)
    throw std::runtime_error("the passes lost instances");
  return per_pass;
}

double reconcile_floor_10k(const run_options&) {
  auto sim = grown(10000);
  std::unordered_map<std::string, std::string> by_cloud;
  for (const auto& [id, x] : sim.autoscaler().instances())
    by_cloud.emplace(x.cloud_id, id);
  std::size_t found = 0;
  auto start = clock_type::now();
  for (int k = 0; k < 5; ++k) {
    auto listing = sim.cloud().non_terminated();
    std::unordered_set<std::string> seen;
    seen.reserve(listing.instances.size());
    for (const auto& c : listing.instances)
      if (seen.insert(c.id).second && by_cloud.contains(c.id))
        ++found;
  }
  auto per_pass = ms_since(start) / 5;
  if (found != 50000)
    throw std::runtime_error("the floor missed instances");
  return per_pass;
}

/// Demand for 1,000 nodes on a cloud that lags and misbehaves: a pass a
/// second of virtual time until every task runs. Returns {virtual s, real
/// ms}.
std::pair<double, double> converge_1000() {
  fake_cloud_faults lagging;
  lagging.max_invisible = 30s;
  lagging.drop_young = 0.2;
  lagging.max_no_address = 20s;
  lagging.throttle = 0.05;
  lagging.lost_reply = 0.05;
  lagging.partial_launch = 0.05;
  lagging.never_joins = 0.01;
  lagging.boot_min = 30s;
  lagging.boot_max = 90s;
  auto cfg = large_cluster(1000, 100);
  cfg.join_timeout = 300s;
  simulation sim{cfg, lagging, 42, {}};
  sim.work().submit({{"CPU", 8}}, 1000, 24h);
  auto start = clock_type::now();
  if (!sim.run_until([&] { return sim.work().waiting() == 0; }, 24h))
    throw std::runtime_error("1,000 nodes did not settle in a virtual day");
  auto real = ms_since(start);
  if (!sim.violation().empty())
    throw std::runtime_error(sim.violation());
  return {std::chrono::duration<double>(sim.now() - epoch).count(), real};
}

} // namespace

std::vector<metric> autoscaler_metrics() {
  return {
      {"autoscaler_reconcile_10k_instances_ms", "ms", false, reconcile_10k},
      {"autoscaler_floor_10k_listing_ms", "ms", false, reconcile_floor_10k},
      {"autoscaler_converge_s", "s", false,
       [](const run_options&) { return converge_1000().first; }},
      {"autoscaler_converge_real_ms", "ms", false,
       [](const run_options&) { return converge_1000().second; }},
  };
}

} // namespace prism::bench
