// Every table round-trips its records, the key-value table keeps namespaces
// apart and lists by prefix, batches are atomic, and a reopened store holds
// everything it held.

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "control_store.hpp"
#include "store_layout.hpp"
#include "test_support.hpp"
#include "write_batch.hpp"

namespace tables_test {

using namespace prism;
using namespace prism::persistence;
using namespace prism::persistence::testing;

namespace {

/// How many table files the store at `path` has.
std::size_t table_files(const std::string& path) {
  std::size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator{path})
    n += e.path().extension() == ".sst" ? 1 : 0;
  return n;
}

/// Waits, up to 20 s, until the store at `path` has at least `n` table files
/// (RocksDB flushes on a thread of its own, with no event to wait on), and
/// returns how many it has.
std::size_t await_table_files(const std::string& path, std::size_t n) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds{20};
  while (table_files(path) < n && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds{10});
  return table_files(path);
}

} // namespace

BOOST_AUTO_TEST_SUITE(tables)

BOOST_AUTO_TEST_CASE(jobs_round_trip) {
  temp_dir dir;
  auto store = control_store::open(options_for(dir.path()));
  for (std::uint32_t i = 1; i <= 5; ++i)
    store.put_job(sample_job(i));
  for (std::uint32_t i = 1; i <= 5; ++i)
    BOOST_TEST((store.get_job(job_id{i}) == sample_job(i)));
  BOOST_TEST(!store.get_job(job_id{99}).has_value());
  store.del_job(job_id{3});
  BOOST_TEST(!store.get_job(job_id{3}).has_value());
  store.del_job(job_id{3}); // deleting what is gone is no error
}

BOOST_AUTO_TEST_CASE(nodes_round_trip) {
  temp_dir dir;
  auto store = control_store::open(options_for(dir.path()));
  for (std::uint64_t i = 0; i < 5; ++i)
    store.put_node(sample_node(i));
  for (std::uint64_t i = 0; i < 5; ++i)
    BOOST_TEST((store.get_node(sample_node(i).node) == sample_node(i)));
  store.del_node(sample_node(2).node);
  BOOST_TEST(!store.get_node(sample_node(2).node).has_value());
}

BOOST_AUTO_TEST_CASE(actors_round_trip_with_their_creation_spec) {
  temp_dir dir;
  auto store = control_store::open(options_for(dir.path()));
  for (std::uint64_t i = 0; i < 8; ++i)
    store.put_actor(sample_actor(i));
  for (std::uint64_t i = 0; i < 8; ++i) {
    auto got = store.get_actor(sample_actor_id(i));
    BOOST_REQUIRE(got.has_value());
    BOOST_TEST((*got == sample_actor(i)));
    BOOST_TEST(got->creation_spec.size() ==
               sample_actor(i).creation_spec.size());
  }
  auto dead = sample_actor(1);
  dead.state = actor_state::dead;
  dead.death_cause = "owner died";
  dead.death_kind = death_kind::owner_died;
  store.put_actor(dead);
  BOOST_TEST((store.get_actor(dead.actor) == dead));
  store.del_actor(dead.actor);
  BOOST_TEST(!store.get_actor(dead.actor).has_value());
}

/// Actor `i`, pending with no restart as the control store first writes
/// it, and with no name (whose index entry recovery would add).
actor_record first_written(std::uint64_t i) {
  auto a = sample_actor(i * 3); // pending, with no restart
  BOOST_REQUIRE(a.state == actor_state::pending && a.restarts.empty());
  a.name.clear();
  a.ns.clear();
  return a;
}

/// `a` once started on `node`.
actor_record started(actor_record a, node_id node) {
  a.state = actor_state::alive;
  a.node = node;
  return a;
}

BOOST_AUTO_TEST_CASE(
    an_actor_started_reads_back_whole_with_its_state_and_node) {
  temp_dir dir;
  auto a = first_written(1);
  // Halves of the new node that are zero still replace the old ones.
  node_id zero_hi;
  zero_hi.lo = 77;
  node_id zero_lo;
  zero_lo.hi = 78;
  auto b = first_written(2);
  {
    auto store = control_store::open(options_for(dir.path()));
    store.put_actor(a);
    store.put_actor(b);
    write_batch w;
    w.put_actor_started(a.actor, zero_hi);
    w.put_actor_started(b.actor, zero_lo);
    store.write(w);
    BOOST_TEST((store.get_actor(a.actor) == started(a, zero_hi)));
    BOOST_TEST((store.get_actor(b.actor) == started(b, zero_lo)));
    store.close();
  }
  auto store = control_store::open(options_for(dir.path()));
  auto rec = store.recover();
  BOOST_TEST(rec.report.empty());
  BOOST_REQUIRE_EQUAL(rec.tables.actors.size(), 2u);
  for (const auto& x : rec.tables.actors)
    BOOST_TEST((
        x == (x.actor == a.actor ? started(a, zero_hi) : started(b, zero_lo))));
  // Written whole again, the record is that write alone.
  auto dead = started(a, zero_hi);
  dead.state = actor_state::dead;
  dead.death_cause = "killed";
  store.put_actor(dead);
  BOOST_TEST((store.get_actor(a.actor) == dead));
}

BOOST_AUTO_TEST_CASE(started_actors_read_back_whole_from_table_files) {
  // Enough actors, each written whole and then started, that the actor
  // table goes to table files (8 MB memtables): what flushing merged reads
  // back as it did from the memtable, in the store and after a restart.
  temp_dir dir;
  constexpr std::uint64_t n = 40'000;
  auto node_of = [](std::uint64_t i) {
    node_id node;
    node.hi = i % 3 == 0 ? 0 : i + 1000;
    node.lo = i + 2000;
    return node;
  };
  {
    auto store = control_store::open(options_for(dir.path()));
    for (std::uint64_t first = 0; first < n; first += 1000) {
      write_batch whole;
      write_batch start;
      for (auto i = first; i < first + 1000; ++i) {
        whole.put_actor(first_written(i));
        start.put_actor_started(first_written(i).actor, node_of(i));
      }
      store.write(whole);
      store.write(start);
    }
    BOOST_REQUIRE(await_table_files(dir.path(), 1) > 0u);
    for (std::uint64_t i = 0; i < n; i += 997)
      BOOST_TEST((store.get_actor(first_written(i).actor) ==
                  started(first_written(i), node_of(i))));
    store.close();
  }
  auto store = control_store::open(options_for(dir.path()));
  auto rec = store.recover();
  BOOST_TEST(rec.report.empty());
  BOOST_REQUIRE_EQUAL(rec.tables.actors.size(), n);
  std::unordered_map<actor_id, const actor_record*> by_id;
  for (const auto& x : rec.tables.actors)
    by_id.emplace(x.actor, &x);
  std::size_t differ = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    auto want = started(first_written(i), node_of(i));
    auto got = by_id.find(want.actor);
    differ += got == by_id.end() || !(*got->second == want) ? 1 : 0;
  }
  BOOST_TEST(differ == 0u);
}

BOOST_AUTO_TEST_CASE(named_actor_index_round_trips) {
  temp_dir dir;
  auto store = control_store::open(options_for(dir.path()));
  store.put_named_actor("ns", "counter", sample_actor_id(1));
  store.put_named_actor("other", "counter", sample_actor_id(2));
  BOOST_TEST((store.get_named_actor("ns", "counter") == sample_actor_id(1)));
  BOOST_TEST((store.get_named_actor("other", "counter") == sample_actor_id(2)));
  BOOST_TEST(!store.get_named_actor("ns", "missing").has_value());
  store.del_named_actor("ns", "counter");
  BOOST_TEST(!store.get_named_actor("ns", "counter").has_value());
}

BOOST_AUTO_TEST_CASE(kv_keeps_namespaces_apart) {
  temp_dir dir;
  auto store = control_store::open(options_for(dir.path()));
  BOOST_TEST(!store.kv_put("a", "k", "1"));
  BOOST_TEST(!store.kv_put("b", "k", "2"));
  // A namespace that is a prefix of another, and keys that would make the
  // two collide if namespace and key were simply concatenated.
  BOOST_TEST(!store.kv_put("ab", "c", "3"));
  BOOST_TEST(!store.kv_put("a", "bc", "4"));
  BOOST_TEST((store.kv_get("a", "k") == std::string{"1"}));
  BOOST_TEST((store.kv_get("b", "k") == std::string{"2"}));
  BOOST_TEST((store.kv_get("ab", "c") == std::string{"3"}));
  BOOST_TEST((store.kv_get("a", "bc") == std::string{"4"}));
  BOOST_TEST(!store.kv_get("c", "k").has_value());
}

BOOST_AUTO_TEST_CASE(kv_put_overwrites_only_when_asked) {
  temp_dir dir;
  auto store = control_store::open(options_for(dir.path()));
  BOOST_TEST(!store.kv_put("ns", "k", "first"));
  BOOST_TEST(store.kv_put("ns", "k", "second", false));
  BOOST_TEST((store.kv_get("ns", "k") == std::string{"first"}));
  BOOST_TEST(store.kv_put("ns", "k", "third"));
  BOOST_TEST((store.kv_get("ns", "k") == std::string{"third"}));
  BOOST_TEST(store.kv_del("ns", "k"));
  BOOST_TEST(!store.kv_del("ns", "k"));
  BOOST_TEST(!store.kv_get("ns", "k").has_value());
}

BOOST_AUTO_TEST_CASE(kv_values_and_keys_may_hold_any_bytes) {
  temp_dir dir;
  auto store = control_store::open(options_for(dir.path()));
  std::string key{"k\0\xff", 3};
  std::string value{"\0\x01\x02\xfe", 4};
  store.kv_put(std::string{"n\0s", 3}, key, value);
  BOOST_TEST((store.kv_get(std::string{"n\0s", 3}, key) == value));
  BOOST_TEST(!store.kv_get("n", key).has_value());
}

BOOST_AUTO_TEST_CASE(kv_lists_keys_by_prefix_within_a_namespace) {
  temp_dir dir;
  auto store = control_store::open(options_for(dir.path()));
  for (auto key : {"job:1", "job:2", "job:10", "node:1", "jo"})
    store.kv_put("ns", key, "v");
  store.kv_put("ns2", "job:3", "v");
  store.kv_put("n", "sjob:4", "v");
  using keys = std::vector<std::string>;
  BOOST_TEST((store.kv_keys("ns", "job:") == keys{"job:1", "job:10", "job:2"}));
  BOOST_TEST((store.kv_keys("ns", "") ==
              keys{"jo", "job:1", "job:10", "job:2", "node:1"}));
  BOOST_TEST((store.kv_keys("ns2", "") == keys{"job:3"}));
  BOOST_TEST(store.kv_keys("ns", "x").empty());
  BOOST_TEST(store.kv_keys("none", "").empty());
}

BOOST_AUTO_TEST_CASE(batch_writes_actor_and_name_together) {
  temp_dir dir;
  auto store = control_store::open(options_for(dir.path()));
  auto a = sample_actor(0);
  write_batch b;
  b.put_actor(a);
  b.put_named_actor(a.ns, a.name, a.actor);
  b.put_job(sample_job(1));
  b.kv_put("ns", "k", "v");
  BOOST_TEST(b.size() == 4u);
  store.write(b);
  BOOST_TEST((store.get_actor(a.actor) == a));
  BOOST_TEST((store.get_named_actor(a.ns, a.name) == a.actor));
  BOOST_TEST((store.get_job(job_id{1}) == sample_job(1)));
  BOOST_TEST((store.kv_get("ns", "k") == std::string{"v"}));
  write_batch kill;
  auto dead = a;
  dead.state = actor_state::dead;
  kill.put_actor(dead);
  kill.del_named_actor(a.ns, a.name);
  kill.kv_del("ns", "k");
  store.write(kill);
  BOOST_TEST((store.get_actor(a.actor)->state == actor_state::dead));
  BOOST_TEST(!store.get_named_actor(a.ns, a.name).has_value());
  BOOST_TEST(!store.kv_get("ns", "k").has_value());
  store.write(write_batch{}); // an empty batch writes nothing
}

BOOST_AUTO_TEST_CASE(reopened_store_recovers_every_table) {
  temp_dir dir;
  std::vector<actor_record> actors;
  {
    auto store = control_store::open(options_for(dir.path()));
    for (std::uint32_t i = 1; i <= 3; ++i)
      store.put_job(sample_job(i));
    for (std::uint64_t i = 0; i < 4; ++i)
      store.put_node(sample_node(i));
    for (std::uint64_t i = 0; i < 10; ++i) {
      register_actor(store, sample_actor(i));
      actors.push_back(sample_actor(i));
    }
    store.kv_put("ns", "k1", "v1");
    store.kv_put("ns", "k2", "v2");
    store.close();
  }
  auto store = control_store::open(options_for(dir.path()));
  auto rec = store.recover();
  BOOST_TEST(rec.report.empty());
  const auto& t = rec.tables;
  BOOST_TEST(t.jobs.size() == 3u);
  BOOST_TEST(t.nodes.size() == 4u);
  BOOST_TEST(t.actors.size() == 10u);
  BOOST_TEST(t.named_actors.size() == 5u);
  BOOST_TEST(t.kv.size() == 2u);
  for (const auto& a : actors) {
    auto i =
        std::find_if(t.actors.begin(), t.actors.end(),
                     [&](const actor_record& x) { return x.actor == a.actor; });
    BOOST_REQUIRE(i != t.actors.end());
    BOOST_TEST((*i == a));
  }
  for (const auto& e : t.named_actors)
    BOOST_TEST((store.get_actor(e.actor)->name == e.name));
  BOOST_TEST((t.kv.front() == kv_entry{"ns", "k1", "v1"}));
  BOOST_TEST((store.get_job(job_id{2}) == sample_job(2)));
}

BOOST_AUTO_TEST_CASE(lineage_round_trips_apart_from_the_kv_table) {
  temp_dir dir;
  auto lineage = [](std::uint32_t job, std::uint64_t seq) {
    lineage_record r;
    r.job.value = job;
    r.object.task.submitter.hi = 0x77;
    r.object.task.submitter.lo = job;
    r.object.task.seq = seq;
    r.object.index = 1;
    r.task_spec = std::string("spec\0of ", 8) + std::to_string(seq);
    return r;
  };
  {
    auto store = control_store::open(options_for(dir.path()));
    write_batch b;
    for (std::uint64_t seq = 1; seq <= 3; ++seq)
      b.put_lineage(lineage(2, seq));
    b.put_lineage(lineage(1, 9));
    store.write(b);
    write_batch del;
    del.del_lineage(job_id{2}, lineage(2, 2).object);
    store.write(del);
    // A user's key named as a lineage key is the user's alone.
    store.kv_put("prism.lineage",
                 layout::lineage_key(job_id{2}, lineage(2, 1).object),
                 "user data");
    store.close();
  }
  auto store = control_store::open(options_for(dir.path()));
  auto rec = store.recover();
  BOOST_TEST(rec.report.empty());
  // Keyed by job first: one job's lineage is one range.
  std::vector<lineage_record> want{lineage(1, 9), lineage(2, 1), lineage(2, 3)};
  BOOST_TEST((rec.tables.lineage == want));
  BOOST_TEST(rec.tables.kv.size() == 1u);
}

BOOST_AUTO_TEST_CASE(missing_store_is_not_found_without_create) {
  temp_dir dir;
  auto opts = options_for(dir.path());
  opts.create_if_missing = false;
  try {
    auto store = control_store::open(opts);
    BOOST_FAIL("opened a store that does not exist");
  } catch (const store_error& e) {
    BOOST_TEST((e.kind() == store_error::kind_t::not_found));
  }
  BOOST_TEST(!std::filesystem::exists(dir.path()));
}

BOOST_AUTO_TEST_CASE(empty_path_is_an_invalid_argument) {
  try {
    auto store = control_store::open(store_options{});
    BOOST_FAIL("opened a store without a path");
  } catch (const store_error& e) {
    BOOST_TEST((e.kind() == store_error::kind_t::invalid_argument));
    BOOST_TEST((e.code() == errc::invalid_argument));
  }
}

BOOST_AUTO_TEST_CASE(nosync_store_round_trips_too) {
  temp_dir dir;
  auto opts = options_for(dir.path());
  opts.sync = false;
  {
    auto store = control_store::open(opts);
    store.put_actor(sample_actor(1));
  }
  auto store = control_store::open(opts);
  BOOST_TEST((store.get_actor(sample_actor_id(1)) == sample_actor(1)));
}

BOOST_AUTO_TEST_CASE(
    megabytes_of_records_are_recovered_each_once_in_key_order) {
  // Recovery reads a table on its own thread, a megabyte at a time through
  // four buffers: 20,000 actors of about 300 bytes go round them several
  // times.
  temp_dir dir;
  constexpr std::uint64_t n = 20'000;
  {
    auto store = control_store::open(options_for(dir.path()));
    write_batch b;
    for (std::uint64_t i = 0; i < n; ++i) {
      auto a = sample_actor(i);
      b.put_actor(a);
      if (!a.name.empty())
        b.put_named_actor(a.ns, a.name, a.actor);
      if (b.size() >= 500) {
        store.write(b);
        b.clear();
      }
    }
    store.write(b);
    store.close();
  }
  auto store = control_store::open(options_for(dir.path()));
  auto rec = store.recover();
  BOOST_TEST(rec.report.empty());
  BOOST_REQUIRE_EQUAL(rec.tables.actors.size(), n);
  std::vector<actor_record> expected;
  for (std::uint64_t i = 0; i < n; ++i)
    expected.push_back(sample_actor(i));
  std::sort(expected.begin(), expected.end(),
            [](const actor_record& a, const actor_record& b) {
              return layout::id_key(a.actor) < layout::id_key(b.actor);
            });
  for (std::size_t i = 0; i < n; ++i)
    BOOST_REQUIRE_MESSAGE(rec.tables.actors[i] == expected[i],
                          "actor " << i << " in key order differs");
}

BOOST_AUTO_TEST_CASE(an_open_store_flushes_its_memtables_at_8_mb) {
  // A restart keeps what it replays in memtables of up to 64 MB; once the
  // store is open, memtables go back to 8 MB. 48 MB written to one table
  // then make table files (at least two, whatever compaction merged since);
  // memtables of 64 MB would make none.
  temp_dir dir;
  {
    auto store = control_store::open(options_for(dir.path()));
    store.kv_put("ns", "before", "the restart");
    store.close();
  }
  auto store = control_store::open(options_for(dir.path()));
  BOOST_TEST(store.recover().report.empty());
  std::string value(std::size_t{1} << 20, 'v');
  for (int i = 0; i < 48; ++i) {
    value[0] = static_cast<char>('a' + i % 26);
    store.kv_put("ns", std::to_string(i), value);
  }
  BOOST_TEST(await_table_files(dir.path(), 2) >= 2u);
  BOOST_TEST((store.kv_get("ns", "47") == value));
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace tables_test
