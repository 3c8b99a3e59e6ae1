// Task events without an actor (internal/task_events.hpp): an owner's
// bounded buffer counts what it drops, and the table merges each task's
// events into its record and attempts, whatever their order, within its
// bound.

#include <algorithm>
#include <deque>
#include <map>
#include <random>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "prism/internal/task_events.hpp"

namespace task_events_test {

using namespace prism;
using internal::task_event;
using internal::task_state;
using internal::task_table;

task_id some_task(std::uint64_t seq) {
  return task_id{worker_id{unique_id{0x1234, 0x5678}}, seq};
}

/// An event of task `seq` in state `s` at `us`: its submission, start or
/// end by the state.
task_event event(std::uint64_t seq, std::int32_t attempt, task_state s,
                 std::int64_t us) {
  task_event e;
  e.task = some_task(seq);
  e.attempt = attempt;
  e.state = s;
  if (s == task_state::running)
    e.start_us = us;
  else if (s == task_state::finished || s == task_state::failed)
    e.end_us = us;
  else
    e.submit_us = us;
  return e;
}

BOOST_AUTO_TEST_SUITE(task_events)

BOOST_AUTO_TEST_CASE(a_full_buffer_drops_and_counts_until_taken) {
  internal::task_event_buffer b{2};
  BOOST_TEST(b.add(event(1, 0, task_state::queued, 1)));
  BOOST_TEST(b.add(event(1, 0, task_state::running, 2)));
  BOOST_TEST(!b.add(event(1, 0, task_state::finished, 3)));
  BOOST_TEST(!b.add(event(2, 0, task_state::queued, 4)));
  auto [events, dropped] = b.take();
  BOOST_TEST(events.size() == 2u);
  BOOST_TEST(dropped == 2u);
  BOOST_TEST(b.add(event(3, 0, task_state::queued, 5)));
  BOOST_TEST(b.take().second == 0u);
}

BOOST_AUTO_TEST_CASE(a_tasks_events_make_one_record_with_its_times) {
  task_table t{10};
  auto first = event(1, 0, task_state::queued, 1000);
  first.name = "square";
  first.job = job_id{3};
  t.apply(first);
  auto run = event(1, 0, task_state::running, 2000);
  run.node = node_id{unique_id{1, 2}};
  run.pid = 4123;
  t.apply(run);
  t.apply(event(1, 0, task_state::finished, 5000));
  BOOST_REQUIRE(t.size() == 1u);
  const auto* r = t.find(some_task(1));
  BOOST_REQUIRE(r != nullptr);
  BOOST_TEST(t.name_of(*r) == "square");
  BOOST_TEST(r->job.value == 3u);
  BOOST_TEST((r->state == task_state::finished));
  BOOST_TEST(r->submit_us == 1000);
  BOOST_REQUIRE(r->attempt_count() == 1u);
  BOOST_TEST(r->latest.start_us == 2000);
  BOOST_TEST(r->latest.end_us == 5000);
  BOOST_TEST(r->latest.pid == 4123);
}

BOOST_AUTO_TEST_CASE(a_retry_keeps_each_attempt_with_its_error) {
  task_table t{10};
  t.apply(event(1, 0, task_state::queued, 1));
  t.apply(event(1, 0, task_state::running, 2));
  auto lost = event(1, 0, task_state::failed, 3);
  lost.error = "its worker died";
  t.apply(lost);
  t.apply(event(1, 1, task_state::queued, 4));
  t.apply(event(1, 1, task_state::running, 5));
  const auto* r = t.find(some_task(1));
  BOOST_REQUIRE(r->attempt_count() == 2u);
  BOOST_TEST((r->earlier[0].state == task_state::failed));
  BOOST_TEST(r->earlier[0].error == "its worker died");
  BOOST_TEST((r->latest.state == task_state::running));
  BOOST_TEST((r->state == task_state::running));
}

BOOST_AUTO_TEST_CASE(one_event_can_tell_a_whole_attempt) {
  task_table t{10};
  auto e = event(1, 0, task_state::finished, 0);
  e.name = "square";
  e.submit_us = 10;
  e.start_us = 20;
  e.end_us = 90;
  e.pid = 7;
  t.apply(e);
  const auto* r = t.find(some_task(1));
  BOOST_REQUIRE(r != nullptr);
  BOOST_TEST(t.name_of(*r) == "square");
  BOOST_TEST(r->submit_us == 10);
  BOOST_TEST(r->latest.start_us == 20);
  BOOST_TEST(r->latest.end_us == 90);
  BOOST_TEST(r->latest.pid == 7);
  BOOST_TEST((r->state == task_state::finished));
}

BOOST_AUTO_TEST_CASE(an_actor_call_keeps_its_actor_and_where_it_was_lost) {
  task_table t{10};
  // Lost with its actor's instance: where it ran is known, its start not.
  auto lost = event(1, 0, task_state::failed, 50);
  lost.name = "counter::bump";
  lost.actor = actor_id{unique_id{9, 9}};
  lost.node = node_id{unique_id{3, 4}};
  lost.pid = 41;
  lost.error = "the actor's instance was lost";
  t.apply(lost);
  auto ran = event(1, 1, task_state::finished, 90);
  ran.actor = lost.actor;
  ran.start_us = 80;
  ran.node = node_id{unique_id{5, 6}};
  ran.pid = 42;
  t.apply(ran);
  const auto* r = t.find(some_task(1));
  BOOST_REQUIRE(r != nullptr);
  BOOST_TEST((r->actor == lost.actor));
  BOOST_TEST(t.name_of(*r) == "counter::bump");
  BOOST_REQUIRE(r->attempt_count() == 2u);
  BOOST_TEST((r->earlier[0].node == lost.node));
  BOOST_TEST(r->earlier[0].pid == 41);
  BOOST_TEST(r->earlier[0].start_us == 0);
  BOOST_TEST(r->earlier[0].error == lost.error);
  BOOST_TEST((r->latest.node == ran.node));
  BOOST_TEST(r->latest.pid == 42);
  BOOST_TEST((r->state == task_state::finished));
  // A task calls no actor.
  t.apply(event(2, 0, task_state::queued, 1));
  BOOST_TEST(t.find(some_task(2))->actor.nil());
}

BOOST_AUTO_TEST_CASE(a_batch_names_each_new_task_by_the_last_name_before) {
  task_table t{10};
  auto a = event(1, 0, task_state::finished, 5);
  a.name = "square";
  auto b = event(2, 0, task_state::finished, 6);
  auto c = event(3, 0, task_state::finished, 7);
  c.name = "cube";
  auto d = event(4, 0, task_state::finished, 8);
  t.apply_batch({a, b, c, d});
  BOOST_TEST(t.name_of(*t.find(some_task(2))) == "square");
  BOOST_TEST(t.name_of(*t.find(some_task(4))) == "cube");
  // A new batch starts with no name before it.
  t.apply_batch({event(5, 0, task_state::queued, 9)});
  BOOST_TEST(t.name_of(*t.find(some_task(5))) == "");
}

// A batch applied to a full table (whose apply fetches ahead the slots of
// the events and of the records they forget) ends as its events applied
// one at a time do.
BOOST_AUTO_TEST_CASE(a_batch_into_a_full_table_is_its_events_one_by_one) {
  constexpr std::uint64_t bound = 50;
  task_table batched{bound};
  task_table single{bound};
  for (int round = 0; round < 3; ++round) {
    std::vector<task_event> batch;
    for (std::uint64_t i = 1; i <= 120; ++i) {
      auto seq = round * 100 + i; // some tasks of the round before again
      batch.push_back(event(seq, 0, task_state::finished,
                            static_cast<std::int64_t>(round * 1000 + i)));
    }
    batched.apply_batch(batch);
    for (const auto& e : batch)
      single.apply(e);
  }
  BOOST_TEST(batched.size() == bound);
  BOOST_TEST(batched.forgotten() == single.forgotten());
  for (std::uint64_t seq = 1; seq <= 320; ++seq) {
    const auto* b = batched.find(some_task(seq));
    const auto* s = single.find(some_task(seq));
    BOOST_REQUIRE((b == nullptr) == (s == nullptr));
    if (b != nullptr)
      BOOST_TEST(b->latest.end_us == s->latest.end_us);
  }
}

BOOST_AUTO_TEST_CASE(a_late_event_never_moves_an_attempt_back) {
  task_table t{10};
  t.apply(event(1, 0, task_state::finished, 9));
  t.apply(event(1, 0, task_state::running, 5));
  t.apply(event(1, 0, task_state::queued, 2));
  const auto* r = t.find(some_task(1));
  BOOST_TEST((r->state == task_state::finished));
  BOOST_TEST(r->submit_us == 2);
  BOOST_TEST(r->latest.start_us == 5);
}

BOOST_AUTO_TEST_CASE(an_attempt_told_late_takes_its_place_among_the_others) {
  task_table t{10};
  t.apply(event(1, 2, task_state::running, 30));
  t.apply(event(1, 0, task_state::failed, 10));
  t.apply(event(1, 1, task_state::failed, 20));
  const auto* r = t.find(some_task(1));
  BOOST_REQUIRE(r->attempt_count() == 3u);
  std::vector<std::int32_t> order;
  r->each_attempt([&](const auto& a) { order.push_back(a.attempt); });
  BOOST_TEST((order == std::vector<std::int32_t>{0, 1, 2}));
  BOOST_TEST((r->state == task_state::running));
  BOOST_TEST(r->earlier[1].end_us == 20);
}

BOOST_AUTO_TEST_CASE(past_its_bound_the_first_tasks_are_forgotten_and_counted) {
  task_table t{3};
  for (std::uint64_t i = 1; i <= 5; ++i)
    t.apply(event(i, 0, task_state::queued, static_cast<std::int64_t>(i)));
  t.add_dropped(7);
  BOOST_TEST(t.size() == 3u);
  BOOST_TEST(t.forgotten() == 2u);
  BOOST_TEST(t.dropped() == 7u);
  BOOST_TEST(t.find(some_task(1)) == nullptr);
  BOOST_TEST(t.find(some_task(5)) != nullptr);
  // Another event of a kept task makes no room.
  t.apply(event(3, 0, task_state::running, 9));
  BOOST_TEST(t.size() == 3u);
  BOOST_TEST(t.forgotten() == 2u);
}

BOOST_AUTO_TEST_CASE(
    the_table_finds_what_a_plain_map_keeps_as_tasks_come_and_go) {
  // Tasks of several submitters, their events in random order, most new,
  // some again for a task kept or forgotten; the oldest made is forgotten
  // first. The table and a map kept beside it agree after every event.
  constexpr std::size_t bound = 3'000;
  task_table t{bound};
  std::map<task_id, std::int64_t> kept; // task -> its latest end time
  std::deque<task_id> made;
  std::mt19937_64 rng{42};
  std::uint64_t forgotten = 0;
  for (std::int64_t i = 1; i <= 40'000; ++i) {
    task_id id{worker_id{unique_id{rng() % 5 + 1, 7}}, rng() % 20'000};
    auto e = event(0, 0, task_state::finished, i);
    e.task = id;
    t.apply(e);
    if (kept.emplace(id, i).second) {
      made.push_back(id);
      if (kept.size() > bound) {
        kept.erase(made.front());
        made.pop_front();
        ++forgotten;
      }
    } else {
      kept[id] = i;
    }
    if (i % 997 == 0) {
      BOOST_REQUIRE(t.size() == kept.size());
      for (const auto& [k, end] : kept) {
        const auto* r = t.find(k);
        BOOST_REQUIRE(r != nullptr);
        BOOST_REQUIRE(r->latest.end_us == end);
      }
      for (std::uint64_t probe = 0; probe < 200; ++probe) {
        task_id other{worker_id{unique_id{rng() % 5 + 1, 7}}, rng() % 20'000};
        BOOST_REQUIRE((t.find(other) != nullptr) == (kept.count(other) > 0));
      }
    }
  }
  BOOST_TEST(t.forgotten() == forgotten);
  std::size_t seen = 0;
  std::int64_t last_made = 0;
  bool oldest_first = true;
  t.each([&](const auto& r) {
    ++seen;
    // Records made later come later: compare by when each was made.
    auto at = std::find(made.begin(), made.end(), r.id) - made.begin();
    oldest_first = oldest_first && at >= last_made;
    last_made = at;
  });
  BOOST_TEST(seen == kept.size());
  BOOST_TEST(oldest_first);
}

BOOST_AUTO_TEST_CASE(a_table_that_keeps_nothing_counts_every_task_forgotten) {
  task_table t{0};
  t.apply(event(1, 0, task_state::queued, 1));
  BOOST_TEST(t.size() == 0u);
  BOOST_TEST(t.forgotten() == 1u);
  BOOST_TEST(t.find(some_task(1)) == nullptr);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace task_events_test
