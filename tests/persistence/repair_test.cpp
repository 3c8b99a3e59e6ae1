// Recovery repairs or drops partial and inconsistent records, says so in its
// report, writes the repairs so that a second recovery finds nothing to do,
// and never crashes.

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <random>
#include <string>

#include "control_store.hpp"
#include "record_codec.hpp"
#include "test_support.hpp"

namespace repair_test {

using namespace prism;
using namespace prism::persistence;
using namespace prism::persistence::testing;

namespace {

using action = repair::action;
using layout::table;

/// The one repair in `report` to `tbl`, failing the test unless there is
/// exactly one.
repair only_repair(const repair_report& report, const std::string& tbl) {
  std::vector<repair> found;
  std::copy_if(report.repairs.begin(), report.repairs.end(),
               std::back_inserter(found),
               [&](const repair& r) { return r.table == tbl; });
  BOOST_REQUIRE_EQUAL(found.size(), 1u);
  BOOST_TEST_MESSAGE(tbl << " " << found[0].key << ": " << found[0].reason);
  return found[0];
}

bool mentions(const repair& r, const std::string& needle) {
  return r.reason.find(needle) != std::string::npos;
}

/// Recovers `store` once more and checks the first recovery left nothing.
void expect_second_recovery_clean(control_store& store) {
  auto again = store.recover();
  BOOST_TEST(again.report.empty());
}

/// Reopens the store at `path` and recovers it.
recovery reopen_and_recover(const std::string& path) {
  auto store = control_store::open(options_for(path));
  auto rec = store.recover();
  expect_second_recovery_clean(store);
  return rec;
}

bool has_actor(const snapshot& s, actor_id id) {
  return std::any_of(s.actors.begin(), s.actors.end(),
                     [&](const actor_record& a) { return a.actor == id; });
}

} // namespace

BOOST_AUTO_TEST_SUITE(repairs)

BOOST_AUTO_TEST_CASE(index_entry_whose_actor_is_missing_is_dropped) {
  temp_dir dir;
  auto store = control_store::open(options_for(dir.path()));
  store.put_named_actor("ns", "ghost", sample_actor_id(42));
  auto rec = store.recover();
  auto r = only_repair(rec.report, "named_actors");
  BOOST_TEST((r.what == action::dropped));
  BOOST_TEST(mentions(r, "missing"));
  BOOST_TEST(r.key == "ns/ghost");
  BOOST_TEST(rec.tables.named_actors.empty());
  BOOST_TEST(!store.get_named_actor("ns", "ghost").has_value());
  expect_second_recovery_clean(store);
}

BOOST_AUTO_TEST_CASE(live_named_actor_missing_from_the_index_is_reindexed) {
  temp_dir dir;
  auto store = control_store::open(options_for(dir.path()));
  auto a = sample_actor(0);
  BOOST_REQUIRE(!a.name.empty());
  store.put_actor(a); // no index entry: as if the write had been split
  auto rec = store.recover();
  auto r = only_repair(rec.report, "named_actors");
  BOOST_TEST((r.what == action::fixed));
  BOOST_TEST(mentions(r, "re-added"));
  BOOST_TEST((rec.tables.named_actors ==
              std::vector<named_actor_entry>{{a.ns, a.name, a.actor}}));
  BOOST_TEST((store.get_named_actor(a.ns, a.name) == a.actor));
  expect_second_recovery_clean(store);
}

BOOST_AUTO_TEST_CASE(index_entry_of_a_dead_actor_is_dropped) {
  temp_dir dir;
  auto store = control_store::open(options_for(dir.path()));
  auto a = sample_actor(0);
  a.state = actor_state::dead;
  a.death_cause = "killed";
  store.put_actor(a);
  store.put_named_actor(a.ns, a.name, a.actor);
  auto rec = store.recover();
  auto r = only_repair(rec.report, "named_actors");
  BOOST_TEST((r.what == action::dropped));
  BOOST_TEST(mentions(r, "dead"));
  BOOST_TEST(has_actor(rec.tables, a.actor)); // the actor itself stays
  expect_second_recovery_clean(store);
}

BOOST_AUTO_TEST_CASE(index_entry_naming_an_actor_of_another_name_is_replaced) {
  temp_dir dir;
  auto store = control_store::open(options_for(dir.path()));
  auto a = sample_actor(0);
  store.put_actor(a);
  store.put_named_actor(a.ns, a.name, a.actor);
  store.put_named_actor(a.ns, "stale-name", a.actor);
  auto rec = store.recover();
  auto r = only_repair(rec.report, "named_actors");
  BOOST_TEST((r.what == action::dropped));
  BOOST_TEST(r.key == a.ns + "/stale-name");
  BOOST_TEST((store.get_named_actor(a.ns, a.name) == a.actor));
  expect_second_recovery_clean(store);
}

BOOST_AUTO_TEST_CASE(
    second_live_actor_claiming_a_name_is_reported_not_changed) {
  temp_dir dir;
  auto store = control_store::open(options_for(dir.path()));
  auto a = sample_actor(0);
  auto b = sample_actor(2);
  b.name = a.name;
  b.ns = a.ns;
  store.put_actor(a);
  store.put_actor(b);
  store.put_named_actor(a.ns, a.name, a.actor);
  auto rec = store.recover();
  auto r = only_repair(rec.report, "named_actors");
  BOOST_TEST((r.what == action::kept));
  BOOST_TEST(mentions(r, b.actor.hex()));
  BOOST_TEST((store.get_named_actor(a.ns, a.name) == a.actor));
  BOOST_TEST(rec.tables.actors.size() == 2u);
}

BOOST_AUTO_TEST_CASE(half_written_job_is_dropped) {
  temp_dir dir;
  control_store::open(options_for(dir.path())).close();
  {
    raw_store raw{dir.path()};
    for (std::uint32_t i = 1; i <= 3; ++i)
      raw.put(table::jobs, layout::job_key(job_id{i}),
              codec::encode(sample_job(i)));
    auto whole = codec::encode(sample_job(2));
    raw.put(table::jobs, layout::job_key(job_id{2}),
            whole.substr(0, whole.size() / 2));
  }
  auto rec = reopen_and_recover(dir.path());
  auto r = only_repair(rec.report, "jobs");
  BOOST_TEST((r.what == action::dropped));
  BOOST_TEST(r.key == "2");
  BOOST_TEST(rec.tables.jobs.size() == 2u);
  BOOST_TEST((rec.tables.jobs[0] == sample_job(1)));
  BOOST_TEST((rec.tables.jobs[1] == sample_job(3)));
}

BOOST_AUTO_TEST_CASE(record_cut_at_a_field_boundary_is_dropped) {
  // Parses as protobuf, but lacks the seal that every record ends with.
  temp_dir dir;
  control_store::open(options_for(dir.path())).close();
  {
    raw_store raw{dir.path()};
    auto whole = codec::encode(sample_job(1));
    raw.put(table::jobs, layout::job_key(job_id{1}),
            whole.substr(0, whole.size() - 6));
  }
  auto rec = reopen_and_recover(dir.path());
  auto r = only_repair(rec.report, "jobs");
  BOOST_TEST(mentions(r, "cut short"));
  BOOST_TEST(rec.tables.jobs.empty());
}

BOOST_AUTO_TEST_CASE(every_truncation_of_a_record_fails_to_decode) {
  // An actor with two restarts: a cut inside them is a cut too.
  BOOST_REQUIRE(sample_actor(5).restarts.size() == 2u);
  auto whole = codec::encode(sample_actor(5));
  for (std::size_t n = 0; n < whole.size(); ++n) {
    actor_record out;
    std::string why;
    BOOST_TEST_CONTEXT("first " << n << " of " << whole.size() << " bytes") {
      BOOST_TEST((codec::decode(whole.substr(0, n), out, why) ==
                  codec::decoded::malformed));
    }
  }
  actor_record out;
  std::string why;
  BOOST_TEST((codec::decode(whole, out, why) == codec::decoded::ok));
  BOOST_TEST((out == sample_actor(5)));
}

BOOST_AUTO_TEST_CASE(undecodable_records_in_every_table_are_dropped) {
  temp_dir dir;
  {
    auto store = control_store::open(options_for(dir.path()));
    store.put_actor(sample_actor(1));
    store.put_node(sample_node(1));
    store.close();
  }
  {
    raw_store raw{dir.path()};
    std::string garbage = "\xff\xff\xff\xff\x0f garbage";
    raw.put(table::jobs, layout::job_key(job_id{7}), garbage);
    raw.put(table::nodes, layout::id_key(sample_node(2).node), garbage);
    raw.put(table::actors, layout::id_key(sample_actor_id(2)), garbage);
    raw.put(table::named_actors, layout::scoped_key("ns", "x"), garbage);
    raw.put(table::lineage, layout::lineage_key(job_id{1}, object_id{}),
            garbage);
  }
  auto rec = reopen_and_recover(dir.path());
  BOOST_TEST(rec.report.count(action::dropped) == 5u);
  for (auto tbl : {"jobs", "nodes", "actors", "named_actors", "lineage"})
    BOOST_TEST(mentions(only_repair(rec.report, tbl), "undecodable"));
  BOOST_TEST(rec.tables.actors.size() == 1u);
  BOOST_TEST(rec.tables.nodes.size() == 1u);
  BOOST_TEST(rec.tables.jobs.empty());
}

BOOST_AUTO_TEST_CASE(
    records_filed_under_the_wrong_key_or_a_bad_key_are_dropped) {
  temp_dir dir;
  control_store::open(options_for(dir.path())).close();
  {
    raw_store raw{dir.path()};
    raw.put(table::actors, layout::id_key(sample_actor_id(5)),
            codec::encode(sample_actor(6)));
    raw.put(table::actors, "short", codec::encode(sample_actor(7)));
    raw.put(table::jobs, layout::job_key(job_id{8}),
            codec::encode(sample_job(9)));
    raw.put(table::kv, "\xff\xff", "v"); // claims a huge namespace
    lineage_record l;
    l.job.value = 3;
    l.object.task.seq = 4;
    raw.put(table::lineage, layout::lineage_key(job_id{3}, object_id{}),
            codec::encode(l));
    raw.put(table::lineage, "short", codec::encode(l));
  }
  auto rec = reopen_and_recover(dir.path());
  BOOST_TEST(rec.report.count(action::dropped) == 6u);
  BOOST_TEST(rec.tables.lineage.empty());
  BOOST_TEST(rec.tables.actors.empty());
  BOOST_TEST(rec.tables.jobs.empty());
  BOOST_TEST(rec.tables.kv.empty());
}

BOOST_AUTO_TEST_CASE(live_actor_without_creation_spec_is_marked_dead) {
  temp_dir dir;
  auto store = control_store::open(options_for(dir.path()));
  auto a = sample_actor(0);
  a.state = actor_state::alive;
  a.creation_spec.clear();
  store.put_actor(a);
  store.put_named_actor(a.ns, a.name, a.actor);
  auto rec = store.recover();
  auto r = only_repair(rec.report, "actors");
  BOOST_TEST((r.what == action::fixed));
  BOOST_TEST(mentions(r, "creation spec"));
  // Dead, it gives up its name.
  BOOST_TEST((only_repair(rec.report, "named_actors").what == action::dropped));
  auto stored = store.get_actor(a.actor);
  BOOST_REQUIRE(stored.has_value());
  BOOST_TEST((stored->state == actor_state::dead));
  BOOST_TEST(!stored->death_cause.empty());
  expect_second_recovery_clean(store);
}

BOOST_AUTO_TEST_CASE(actor_in_an_unknown_state_is_marked_dead) {
  temp_dir dir;
  control_store::open(options_for(dir.path())).close();
  auto a = sample_actor(1); // unnamed
  {
    raw_store raw{dir.path()};
    // A later value of a field wins in protobuf: state (field 8) = 9.
    raw.put(table::actors, layout::id_key(a.actor),
            codec::encode(a) + "\x40\x09");
  }
  auto rec = reopen_and_recover(dir.path());
  auto r = only_repair(rec.report, "actors");
  BOOST_TEST((r.what == action::fixed));
  BOOST_TEST(mentions(r, "unknown state"));
  BOOST_REQUIRE(rec.tables.actors.size() == 1u);
  BOOST_TEST((rec.tables.actors[0].state == actor_state::dead));
}

BOOST_AUTO_TEST_CASE(random_garbage_everywhere_never_crashes_recovery) {
  temp_dir dir;
  {
    auto store = control_store::open(options_for(dir.path()));
    for (std::uint64_t i = 0; i < 20; ++i)
      register_actor(store, sample_actor(i));
    store.close();
  }
  std::mt19937_64 rng{12345};
  auto bytes = [&](std::size_t max) {
    std::string s(rng() % max, '\0');
    for (auto& c : s)
      c = static_cast<char>(rng());
    return s;
  };
  {
    raw_store raw{dir.path()};
    for (int i = 0; i < 50; ++i)
      for (auto t : layout::all_tables)
        raw.put(t, bytes(40), bytes(300));
  }
  auto rec = reopen_and_recover(dir.path());
  for (std::uint64_t i = 0; i < 20; ++i)
    BOOST_TEST(has_actor(rec.tables, sample_actor_id(i)));
  BOOST_TEST(rec.report.count(action::dropped) > 0u);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace repair_test
