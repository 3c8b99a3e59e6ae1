// Where a raylet places a lease request: node affinity (soft and hard, to
// this node, another node, a dead node and an unknown one), spillback to a
// node that fits, round robin among several, and the request no node fits.

#include <boost/test/unit_test.hpp>

#include <set>
#include <string>
#include <vector>

#include "prism/internal/task_placement.hpp"

namespace task_placement_test {

namespace {

using namespace prism;
using namespace prism::internal;

node_id make_node() {
  return node_id{unique_id::random()};
}

resource_set cpus(double n) {
  return resource_set{resource_map{{"CPU", n}}};
}

resource_set gpus(double n) {
  return resource_set{resource_map{{"CPU", 1}, {"GPU", n}}};
}

placement_request needs(resource_set resources, node_id pin = {},
                        bool soft = false) {
  return placement_request{std::move(resources), pin, soft};
}

/// This node has 4 CPUs; `other` has a GPU, `dead` had one, `small` has a
/// single CPU.
struct cluster {
  cluster_node here{make_node(), cpus(4), true};
  cluster_node other{make_node(), gpus(1), true};
  cluster_node dead{make_node(), gpus(1), false};
  cluster_node small{make_node(), cpus(1), true};
  std::vector<cluster_node> nodes{here, other, dead, small};
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(node_affinity, cluster)

BOOST_AUTO_TEST_CASE(a_request_without_a_pin_is_placed_here) {
  auto v = apply_affinity(needs(cpus(1)), here, nodes);
  BOOST_TEST((v.action == affinity_action::here));
}

BOOST_AUTO_TEST_CASE(a_pin_to_this_node_that_fits_is_placed_here) {
  for (bool soft : {false, true}) {
    auto v = apply_affinity(needs(cpus(4), here.id, soft), here, nodes);
    BOOST_TEST((v.action == affinity_action::here));
  }
}

BOOST_AUTO_TEST_CASE(a_hard_pin_to_this_node_that_never_fits_is_refused) {
  auto v = apply_affinity(needs(cpus(8), here.id), here, nodes);
  BOOST_TEST((v.action == affinity_action::refuse));
  BOOST_TEST(v.why == "node " + here.id.hex() +
                          " can never fit {CPU:8}; it has {CPU:4}");
}

BOOST_AUTO_TEST_CASE(a_soft_pin_to_this_node_that_never_fits_is_dropped) {
  auto v = apply_affinity(needs(cpus(8), here.id, true), here, nodes);
  BOOST_TEST((v.action == affinity_action::unpin));
}

BOOST_AUTO_TEST_CASE(a_pin_to_another_node_that_fits_is_sent_there) {
  for (bool soft : {false, true}) {
    auto v = apply_affinity(needs(gpus(1), other.id, soft), here, nodes);
    BOOST_TEST((v.action == affinity_action::send));
    BOOST_TEST((nodes[v.node].id == other.id));
  }
}

BOOST_AUTO_TEST_CASE(a_hard_pin_to_another_node_that_never_fits_is_refused) {
  auto v = apply_affinity(needs(cpus(2), small.id), here, nodes);
  BOOST_TEST((v.action == affinity_action::refuse));
  BOOST_TEST(v.why == "node " + small.id.hex() +
                          " can never fit {CPU:2}; it has {CPU:1}");
}

BOOST_AUTO_TEST_CASE(a_soft_pin_to_another_node_that_never_fits_is_dropped) {
  auto v = apply_affinity(needs(cpus(2), small.id, true), here, nodes);
  BOOST_TEST((v.action == affinity_action::unpin));
}

BOOST_AUTO_TEST_CASE(a_hard_pin_to_a_dead_node_is_refused) {
  auto v = apply_affinity(needs(gpus(1), dead.id), here, nodes);
  BOOST_TEST((v.action == affinity_action::refuse));
  BOOST_TEST(v.why ==
             "node " + dead.id.hex() + ", which the task must run on, is dead");
}

BOOST_AUTO_TEST_CASE(a_soft_pin_to_a_dead_node_is_dropped) {
  auto v = apply_affinity(needs(gpus(1), dead.id, true), here, nodes);
  BOOST_TEST((v.action == affinity_action::unpin));
}

BOOST_AUTO_TEST_CASE(a_hard_pin_to_an_unknown_node_waits) {
  auto v = apply_affinity(needs(cpus(1), make_node()), here, nodes);
  BOOST_TEST((v.action == affinity_action::wait));
}

BOOST_AUTO_TEST_CASE(a_soft_pin_to_an_unknown_node_is_dropped) {
  auto v = apply_affinity(needs(cpus(1), make_node(), true), here, nodes);
  BOOST_TEST((v.action == affinity_action::unpin));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_FIXTURE_TEST_SUITE(spillback, cluster)

BOOST_AUTO_TEST_CASE(spills_to_the_live_node_that_fits) {
  for (std::size_t turn = 0; turn < 3; ++turn) {
    auto target = spill_target(nodes, here.id, gpus(1), turn);
    BOOST_TEST_REQUIRE(target.has_value());
    BOOST_TEST((nodes[*target].id == other.id));
  }
}

BOOST_AUTO_TEST_CASE(never_spills_to_the_deciding_node) {
  BOOST_TEST(!spill_target(nodes, here.id, cpus(4), 0).has_value());
}

BOOST_AUTO_TEST_CASE(takes_the_nodes_that_fit_in_turn) {
  auto second = cluster_node{make_node(), gpus(2), true};
  nodes.push_back(second);
  std::vector<node_id> picked;
  for (std::size_t turn = 0; turn < 4; ++turn)
    picked.push_back(nodes[*spill_target(nodes, here.id, gpus(1), turn)].id);
  BOOST_TEST((picked ==
              std::vector<node_id>{other.id, second.id, other.id, second.id}));
}

BOOST_AUTO_TEST_CASE(no_node_fits) {
  BOOST_TEST(!spill_target(nodes, here.id, gpus(4), 0).has_value());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_FIXTURE_TEST_SUITE(lease_scheduling, cluster)

BOOST_AUTO_TEST_CASE(a_request_that_fits_now_is_granted) {
  auto v = schedule(needs(cpus(2)), here, cpus(2), nodes, 0);
  BOOST_TEST((v.action == lease_action::grant));
}

BOOST_AUTO_TEST_CASE(a_request_that_fits_later_waits_for_room) {
  auto v = schedule(needs(cpus(2)), here, cpus(1), nodes, 0);
  BOOST_TEST((v.action == lease_action::no_room));
}

BOOST_AUTO_TEST_CASE(a_request_this_node_never_fits_spills_to_one_that_does) {
  auto v = schedule(needs(gpus(1)), here, cpus(4), nodes, 0);
  BOOST_TEST((v.action == lease_action::spill));
  BOOST_TEST((nodes[v.node].id == other.id));
}

BOOST_AUTO_TEST_CASE(a_request_no_node_fits_is_infeasible) {
  auto v = schedule(needs(cpus(8)), here, cpus(4), nodes, 0);
  BOOST_TEST((v.action == lease_action::infeasible));
}

BOOST_AUTO_TEST_CASE(a_request_pinned_here_waits_for_room_here) {
  auto v = schedule(needs(cpus(2), here.id), here, cpus(1), nodes, 0);
  BOOST_TEST((v.action == lease_action::no_room));
  v = schedule(needs(cpus(2), here.id), here, cpus(2), nodes, 0);
  BOOST_TEST((v.action == lease_action::grant));
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace task_placement_test
