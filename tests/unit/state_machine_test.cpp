// The state machine template every table uses: what it checks at compile
// time, that it applies only what its table allows, and that each table
// counts its own refusals.

#include <boost/test/unit_test.hpp>

#include <array>
#include <cstdint>

#include "prism/internal/state_machine.hpp"

namespace state_machine_test {

using prism::internal::state_machine;
using prism::internal::state_transition;

namespace {

enum class door : std::uint8_t { open, closed, locked };

constexpr std::array<state_transition<door>, 4> door_transitions{{
    {door::open, door::closed, "it was shut"},
    {door::closed, door::open, "it was opened"},
    {door::closed, door::locked, "it was locked"},
    {door::locked, door::closed, "it was unlocked"},
}};

/// Another table over the same states: another machine, another counter.
constexpr std::array<state_transition<door>, 1> trapdoor_transitions{{
    {door::closed, door::open, "something stepped on it"},
}};

using door_machine = state_machine<door_transitions>;
using trapdoor_machine = state_machine<trapdoor_transitions>;

// What the template refuses to build: an edge that does not say when it
// happens, and an edge listed twice.
constexpr std::array<state_transition<door>, 1> silent_edge{{
    {door::open, door::closed, ""},
}};
constexpr std::array<state_transition<door>, 2> twice{{
    {door::open, door::closed, "it was shut"},
    {door::open, door::closed, "it was slammed"},
}};
static_assert(prism::internal::every_edge_says_when(door_transitions));
static_assert(!prism::internal::every_edge_says_when(silent_edge));
static_assert(prism::internal::no_edge_twice(door_transitions));
static_assert(!prism::internal::no_edge_twice(twice));

// `allowed` is constexpr, and a state is no change to itself unless listed.
static_assert(door_machine::allowed(door::closed, door::locked));
static_assert(!door_machine::allowed(door::open, door::locked));
static_assert(!door_machine::allowed(door::open, door::open));

} // namespace

BOOST_AUTO_TEST_SUITE(state_machine_template)

BOOST_AUTO_TEST_CASE(a_legal_change_is_applied_and_counts_nothing) {
  auto before = door_machine::illegal_transitions();
  auto d = door::open;
  BOOST_TEST(door_machine::transition(d, door::closed));
  BOOST_TEST(door_machine::transition(d, door::locked));
  BOOST_TEST((d == door::locked));
  BOOST_TEST(door_machine::illegal_transitions() == before);
}

BOOST_AUTO_TEST_CASE(an_illegal_change_is_refused_left_unchanged_and_counted) {
  auto before = door_machine::illegal_transitions();
  auto d = door::locked;
  BOOST_TEST(!door_machine::transition(d, door::open));
  BOOST_TEST((d == door::locked));
  BOOST_TEST(!door_machine::transition(d, door::locked));
  BOOST_TEST((d == door::locked));
  BOOST_TEST(door_machine::illegal_transitions() == before + 2);
}

BOOST_AUTO_TEST_CASE(each_table_counts_its_own_refusals) {
  auto doors = door_machine::illegal_transitions();
  auto trapdoors = trapdoor_machine::illegal_transitions();
  auto d = door::open;
  BOOST_TEST(!trapdoor_machine::transition(d, door::closed));
  BOOST_TEST((d == door::open));
  BOOST_TEST(trapdoor_machine::illegal_transitions() == trapdoors + 1);
  BOOST_TEST(door_machine::illegal_transitions() == doors);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace state_machine_test
