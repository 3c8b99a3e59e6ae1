// The actor state machine's table: which changes are allowed, that nothing
// leaves `dead`, that every state is reachable and can end, and that
// `transition` refuses and counts an impossible change on the actor's
// counter alone.

#include <boost/test/unit_test.hpp>

#include "state_table_checks.hpp"

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "prism/internal/actor_state.hpp"
#include "prism/internal/node_state.hpp"
#include "prism/internal/task_state.hpp"

namespace actor_state_test {

using prism::internal::actor_state;

namespace {

const std::vector<actor_state> all_states{
    actor_state::pending,
    actor_state::alive,
    actor_state::restarting,
    actor_state::dead,
};

/// The edges, written out here again so that a change to the table has to
/// be made twice.
const std::set<std::pair<actor_state, actor_state>> expected_edges{
    {actor_state::pending, actor_state::alive},
    {actor_state::pending, actor_state::restarting},
    {actor_state::pending, actor_state::dead},
    {actor_state::alive, actor_state::restarting},
    {actor_state::alive, actor_state::dead},
    {actor_state::restarting, actor_state::alive},
    {actor_state::restarting, actor_state::restarting},
    {actor_state::restarting, actor_state::dead},
};

// The table is constexpr: what it allows is known at compile time.
static_assert(prism::internal::allowed(actor_state::restarting,
                                       actor_state::alive));
static_assert(!prism::internal::allowed(actor_state::dead, actor_state::alive));

std::set<actor_state> reachable_from(actor_state start) {
  return state_table_checks::reachable_from(start, all_states);
}

} // namespace

BOOST_AUTO_TEST_SUITE(actor_state_machine)

BOOST_AUTO_TEST_CASE(the_table_allows_exactly_the_expected_changes) {
  BOOST_TEST(all_states.size() == prism::internal::num_actor_states);
  for (auto from : all_states)
    for (auto to : all_states) {
      BOOST_TEST_CONTEXT(to_string(from) << " -> " << to_string(to)) {
        BOOST_TEST(prism::internal::allowed(from, to) ==
                   (expected_edges.count({from, to}) > 0));
      }
    }
}

BOOST_AUTO_TEST_CASE(nothing_leaves_dead) {
  for (auto to : all_states)
    BOOST_TEST(!prism::internal::allowed(actor_state::dead, to));
}

BOOST_AUTO_TEST_CASE(every_state_is_reachable_and_every_state_can_end) {
  auto reached = reachable_from(actor_state::pending);
  BOOST_TEST(reached.size() == all_states.size());
  for (auto s : all_states)
    BOOST_TEST(reachable_from(s).count(actor_state::dead) == 1u, to_string(s));
}

BOOST_AUTO_TEST_CASE(a_legal_change_moves_the_state_and_counts_nothing) {
  auto before = prism::internal::illegal_actor_transitions();
  auto s = actor_state::pending;
  BOOST_TEST(prism::internal::transition(s, actor_state::alive));
  BOOST_TEST(prism::internal::transition(s, actor_state::restarting));
  BOOST_TEST(prism::internal::transition(s, actor_state::restarting));
  BOOST_TEST(prism::internal::transition(s, actor_state::alive));
  BOOST_TEST(prism::internal::transition(s, actor_state::dead));
  BOOST_TEST((s == actor_state::dead));
  BOOST_TEST(prism::internal::illegal_actor_transitions() == before);
}

BOOST_AUTO_TEST_CASE(an_impossible_change_is_refused_and_counted) {
  auto before = prism::internal::illegal_actor_transitions();
  auto nodes_before = prism::internal::illegal_node_transitions();
  auto tasks_before = prism::internal::illegal_task_transitions();
  // A late start reported for an actor that was killed meanwhile.
  auto s = actor_state::dead;
  BOOST_TEST(!prism::internal::transition(s, actor_state::alive));
  BOOST_TEST((s == actor_state::dead));
  // An alive actor is never pending again, nor alive again as a change.
  auto t = actor_state::alive;
  BOOST_TEST(!prism::internal::transition(t, actor_state::pending));
  BOOST_TEST(!prism::internal::transition(t, actor_state::alive));
  BOOST_TEST((t == actor_state::alive));
  BOOST_TEST(prism::internal::illegal_actor_transitions() == before + 3);
  // Each machine counts its own refusals.
  BOOST_TEST(prism::internal::illegal_node_transitions() == nodes_before);
  BOOST_TEST(prism::internal::illegal_task_transitions() == tasks_before);
}

BOOST_AUTO_TEST_CASE(each_state_has_its_own_name) {
  std::set<std::string> names;
  for (auto s : all_states)
    names.insert(to_string(s));
  BOOST_TEST(names.size() == all_states.size());
  BOOST_TEST(to_string(actor_state::restarting) == std::string{"restarting"});
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace actor_state_test
