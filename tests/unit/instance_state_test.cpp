// The autoscaler instance's state machine: its table, that every state is
// reachable and can end, that an impossible change is refused, counted and
// kept out of the history, and that the history keeps its first entry; and
// an instance's bytes in the control store, whole or refused.

#include <boost/test/unit_test.hpp>

#include <set>
#include <utility>
#include <vector>

#include "prism/internal/instance_codec.hpp"
#include "prism/internal/instance_state.hpp"

namespace instance_state_test {

using namespace std::chrono_literals;
using prism::internal::instance_state;
using namespace prism::internal;

namespace {

const std::vector<instance_state> all_states{
    instance_state::queued,
    instance_state::requested,
    instance_state::allocated,
    instance_state::running,
    instance_state::stopping,
    instance_state::terminated,
    instance_state::allocation_failed,
    instance_state::termination_failed,
};

/// The edges, written out again so that a change to the table is made twice.
const std::set<std::pair<instance_state, instance_state>> expected_edges{
    {instance_state::queued, instance_state::requested},
    {instance_state::queued, instance_state::terminated},
    {instance_state::requested, instance_state::allocated},
    {instance_state::requested, instance_state::allocation_failed},
    {instance_state::requested, instance_state::stopping},
    {instance_state::allocated, instance_state::running},
    {instance_state::allocated, instance_state::stopping},
    {instance_state::allocated, instance_state::terminated},
    {instance_state::running, instance_state::stopping},
    {instance_state::running, instance_state::terminated},
    {instance_state::stopping, instance_state::terminated},
    {instance_state::stopping, instance_state::termination_failed},
    {instance_state::termination_failed, instance_state::stopping},
    {instance_state::termination_failed, instance_state::terminated},
    {instance_state::allocation_failed, instance_state::terminated},
};

const autoscaler_time t0{std::chrono::milliseconds{1'800'000'000'000}};

} // namespace

BOOST_AUTO_TEST_SUITE(instance_state_machine)

BOOST_AUTO_TEST_CASE(the_table_holds_exactly_the_expected_changes) {
  BOOST_TEST(all_states.size() == num_instance_states);
  for (auto from : all_states)
    for (auto to : all_states)
      BOOST_TEST(allowed(from, to) == expected_edges.contains({from, to}),
                 to_string(from) << " -> " << to_string(to));
}

BOOST_AUTO_TEST_CASE(
    every_state_is_reachable_from_queued_and_reaches_terminated) {
  std::set<instance_state> reached{instance_state::queued};
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& t : instance_transitions)
      if (reached.contains(t.from) && reached.insert(t.to).second)
        grew = true;
  }
  BOOST_TEST(reached.size() == num_instance_states);
  for (auto s : all_states) {
    std::set<instance_state> seen{s};
    for (bool grew = true; grew;) {
      grew = false;
      for (const auto& t : instance_transitions)
        if (seen.contains(t.from) && seen.insert(t.to).second)
          grew = true;
    }
    BOOST_TEST(seen.contains(instance_state::terminated), to_string(s));
  }
  for (auto to : all_states)
    BOOST_TEST(!allowed(instance_state::terminated, to));
}

BOOST_AUTO_TEST_CASE(an_impossible_change_is_refused_counted_and_not_recorded) {
  auto x = new_instance("inst-1", "cpu8", instance_state::queued, t0, "wanted");
  auto before = illegal_instance_transitions();
  BOOST_TEST(!change_state(x, instance_state::running, t0 + 1s, "skipping"));
  BOOST_TEST(illegal_instance_transitions() == before + 1);
  BOOST_TEST((x.state == instance_state::queued));
  BOOST_TEST(x.history.size() == 1u);
  BOOST_TEST(change_state(x, instance_state::requested, t0 + 2s, "sent"));
  BOOST_TEST((x.since == t0 + 2s));
  BOOST_TEST(x.history.size() == 2u);
  BOOST_TEST(x.history.back().why == "sent");
  BOOST_TEST(illegal_instance_transitions() == before + 1);
}

BOOST_AUTO_TEST_CASE(a_long_history_keeps_its_first_and_latest_changes) {
  auto x = new_instance("inst-2", "cpu8", instance_state::queued, t0, "wanted");
  BOOST_TEST(change_state(x, instance_state::requested, t0, "sent"));
  BOOST_TEST(change_state(x, instance_state::allocated, t0, "listed"));
  BOOST_TEST(change_state(x, instance_state::stopping, t0, "not needed"));
  for (int k = 0; k < 100; ++k) {
    BOOST_TEST(
        change_state(x, instance_state::termination_failed, t0, "failed"));
    BOOST_TEST(change_state(x, instance_state::stopping, t0, "retried"));
  }
  BOOST_TEST(x.history.size() == max_instance_history);
  BOOST_TEST(x.history.front().why == "wanted");
  BOOST_TEST(x.history.back().why == "retried");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(instance_codec)

BOOST_AUTO_TEST_CASE(an_instance_survives_its_bytes_whole) {
  auto x = new_instance("inst-3", "cpu8", instance_state::queued, t0, "wanted");
  x.request_id = "req-1";
  x.request_count = 2;
  BOOST_TEST(change_state(x, instance_state::requested, t0 + 1s, "sent"));
  BOOST_TEST(change_state(x, instance_state::allocated, t0 + 2s, "listed"));
  x.cloud_id = "i-0abc";
  x.address = "10.0.0.7";
  x.launch_attempts = 2;
  x.call_due = true;
  x.called_at = t0 + 1s;
  x.seen_at = t0 + 2s;
  x.missed_listings = 1;
  x.found = true;
  auto y = decode_instance(encode_instance(x));
  BOOST_REQUIRE(y.has_value());
  BOOST_TEST(y->id == x.id);
  BOOST_TEST((y->state == instance_state::allocated));
  BOOST_TEST((y->since == t0 + 2s));
  BOOST_TEST(y->request_id == "req-1");
  BOOST_TEST(y->request_count == 2);
  BOOST_TEST(y->cloud_id == "i-0abc");
  BOOST_TEST(y->address == "10.0.0.7");
  BOOST_TEST(y->launch_attempts == 2);
  BOOST_TEST(y->call_due);
  BOOST_TEST((y->called_at == t0 + 1s));
  BOOST_TEST((y->seen_at == t0 + 2s));
  BOOST_TEST(y->missed_listings == 1);
  BOOST_TEST(y->found);
  BOOST_TEST(y->history.size() == 3u);
  BOOST_TEST(y->history[2].why == "listed");
  BOOST_TEST((y->history[2].from == instance_state::requested));
}

// Records of earlier versions name the flag "adopted".
BOOST_AUTO_TEST_CASE(an_earlier_record_reads_its_found_flag) {
  auto x = new_instance("inst-5", "cpu8", instance_state::queued, t0, "wanted");
  x.found = true;
  auto text = encode_instance(x);
  auto at = text.find("\"found\":true");
  BOOST_REQUIRE(at != std::string::npos);
  text.replace(at, 7, "\"adopted\"");
  auto y = decode_instance(text);
  BOOST_REQUIRE(y.has_value());
  BOOST_TEST(y->found);
}

BOOST_AUTO_TEST_CASE(damaged_bytes_are_refused_not_guessed) {
  auto good = encode_instance(
      new_instance("inst-4", "cpu8", instance_state::queued, t0, "wanted"));
  BOOST_TEST(!decode_instance("").has_value());
  BOOST_TEST(!decode_instance(good.substr(0, good.size() / 2)).has_value());
  BOOST_TEST(!decode_instance("{\"id\": 3}").has_value());
  auto unknown = good;
  unknown.replace(unknown.find("\"queued\""), 8, "\"flying\"");
  BOOST_TEST(!decode_instance(unknown).has_value());
  BOOST_TEST(decode_instance(good).has_value());
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace instance_state_test
