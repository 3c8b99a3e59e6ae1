// The autoscaler's decisions as pure functions: minimums first, then
// maximums, then demand bin-packed onto node types; pending nodes count as
// capacity; a cap on pending launches; idle nodes go after the timeout but
// not below the minimum; pending ones go before running ones; a type backed
// off is passed over.

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <string>

#include "prism/internal/autoscaler_policy.hpp"

namespace autoscaler_policy_test {

using namespace std::chrono_literals;
using namespace prism::internal;

namespace {

const autoscaler_time t0{std::chrono::milliseconds{1'800'000'000'000}};

autoscaler_config config() {
  autoscaler_config cfg;
  cfg.node_types = {
      node_type_config{"small", {{"CPU", 2}}, 0, 10},
      node_type_config{"large", {{"CPU", 16}}, 0, 10},
      node_type_config{"gpu", {{"CPU", 8}, {"GPU", 1}}, 0, 2},
  };
  cfg.max_workers = 20;
  cfg.max_pending = 10;
  cfg.idle_timeout = 60s;
  return cfg;
}

capacity_node running(std::string id, std::string type,
                      prism::resource_map free, bool idle = false,
                      autoscaler_time idle_since = t0) {
  capacity_node n;
  n.instance_id = std::move(id);
  n.node_type = std::move(type);
  n.state = instance_state::running;
  n.free = std::move(free);
  n.idle = idle;
  n.idle_since = idle_since;
  n.since = t0 - 1h;
  return n;
}

capacity_node pending(std::string id, std::string type, instance_state state,
                      const autoscaler_config& cfg,
                      autoscaler_time since = t0) {
  capacity_node n;
  n.instance_id = std::move(id);
  n.node_type = type;
  n.state = state;
  n.free = cfg.type(type)->resources;
  n.since = since;
  return n;
}

scaling_view view_with(std::vector<prism::resource_map> demand) {
  scaling_view v;
  v.now = t0;
  v.demand = std::move(demand);
  return v;
}

std::vector<prism::resource_map> copies(prism::resource_map shape, int n) {
  return std::vector<prism::resource_map>(static_cast<std::size_t>(n), shape);
}

bool stopped(const scaling_plan& p, const std::string& id) {
  return std::any_of(p.stop.begin(), p.stop.end(),
                     [&](const auto& s) { return s.first == id; });
}

} // namespace

BOOST_AUTO_TEST_SUITE(autoscaler_policy)

BOOST_AUTO_TEST_CASE(minimums_are_launched_without_demand) {
  auto cfg = config();
  cfg.node_types[0].min_workers = 3;
  auto plan = plan_scaling(cfg, view_with({}));
  BOOST_TEST(plan.launch["small"] == 3);
  BOOST_TEST(plan.launch.size() == 1u);
}

BOOST_AUTO_TEST_CASE(demand_is_bin_packed_onto_the_type_it_fills_best) {
  auto cfg = config();
  // 40 one-CPU tasks: two of 16 and four of 2, every CPU used.
  auto plan = plan_scaling(cfg, view_with(copies({{"CPU", 1}}, 40)));
  BOOST_TEST(plan.launch["large"] == 2);
  BOOST_TEST(plan.launch["small"] == 4);
  // One task of one CPU: the small type, not a large node 1/16 used.
  plan = plan_scaling(cfg, view_with(copies({{"CPU", 1}}, 1)));
  BOOST_TEST(plan.launch["small"] == 1);
  BOOST_TEST(plan.launch.count("large") == 0u);
  // A GPU task goes to the GPU type only; CPU tasks never do.
  plan = plan_scaling(cfg, view_with(copies({{"GPU", 1}}, 1)));
  BOOST_TEST(plan.launch["gpu"] == 1);
  plan = plan_scaling(cfg, view_with(copies({{"CPU", 8}}, 1)));
  BOOST_TEST(plan.launch["large"] == 1);
  BOOST_TEST(plan.launch.count("gpu") == 0u);
}

BOOST_AUTO_TEST_CASE(free_and_pending_capacity_is_used_before_launching) {
  auto cfg = config();
  auto v = view_with(copies({{"CPU", 1}}, 20));
  v.nodes.push_back(running("a", "large", {{"CPU", 4}}));
  v.nodes.push_back(pending("b", "large", instance_state::requested, cfg));
  auto plan = plan_scaling(cfg, v);
  // 4 fit on a, 16 on b: nothing to launch, nothing to stop.
  BOOST_TEST(plan.launch.empty());
  BOOST_TEST(plan.stop.empty());
}

BOOST_AUTO_TEST_CASE(maximums_cap_launches_per_type_and_overall) {
  auto cfg = config();
  cfg.node_types[1].max_workers = 1; // large
  cfg.node_types[0].max_workers = 3; // small
  auto plan = plan_scaling(cfg, view_with(copies({{"CPU", 2}}, 40)));
  BOOST_TEST(plan.launch["large"] == 1);
  BOOST_TEST(plan.launch["small"] == 3);
  // The GPU type only once the others are full (its GPU would sit idle).
  BOOST_TEST(plan.launch["gpu"] == 2);
  // What is left waits: every type is at its maximum.
  BOOST_TEST(plan.waiting.size() == 1u);
  BOOST_TEST(plan.waiting[0].second == 40 - 8 - 3 - 8);
  cfg = config();
  cfg.max_workers = 2;
  plan = plan_scaling(cfg, view_with(copies({{"CPU", 16}}, 5)));
  BOOST_TEST(plan.launch["large"] == 2);
}

BOOST_AUTO_TEST_CASE(launches_in_flight_are_capped) {
  auto cfg = config();
  cfg.max_pending = 3;
  auto v = view_with(copies({{"CPU", 16}}, 10));
  v.nodes.push_back(pending("p", "large", instance_state::allocated, cfg));
  auto plan = plan_scaling(cfg, v);
  // One pending already, so two more; the rest waits.
  BOOST_TEST(plan.launch["large"] == 2);
  BOOST_TEST(plan.waiting.size() == 1u);
  BOOST_TEST(plan.waiting[0].second == 7);
}

BOOST_AUTO_TEST_CASE(demand_no_type_fits_is_infeasible) {
  auto plan = plan_scaling(config(), view_with(copies({{"CPU", 64}}, 2)));
  BOOST_TEST(plan.launch.empty());
  BOOST_TEST(plan.infeasible.size() == 1u);
  BOOST_TEST(plan.infeasible[0].second == 2);
  BOOST_TEST(plan.waiting.empty());
}

BOOST_AUTO_TEST_CASE(a_backed_off_type_is_passed_over_for_another) {
  auto cfg = config();
  auto v = view_with(copies({{"CPU", 2}}, 1));
  v.backed_off = {"small"};
  auto plan = plan_scaling(cfg, v);
  BOOST_TEST(plan.launch["large"] == 1);
  BOOST_TEST(plan.launch.count("small") == 0u);
  // Only a backed-off type fits: the demand waits, it is not infeasible.
  v = view_with(copies({{"GPU", 1}}, 1));
  v.backed_off = {"gpu"};
  plan = plan_scaling(cfg, v);
  BOOST_TEST(plan.launch.empty());
  BOOST_TEST(plan.waiting.size() == 1u);
  BOOST_TEST(plan.infeasible.empty());
}

BOOST_AUTO_TEST_CASE(
    idle_nodes_go_after_the_timeout_but_not_below_the_minimum) {
  auto cfg = config();
  cfg.node_types[0].min_workers = 1;
  auto v = view_with({});
  v.nodes.push_back(running("a", "small", {{"CPU", 2}}, true, t0 - 10min));
  v.nodes.push_back(running("b", "small", {{"CPU", 2}}, true, t0 - 5min));
  v.nodes.push_back(running("c", "small", {{"CPU", 2}}, true, t0 - 30s));
  v.nodes.push_back(running("d", "small", {{"CPU", 0}}, false));
  auto plan = plan_scaling(cfg, v);
  // a and b are idle past the timeout; c is not yet; d is busy.
  BOOST_TEST(stopped(plan, "a"));
  BOOST_TEST(stopped(plan, "b"));
  BOOST_TEST(!stopped(plan, "c"));
  BOOST_TEST(!stopped(plan, "d"));
  cfg.node_types[0].min_workers = 3;
  plan = plan_scaling(cfg, v);
  // Three must stay: only the longest idle goes.
  BOOST_TEST(plan.stop.size() == 1u);
  BOOST_TEST(stopped(plan, "a"));
}

BOOST_AUTO_TEST_CASE(an_idle_node_that_demand_needs_stays) {
  auto v = view_with(copies({{"CPU", 2}}, 1));
  v.nodes.push_back(running("a", "small", {{"CPU", 2}}, true, t0 - 10min));
  auto plan = plan_scaling(config(), v);
  BOOST_TEST(plan.stop.empty());
  BOOST_TEST(plan.launch.empty());
}

BOOST_AUTO_TEST_CASE(
    pending_nodes_are_cancelled_before_running_ones_are_retired) {
  auto cfg = config();
  cfg.node_types[1].max_workers = 2;
  auto v = view_with({});
  v.nodes.push_back(running("run1", "large", {{"CPU", 0}}));
  v.nodes.push_back(running("run2", "large", {{"CPU", 16}}, true, t0 - 1s));
  v.nodes.push_back(
      pending("alloc", "large", instance_state::allocated, cfg, t0 - 20s));
  v.nodes.push_back(pending("queued", "large", instance_state::queued, cfg));
  auto plan = plan_scaling(cfg, v);
  // Four of large with a maximum of two: both pending ones go, the one not
  // yet launched first; no running node is touched.
  BOOST_TEST(plan.stop.size() == 2u);
  BOOST_TEST(plan.stop[0].first == "queued");
  BOOST_TEST(plan.stop[1].first == "alloc");
  // Above the maximum by three: the idle running node goes next, the busy
  // one stays.
  cfg.node_types[1].max_workers = 1;
  plan = plan_scaling(cfg, v);
  BOOST_TEST(plan.stop.size() == 3u);
  BOOST_TEST(stopped(plan, "run2"));
  BOOST_TEST(!stopped(plan, "run1"));
}

BOOST_AUTO_TEST_CASE(
    a_queued_node_without_demand_is_cancelled_a_launched_one_kept) {
  auto cfg = config();
  auto v = view_with({});
  v.nodes.push_back(pending("q", "small", instance_state::queued, cfg));
  v.nodes.push_back(pending("r", "small", instance_state::requested, cfg));
  auto plan = plan_scaling(cfg, v);
  // The launched one may be where a task just went before it was listed:
  // it goes once idle, like any node.
  BOOST_TEST(stopped(plan, "q"));
  BOOST_TEST(!stopped(plan, "r"));
  // Kept for the minimum instead.
  cfg.node_types[0].min_workers = 2;
  plan = plan_scaling(cfg, v);
  BOOST_TEST(plan.stop.empty());
  BOOST_TEST(plan.launch.empty());
}

BOOST_AUTO_TEST_CASE(demand_fills_the_most_advanced_pending_node_first) {
  auto cfg = config();
  auto v = view_with(copies({{"CPU", 2}}, 1));
  v.nodes.push_back(pending("q", "small", instance_state::queued, cfg));
  v.nodes.push_back(pending("a", "small", instance_state::allocated, cfg));
  auto plan = plan_scaling(cfg, v);
  // One node's worth of demand: the listed one serves it, the one not yet
  // launched goes.
  BOOST_TEST(stopped(plan, "q"));
  BOOST_TEST(!stopped(plan, "a"));
  BOOST_TEST(plan.launch.empty());
}

BOOST_AUTO_TEST_CASE(nodes_nobody_manages_serve_demand_and_are_never_stopped) {
  auto v = view_with(copies({{"CPU", 1}}, 2));
  capacity_node head;
  head.free = {{"CPU", 2}};
  head.idle = true;
  head.idle_since = t0 - 1h;
  v.nodes.push_back(head);
  auto plan = plan_scaling(config(), v);
  BOOST_TEST(plan.launch.empty());
  BOOST_TEST(plan.stop.empty());
}

BOOST_AUTO_TEST_CASE(instances_of_an_unknown_type_are_stopped) {
  auto cfg = config();
  auto v = view_with({});
  v.nodes.push_back(running("x", "retired-type", {{"CPU", 4}}));
  auto plan = plan_scaling(cfg, v);
  BOOST_TEST(stopped(plan, "x"));
}

BOOST_AUTO_TEST_CASE(pick_node_type_prefers_full_use_then_fewer_nodes) {
  auto cfg = config();
  std::set<std::string> all{"small", "large", "gpu"};
  BOOST_TEST(*pick_node_type(cfg, {{"CPU", 2}}, 1, all) == "small");
  BOOST_TEST(*pick_node_type(cfg, {{"CPU", 2}}, 100, all) == "large");
  BOOST_TEST(*pick_node_type(cfg, {{"CPU", 1}, {"GPU", 1}}, 1, all) == "gpu");
  BOOST_TEST(!pick_node_type(cfg, {{"CPU", 1}, {"GPU", 1}}, 1, {"small"}));
  BOOST_TEST(fits_some_type(cfg, {{"GPU", 1}}));
  BOOST_TEST(!fits_some_type(cfg, {{"TPU", 1}}));
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace autoscaler_policy_test
