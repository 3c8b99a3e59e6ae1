// The node state machine's table: which changes are allowed, that nothing
// leaves `dead` (a fenced node stays fenced) and nothing enters `awaited`,
// and that `transition` refuses and counts an impossible change.

#include <boost/test/unit_test.hpp>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "prism/internal/actor_state.hpp"
#include "prism/internal/node_state.hpp"

namespace node_state_test {

using prism::internal::node_state;

namespace {

const std::vector<node_state> all_states{
    node_state::alive,
    node_state::awaited,
    node_state::dead,
};

/// The edges, written out here again so that a change to the table has to
/// be made twice.
const std::set<std::pair<node_state, node_state>> expected_edges{
    {node_state::alive, node_state::dead},
    {node_state::awaited, node_state::alive},
    {node_state::awaited, node_state::dead},
};

} // namespace

BOOST_AUTO_TEST_SUITE(node_state_machine)

BOOST_AUTO_TEST_CASE(the_table_allows_exactly_the_expected_changes) {
  BOOST_TEST(all_states.size() == prism::internal::num_node_states);
  for (auto from : all_states)
    for (auto to : all_states) {
      BOOST_TEST_CONTEXT(to_string(from) << " -> " << to_string(to)) {
        BOOST_TEST(prism::internal::allowed(from, to) ==
                   (expected_edges.count({from, to}) > 0));
      }
    }
}

BOOST_AUTO_TEST_CASE(nothing_leaves_dead_and_nothing_enters_awaited) {
  for (auto s : all_states) {
    BOOST_TEST(!prism::internal::allowed(node_state::dead, s), to_string(s));
    BOOST_TEST(!prism::internal::allowed(s, node_state::awaited), to_string(s));
  }
  BOOST_TEST(prism::internal::is_final(node_state::dead));
}

BOOST_AUTO_TEST_CASE(a_legal_change_moves_the_state_and_counts_nothing) {
  auto before = prism::internal::illegal_node_transitions();
  // Recovered after a restart of the control store, registered again, then
  // its raylet went down.
  auto s = node_state::awaited;
  BOOST_TEST(prism::internal::transition(s, node_state::alive));
  BOOST_TEST(prism::internal::transition(s, node_state::dead));
  BOOST_TEST((s == node_state::dead));
  // Recovered, and not back before the grace period ended.
  auto t = node_state::awaited;
  BOOST_TEST(prism::internal::transition(t, node_state::dead));
  BOOST_TEST((t == node_state::dead));
  BOOST_TEST(prism::internal::illegal_node_transitions() == before);
}

BOOST_AUTO_TEST_CASE(an_impossible_change_is_refused_and_counted) {
  auto before = prism::internal::illegal_node_transitions();
  auto actors_before = prism::internal::illegal_actor_transitions();
  // A node declared dead is fenced: it never comes back as itself.
  auto s = node_state::dead;
  BOOST_TEST(!prism::internal::transition(s, node_state::alive));
  BOOST_TEST((s == node_state::dead));
  auto t = node_state::alive;
  BOOST_TEST(!prism::internal::transition(t, node_state::awaited));
  BOOST_TEST((t == node_state::alive));
  BOOST_TEST(prism::internal::illegal_node_transitions() == before + 2);
  BOOST_TEST(prism::internal::illegal_actor_transitions() == actors_before);
}

BOOST_AUTO_TEST_CASE(each_state_has_its_own_name) {
  std::set<std::string> names;
  for (auto s : all_states)
    names.insert(to_string(s));
  BOOST_TEST(names.size() == all_states.size());
  BOOST_TEST(to_string(node_state::awaited) == std::string{"awaited"});
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace node_state_test
