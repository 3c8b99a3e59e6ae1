// The rules of `prism list` (internal/state_query.hpp): filters before the
// limit, pages in order of id after a cursor, and typed refusals.

#include <boost/test/unit_test.hpp>

#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "prism/error.hpp"
#include "prism/internal/state_query.hpp"

namespace state_query_test {

using namespace prism;
using internal::page_builder;

/// A stand-in actor: its id and its state; every other key is empty.
struct fake_actor {
  std::string id;
  std::string state;
};

std::vector<fake_actor> actors(std::size_t n, std::size_t alive_every) {
  std::vector<fake_actor> result;
  for (std::size_t i = 0; i < n; ++i) {
    char id[24];
    std::snprintf(id, sizeof id, "%08zx", (i * 7919) % n);
    result.push_back({id, i % alive_every == 0 ? "ALIVE" : "DEAD"});
  }
  return result;
}

state::page list(const std::vector<fake_actor>& all,
                 const state::list_options& o, std::size_t* made = nullptr) {
  page_builder b{state::kind::actors, o};
  auto state_column = internal::column_index(state::kind::actors, "state");
  for (const auto& a : all) {
    auto field = [&](std::size_t c) {
      return c == 0 ? a.id : c == state_column ? a.state : std::string{};
    };
    b.offer([&] { return a.id; }, field,
            [&] {
              if (made != nullptr)
                ++*made;
              return state::entry{{{"actor_id", a.id}, {"state", a.state}}, {}};
            });
  }
  return b.finish();
}

BOOST_AUTO_TEST_SUITE(state_lists)

BOOST_AUTO_TEST_CASE(filters_apply_before_the_limit) {
  // 1 in 1,000 alive: a limit applied first would find almost none.
  auto all = actors(100000, 1000);
  state::list_options o;
  o.filters = {"state=ALIVE"};
  o.limit = 10;
  auto p = list(all, o);
  BOOST_TEST(p.total == 100000u);
  BOOST_TEST(p.matched == 100u);
  BOOST_REQUIRE(p.entries.size() == 10u);
  for (const auto& e : p.entries)
    BOOST_TEST(e["state"] == "ALIVE");
}

BOOST_AUTO_TEST_CASE(a_page_holds_the_first_ids_in_order) {
  auto all = actors(1000, 1);
  state::list_options o;
  o.limit = 5;
  auto p = list(all, o);
  BOOST_REQUIRE(p.entries.size() == 5u);
  for (std::size_t i = 0; i < 5; ++i) {
    char id[16];
    std::snprintf(id, sizeof id, "%08zx", i);
    BOOST_TEST(p.entries[i]["actor_id"] == id);
  }
  BOOST_TEST(p.next_cursor == "00000004");
}

BOOST_AUTO_TEST_CASE(pages_after_cursors_cover_every_match_once) {
  auto all = actors(997, 3);
  state::list_options o;
  o.filters = {"state!=dead"};
  o.limit = 50;
  std::vector<std::string> seen;
  for (int pages = 0;; ++pages) {
    BOOST_REQUIRE(pages < 100);
    auto p = list(all, o);
    BOOST_TEST(p.matched == 333u);
    for (const auto& e : p.entries)
      seen.push_back(e["actor_id"]);
    if (p.next_cursor.empty())
      break;
    o.cursor = p.next_cursor;
  }
  BOOST_TEST(seen.size() == 333u);
  BOOST_TEST(std::is_sorted(seen.begin(), seen.end()));
  BOOST_TEST((std::adjacent_find(seen.begin(), seen.end()) == seen.end()));
}

BOOST_AUTO_TEST_CASE(the_last_page_has_no_cursor) {
  auto all = actors(10, 1);
  state::list_options o;
  o.limit = 10;
  BOOST_TEST(list(all, o).next_cursor.empty());
  o.limit = 0;
  auto p = list(all, o);
  BOOST_TEST(p.entries.size() == 10u);
  BOOST_TEST(p.next_cursor.empty());
}

BOOST_AUTO_TEST_CASE(only_entries_that_may_be_shown_are_made_whole) {
  auto all = actors(100000, 1);
  state::list_options o;
  o.limit = 100;
  std::size_t made = 0;
  auto p = list(all, o, &made);
  BOOST_TEST(p.entries.size() == 100u);
  // A heap of 100 over a shuffled 100,000 replaces its top about
  // 100 * ln(1000) times.
  BOOST_TEST(made < 5000u);
}

BOOST_AUTO_TEST_CASE(a_state_matches_in_any_case_and_a_name_exactly) {
  auto f = internal::parse_filter(state::kind::actors, "state=alive");
  BOOST_TEST(f.passes("ALIVE"));
  auto n = internal::parse_filter(state::kind::actors, "name=Counter");
  BOOST_TEST(n.passes("Counter"));
  BOOST_TEST(!n.passes("counter"));
  auto x = internal::parse_filter(state::kind::actors, "name!=");
  BOOST_TEST(!x.passes(""));
  BOOST_TEST(x.passes("a"));
}

BOOST_AUTO_TEST_CASE(a_part_matches_anywhere_in_any_case) {
  auto f = internal::parse_filter(state::kind::actors, "class_name~=count");
  BOOST_TEST(f.passes("Counter"));
  BOOST_TEST(f.passes("word_COUNT"));
  BOOST_TEST(!f.passes("Cache"));
  BOOST_TEST(!f.passes("cou"));
  auto any = internal::parse_filter(state::kind::actors, "name~=");
  BOOST_TEST(any.passes(""));
}

BOOST_AUTO_TEST_CASE(a_malformed_filter_or_unknown_key_is_refused_by_name) {
  for (const char* bad : {"state", "=ALIVE", "!=ALIVE", "~=x", ""})
    BOOST_CHECK_THROW(internal::parse_filter(state::kind::actors, bad),
                      invalid_argument_error);
  try {
    (void)internal::parse_filter(state::kind::nodes, "colour=red");
    BOOST_FAIL("an unknown key was taken");
  } catch (const invalid_argument_error& e) {
    std::string what = e.what();
    BOOST_TEST(what.find("colour") != std::string::npos);
    BOOST_TEST(what.find("node_id") != std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(summaries_count_by_group_and_state) {
  internal::summary_builder s{state::kind::actors, "class_name"};
  s.add("Counter", "ALIVE");
  s.add("Counter", "ALIVE");
  s.add("Adder", "DEAD");
  s.add("Counter", "DEAD");
  auto counts = s.finish();
  BOOST_REQUIRE(counts.size() == 3u);
  BOOST_TEST(counts[0].group == "Adder");
  BOOST_TEST(counts[1].group == "Counter");
  BOOST_TEST(counts[1].state == "ALIVE");
  BOOST_TEST(counts[1].n == 2u);
}

BOOST_AUTO_TEST_CASE(an_id_prefix_needs_four_characters) {
  BOOST_TEST(internal::id_named("5be0c2a7ff", "5be0"));
  BOOST_TEST(!internal::id_named("5be0c2a7ff", "5be"));
  BOOST_TEST(internal::id_named("5be", "5be"));
  BOOST_TEST(!internal::id_named("5be0", ""));
}

BOOST_AUTO_TEST_CASE(times_are_utc_iso_8601) {
  BOOST_TEST(internal::iso_time(0) == "");
  BOOST_TEST(internal::iso_time(1795000000120) == "2026-11-18T11:06:40.120Z");
}

BOOST_AUTO_TEST_CASE(kinds_are_named_singular_or_plural) {
  BOOST_TEST((state::kind_named("actor") == state::kind::actors));
  BOOST_TEST((state::kind_named("jobs") == state::kind::jobs));
  BOOST_TEST(!state::kind_named("tasks_").has_value());
  BOOST_TEST(state::keys_of(state::kind::actors).front() == "actor_id");
}

// Workers and objects are each node's: the merged pages of the nodes, each
// gathered with the same options, are the page of their union, and paging
// through them with cursors meets every match once.
BOOST_AUTO_TEST_CASE(pages_of_several_nodes_merge_into_the_page_of_all) {
  auto all = actors(3000, 3);
  std::vector<std::vector<fake_actor>> nodes(3);
  for (std::size_t i = 0; i < all.size(); ++i)
    nodes[(i * 31) % 3].push_back(all[i]);
  state::list_options o;
  o.filters = {"state=alive"};
  o.limit = 70;
  std::set<std::string> seen;
  std::size_t pages = 0;
  for (;;) {
    std::vector<state::page> parts;
    for (const auto& n : nodes)
      parts.push_back(list(n, o));
    auto merged =
        internal::merge_pages(state::kind::actors, std::move(parts), o.limit);
    auto whole = list(all, o);
    BOOST_TEST(merged.matched == 1000u);
    BOOST_TEST(merged.total == 3000u);
    BOOST_REQUIRE(merged.entries.size() == whole.entries.size());
    for (std::size_t i = 0; i < whole.entries.size(); ++i)
      BOOST_TEST(merged.entries[i]["actor_id"] == whole.entries[i]["actor_id"]);
    BOOST_TEST(merged.next_cursor == whole.next_cursor);
    for (const auto& e : merged.entries)
      BOOST_TEST(seen.insert(e["actor_id"]).second, e["actor_id"]);
    ++pages;
    if (merged.next_cursor.empty())
      break;
    o.cursor = merged.next_cursor;
  }
  BOOST_TEST(seen.size() == 1000u);
  BOOST_TEST(pages == 15u);
}

BOOST_AUTO_TEST_CASE(an_object_is_ordered_by_its_id_then_its_node) {
  state::entry a{{{"object_id", "0c9d"}, {"node_id", "b2"}}, {}};
  state::entry b{{{"object_id", "0c9d"}, {"node_id", "a1"}}, {}};
  std::vector<state::page> parts(2);
  parts[0].entries = {a};
  parts[0].matched = parts[0].total = 1;
  parts[1].entries = {b};
  parts[1].matched = parts[1].total = 1;
  auto merged = internal::merge_pages(state::kind::objects, parts, 1);
  BOOST_REQUIRE(merged.entries.size() == 1u);
  BOOST_TEST(merged.entries[0]["node_id"] == "a1");
  BOOST_TEST(merged.next_cursor == "0c9d:a1");
  BOOST_TEST(merged.matched == 2u);
  auto rest = internal::merge_pages(state::kind::objects, parts, 0);
  BOOST_TEST(rest.entries.size() == 2u);
  BOOST_TEST(rest.next_cursor.empty());
}

BOOST_AUTO_TEST_CASE(workers_and_objects_have_typed_keys) {
  BOOST_TEST(state::keys_of(state::kind::workers).front() == "worker_id");
  BOOST_TEST(state::keys_of(state::kind::objects).front() == "object_id");
  BOOST_TEST((state::kind_named("worker") == state::kind::workers));
  BOOST_TEST((state::kind_named("objects") == state::kind::objects));
  BOOST_CHECK_THROW(internal::parse_filter(state::kind::workers, "class=x"),
                    invalid_argument_error);
  auto f = internal::parse_filter(state::kind::workers, "state=idle");
  BOOST_TEST(f.passes("IDLE"));
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace state_query_test
