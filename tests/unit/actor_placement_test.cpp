// Where the control store hosts an actor: the live node with room for it that
// hosts the fewest actors, or a wait when none has room.

#include <boost/test/unit_test.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "prism/internal/actor_placement.hpp"

namespace actor_placement_test {

namespace {

using namespace prism;
using namespace prism::internal;

node_id node(std::uint64_t n) {
  node_id id;
  id.lo = n;
  return id;
}

resource_set cpus(double n) {
  return resource_set{resource_map{{"CPU", n}}};
}

placement_candidate live(std::uint64_t n, double free_cpus,
                         std::size_t num_actors = 0) {
  return placement_candidate{node(n), true, cpus(free_cpus), num_actors};
}

placement placed_on(std::uint64_t n) {
  return placement{placement_verdict::place, node(n)};
}

const placement waits{placement_verdict::wait, node_id{}};

} // namespace

BOOST_AUTO_TEST_SUITE(actor_placement)

BOOST_AUTO_TEST_CASE(an_actor_waits_when_no_node_is_known) {
  BOOST_TEST((place_actor({}, cpus(1)) == waits));
}

BOOST_AUTO_TEST_CASE(an_actor_waits_when_no_node_has_room_for_it) {
  BOOST_TEST((place_actor({live(1, 1), live(2, 0.5)}, cpus(2)) == waits));
}

BOOST_AUTO_TEST_CASE(a_dead_node_hosts_nothing_whatever_its_room) {
  placement_candidate dead{node(1), false, cpus(8), 0};
  BOOST_TEST((place_actor({dead}, cpus(1)) == waits));
  BOOST_TEST((place_actor({dead, live(2, 1, 5)}, cpus(1)) == placed_on(2)));
}

BOOST_AUTO_TEST_CASE(a_node_without_room_is_passed_over_however_idle) {
  BOOST_TEST(
      (place_actor({live(1, 0.5, 0), live(2, 4, 7)}, cpus(1)) == placed_on(2)));
}

BOOST_AUTO_TEST_CASE(an_actor_goes_to_the_node_hosting_the_fewest_actors) {
  BOOST_TEST((place_actor({live(1, 4, 3), live(2, 4, 1), live(3, 4, 2)},
                          cpus(1)) == placed_on(2)));
}

BOOST_AUTO_TEST_CASE(among_equally_busy_nodes_the_first_listed_wins) {
  BOOST_TEST((place_actor({live(3, 4, 1), live(1, 4, 1), live(2, 4, 1)},
                          cpus(1)) == placed_on(3)));
}

BOOST_AUTO_TEST_CASE(a_request_that_exactly_fills_a_node_fits) {
  BOOST_TEST((place_actor({live(1, 2)}, cpus(2)) == placed_on(1)));
}

BOOST_AUTO_TEST_CASE(an_empty_request_fits_any_live_node) {
  BOOST_TEST((place_actor({live(1, 0, 2), live(2, 0, 1)}, resource_set{}) ==
              placed_on(2)));
}

BOOST_AUTO_TEST_CASE(every_resource_of_the_request_must_fit) {
  resource_set request{resource_map{{"CPU", 1}, {"GPU", 1}}};
  placement_candidate with_gpu{
      node(2), true, resource_set{resource_map{{"CPU", 1}, {"GPU", 1}}}, 9};
  BOOST_TEST((place_actor({live(1, 8), with_gpu}, request) == placed_on(2)));
}

BOOST_AUTO_TEST_CASE(verdicts_have_stable_names) {
  BOOST_TEST(std::string{to_string(placement_verdict::place)} == "place");
  BOOST_TEST(std::string{to_string(placement_verdict::wait)} == "wait");
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace actor_placement_test
