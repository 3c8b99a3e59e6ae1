// The task state machine's table: which changes are allowed, that nothing
// leaves a final state, that every state is reachable and can end, that
// every edge says when it happens (at compile time), and that `transition`
// refuses and counts an impossible change.

#include <boost/test/unit_test.hpp>

#include "state_table_checks.hpp"

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "prism/internal/task_state.hpp"

namespace task_state_test {

using prism::internal::task_state;

namespace {

const std::vector<task_state> all_states{
    task_state::waiting_args, task_state::queued,   task_state::running,
    task_state::forwarded,    task_state::finished, task_state::failed,
    task_state::cancelled,
};

/// The edges, written out here again so that a change to the table has to
/// be made twice.
const std::set<std::pair<task_state, task_state>> expected_edges{
    {task_state::waiting_args, task_state::queued},
    {task_state::waiting_args, task_state::forwarded},
    {task_state::waiting_args, task_state::failed},
    {task_state::queued, task_state::running},
    {task_state::queued, task_state::failed},
    {task_state::running, task_state::finished},
    {task_state::running, task_state::failed},
    {task_state::running, task_state::queued},
    {task_state::waiting_args, task_state::cancelled},
    {task_state::queued, task_state::cancelled},
    {task_state::running, task_state::cancelled},
};

/// Whether every edge of the table says when it happens.
constexpr bool every_edge_says_when() {
  for (const auto& t : prism::internal::task_transitions)
    if (t.when == nullptr || t.when[0] == '\0')
      return false;
  return true;
}

// The table is constexpr: an edge without its "when" fails the build.
static_assert(every_edge_says_when(),
              "an edge of task_transitions does not say when it happens");

std::set<task_state> reachable_from(task_state start) {
  return state_table_checks::reachable_from(start, all_states);
}

} // namespace

BOOST_AUTO_TEST_SUITE(task_state_machine)

BOOST_AUTO_TEST_CASE(the_table_allows_exactly_the_expected_changes) {
  BOOST_TEST(all_states.size() == prism::internal::num_task_states);
  for (auto from : all_states)
    for (auto to : all_states) {
      BOOST_TEST_CONTEXT(to_string(from) << " -> " << to_string(to)) {
        BOOST_TEST(prism::internal::allowed(from, to) ==
                   (expected_edges.count({from, to}) > 0));
      }
    }
}

BOOST_AUTO_TEST_CASE(nothing_leaves_a_final_state) {
  for (auto from : all_states)
    if (prism::internal::is_final(from))
      for (auto to : all_states)
        BOOST_TEST(!prism::internal::allowed(from, to));
}

BOOST_AUTO_TEST_CASE(every_state_is_reachable_and_every_state_can_end) {
  auto reached = reachable_from(task_state::waiting_args);
  BOOST_TEST(reached.size() == all_states.size());
  for (auto s : all_states) {
    BOOST_TEST_CONTEXT(to_string(s)) {
      bool can_end = false;
      for (auto r : reachable_from(s))
        can_end = can_end || prism::internal::is_final(r);
      BOOST_TEST(can_end);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_legal_change_moves_the_state_and_counts_nothing) {
  auto before = prism::internal::illegal_task_transitions();
  auto s = task_state::waiting_args;
  BOOST_TEST(prism::internal::transition(s, task_state::queued));
  BOOST_TEST(prism::internal::transition(s, task_state::running));
  BOOST_TEST(prism::internal::transition(s, task_state::queued));
  BOOST_TEST(prism::internal::transition(s, task_state::running));
  BOOST_TEST(prism::internal::transition(s, task_state::finished));
  BOOST_TEST((s == task_state::finished));
  BOOST_TEST(prism::internal::illegal_task_transitions() == before);
}

BOOST_AUTO_TEST_CASE(an_impossible_change_is_refused_and_counted) {
  auto before = prism::internal::illegal_task_transitions();
  auto s = task_state::failed;
  // A late "finished" for a task that already failed.
  BOOST_TEST(!prism::internal::transition(s, task_state::finished));
  BOOST_TEST((s == task_state::failed));
  auto t = task_state::waiting_args;
  BOOST_TEST(!prism::internal::transition(t, task_state::running));
  BOOST_TEST((t == task_state::waiting_args));
  BOOST_TEST(prism::internal::illegal_task_transitions() == before + 2);
}

BOOST_AUTO_TEST_CASE(each_state_has_its_own_name) {
  std::set<std::string> names;
  for (auto s : all_states)
    names.insert(to_string(s));
  BOOST_TEST(names.size() == all_states.size());
  BOOST_TEST(to_string(task_state::waiting_args) ==
             std::string{"waiting_args"});
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace task_state_test
