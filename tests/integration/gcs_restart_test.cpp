// The control store dies and comes back: restart_gcs on a local cluster,
// calls while it is down, a restart under load, nodes and actors that died
// meanwhile, and a whole cluster started again on the same storage.

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "cluster_fixture.hpp"

namespace gcs_restart_test {

using prism_test::result_timeout;
using prism_test::wait_until;

/// Instances `tally::create` has built.
std::atomic<int> builds{0};

/// A detached service: a running total.
class tally {
public:
  static tally* create(int start) {
    ++builds;
    return new tally(start);
  }

  int add(int x) {
    total_ += x;
    return total_;
  }

  bool restarted() const {
    return prism::was_current_actor_restarted();
  }

private:
  explicit tally(int start) : total_(start) {}
  int total_;
};

int twice(int x) {
  return 2 * x;
}

PRISM_REMOTE(gcs_restart_test::tally::create, &gcs_restart_test::tally::add,
             &gcs_restart_test::tally::restarted);
PRISM_REMOTE(gcs_restart_test::twice);

namespace {

using gcs_restart_test::builds;
using gcs_restart_test::tally;
using tally_handle = prism::actor_handle<tally>;

const prism::resource_map on_spot_node{{"spot", 1}};

int call_add(const tally_handle& h, int x) {
  return prism::get(h.task(&tally::add).remote(x), result_timeout);
}

prism::config grace_config(std::uint32_t grace_ms,
                           std::uint32_t reconnect_ms = 60000) {
  prism::config cfg;
  cfg.gcs_recovery_grace_ms = grace_ms;
  cfg.gcs_reconnect_timeout_ms = reconnect_ms;
  return cfg;
}

/// A directory for one test's tables, removed with the object.
struct temp_dir {
  temp_dir() {
    auto base = std::filesystem::temp_directory_path() /
                ("prism-gcs-test-" + prism::unique_id::random().hex());
    std::filesystem::create_directories(base);
    path = base.string();
  }
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string path;
};

/// A head and a node with "spot". After a restart of the control store,
/// nodes and owners have `GraceMs` to report back before their actors are
/// settled without them.
template <std::uint32_t GraceMs>
struct grace_fixture {
  grace_fixture() {
    builds = 0;
  }

  static constexpr std::chrono::milliseconds grace{GraceMs};

  prism::testing::local_cluster cluster{
      {{{"CPU", 2}}, {{"CPU", 2}, {"spot", 1}}}, grace_config(GraceMs)};
};

/// For tests in which every node and owner comes back: a grace that a
/// loaded machine does not outlast by stalling.
using restart_fixture = grace_fixture<5000>;

/// For tests that wait for the end of the grace period.
using short_grace_fixture = grace_fixture<300>;

} // namespace

BOOST_FIXTURE_TEST_SUITE(gcs_restart, restart_fixture)

BOOST_AUTO_TEST_CASE(detached_named_actor_is_reachable_after_restart_gcs) {
  auto h = prism::actor(tally::create)
               .name("svc")
               .lifetime(prism::lifetime::detached)
               .remote(10);
  BOOST_REQUIRE(call_add(h, 1) == 11);
  cluster.restart_gcs();
  auto found = prism::get_actor<tally>("svc");
  BOOST_REQUIRE(found.has_value());
  BOOST_TEST((found->id() == h.id()));
  // The same instance carries on: its state is intact, nothing restarted.
  BOOST_TEST(call_add(*found, 1) == 12);
  BOOST_TEST(!prism::get(found->task(&tally::restarted).remote()));
  BOOST_TEST(builds.load() == 1);
}

BOOST_AUTO_TEST_CASE(calls_to_a_live_actor_carry_on_while_the_gcs_is_down) {
  auto h = prism::actor(tally::create).remote(0);
  BOOST_REQUIRE(call_add(h, 1) == 1);
  cluster.stop_gcs();
  for (int i = 2; i <= 50; ++i)
    BOOST_TEST(call_add(h, 1) == i);
  BOOST_TEST(prism::get(prism::task(gcs_restart_test::twice).remote(21),
                        result_timeout) == 42);
  cluster.start_gcs();
  BOOST_TEST(call_add(h, 1) == 51);
}

BOOST_AUTO_TEST_CASE(a_lookup_made_while_the_gcs_is_down_waits_for_it) {
  auto h = prism::actor(tally::create).name("waiter").remote(0);
  BOOST_REQUIRE(call_add(h, 1) == 1);
  cluster.stop_gcs();
  auto lookup = std::async(std::launch::async,
                           [] { return prism::get_actor<tally>("waiter"); });
  auto created = std::async(std::launch::async, [] {
    return prism::actor(tally::create).name("latecomer").remote(5);
  });
  // Nothing can answer them now.
  BOOST_TEST((lookup.wait_for(std::chrono::milliseconds{200}) ==
              std::future_status::timeout));
  cluster.start_gcs();
  auto found = lookup.get();
  BOOST_REQUIRE(found.has_value());
  BOOST_TEST((found->id() == h.id()));
  BOOST_TEST(call_add(created.get(), 1) == 6);
}

BOOST_AUTO_TEST_CASE(nodes_register_again_and_new_work_is_placed) {
  cluster.restart_gcs();
  auto on_spot = prism::actor(tally::create).resources(on_spot_node).remote(1);
  BOOST_TEST(call_add(on_spot, 1) == 2);
  BOOST_TEST((cluster.actor_node(on_spot.id()) == cluster.node(1)));
  BOOST_TEST(prism::get(prism::task(gcs_restart_test::twice).remote(4),
                        result_timeout) == 8);
}

BOOST_FIXTURE_TEST_CASE(actor_whose_node_died_while_the_gcs_was_down_restarts,
                        short_grace_fixture) {
  auto h = prism::actor(tally::create)
               .name("mover")
               .lifetime(prism::lifetime::detached)
               .max_restarts(1)
               .resources(on_spot_node)
               .remote(0);
  BOOST_REQUIRE(call_add(h, 3) == 3);
  BOOST_REQUIRE((cluster.actor_node(h.id()) == cluster.node(1)));
  cluster.stop_gcs();
  BOOST_REQUIRE(cluster.kill_node(cluster.node(1)));
  auto replacement = cluster.add_node({{"CPU", 2}, {"spot", 1}});
  cluster.start_gcs();
  // The old node never registers again; after the grace period the actor is
  // built anew on the node that can host it.
  BOOST_REQUIRE_MESSAGE(wait_until([] { return builds.load() == 2; }),
                        "the actor was not rebuilt after the restart");
  BOOST_TEST(call_add(h, 1) == 1);
  BOOST_TEST(prism::get(h.task(&tally::restarted).remote(), result_timeout));
  BOOST_TEST((cluster.actor_node(h.id()) == replacement));
}

BOOST_FIXTURE_TEST_CASE(non_detached_actor_keeps_its_owner_across_a_restart,
                        grace_fixture<1000>) {
  std::string ns = "owned-" + prism::unique_id::random().hex();
  auto job = prism::client::connect(ns);
  auto h = job.actor(tally::create).name("kept").remote(0);
  BOOST_REQUIRE(job.get(h.task(&tally::add).remote(1), result_timeout) == 1);
  cluster.restart_gcs();
  // Time is the subject here: the actor must still live after the grace
  // period, at whose end unclaimed actors die. Nothing observable marks that
  // end, so the test waits past it (twice its length).
  std::this_thread::sleep_for(2 * grace);
  BOOST_TEST(job.get(h.task(&tally::add).remote(1), result_timeout) == 2);
  // And it still shares its job's fate.
  job.shutdown();
  BOOST_TEST(wait_until(
      [&] { return !prism::get_actor<tally>("kept", ns).has_value(); }));
}

BOOST_AUTO_TEST_CASE(restart_gcs_under_load_loses_no_call) {
  auto h = prism::actor(tally::create)
               .name("busy")
               .lifetime(prism::lifetime::detached)
               .remote(0);
  BOOST_REQUIRE(call_add(h, 0) == 0);
  std::atomic<bool> stop{false};
  std::atomic<int> calls{0};
  std::atomic<int> lookups{0};
  std::atomic<int> wrong{0};
  auto caller = std::async(std::launch::async, [&] {
    int expected = 0;
    while (!stop) {
      ++expected;
      if (call_add(h, 1) != expected)
        ++wrong;
      ++calls;
    }
  });
  auto looker = std::async(std::launch::async, [&] {
    while (!stop) {
      auto found = prism::get_actor<tally>("busy");
      if (!found || found->id() != h.id())
        ++wrong;
      prism::kv::put("lookups", std::to_string(++lookups));
    }
  });
  for (int round = 0; round < 3; ++round) {
    auto before = calls.load() + lookups.load();
    BOOST_REQUIRE(wait_until(
        [&] { return calls.load() + lookups.load() >= before + 20; }));
    cluster.restart_gcs();
  }
  auto before = lookups.load();
  BOOST_REQUIRE(wait_until([&] { return lookups.load() >= before + 5; }));
  stop = true;
  caller.get();
  looker.get();
  BOOST_TEST(wrong.load() == 0);
  BOOST_TEST(call_add(h, 0) == calls.load());
  BOOST_TEST((prism::kv::get("lookups") == std::to_string(lookups.load())));
  BOOST_TEST(builds.load() == 1);
}

BOOST_AUTO_TEST_CASE(actors_created_while_the_gcs_restarts_each_start_once) {
  // Creations and their instances' reports reach the control store past its
  // endpoint: those sent as it went down are sent again to the next one.
  constexpr int burst = 2000;
  std::vector<tally_handle> made;
  for (int round = 0; round < 3; ++round) {
    auto before = builds.load();
    auto creator = std::async(std::launch::async, [&] {
      for (int i = 0; i < burst; ++i)
        made.push_back(prism::actor(tally::create).remote(0));
    });
    BOOST_REQUIRE(wait_until([&] { return builds.load() >= before + 50; }));
    cluster.restart_gcs();
    creator.get();
  }
  std::vector<prism::object_ref<int>> answers;
  answers.reserve(made.size());
  for (auto& h : made)
    answers.push_back(h.task(&tally::add).remote(1));
  for (auto& a : answers)
    BOOST_TEST(prism::get(a, result_timeout) == 1);
  BOOST_TEST(builds.load() == 3 * burst);
}

BOOST_AUTO_TEST_CASE(writes_across_restart_gcs_are_each_applied_once) {
  // A write the control store made durable but died before answering is
  // sent again by its caller: it must find its first answer, not its own
  // change.
  std::atomic<bool> done{false};
  std::atomic<int> writes{0};
  std::atomic<int> found_own_change{0};
  auto writer = std::async(std::launch::async, [&] {
    for (int i = 0; !done; ++i) {
      auto key = "fresh/" + std::to_string(i);
      if (prism::kv::put(key, "v", false))
        ++found_own_change;
      if (!prism::kv::del(key))
        ++found_own_change;
      ++writes;
    }
  });
  // Ends the writer also when a check below fails.
  struct stop_writer {
    std::atomic<bool>& done;
    ~stop_writer() {
      done = true;
    }
  } stop{done};
  for (int round = 0; round < 8; ++round) {
    auto before = writes.load();
    BOOST_REQUIRE(wait_until([&] { return writes > before + 5; }));
    cluster.restart_gcs();
  }
  done = true;
  writer.get();
  BOOST_TEST(found_own_change.load() == 0);
}

BOOST_AUTO_TEST_CASE(key_value_table_survives_restart_gcs) {
  prism::kv::put("config/mode", "fast");
  prism::kv::put("config/level", std::string{"\0\1", 2});
  cluster.restart_gcs();
  BOOST_TEST((prism::kv::get("config/mode") == "fast"));
  BOOST_TEST((prism::kv::get("config/level") == std::string("\0\1", 2)));
  BOOST_TEST(prism::kv::keys("config/").size() == 2u);
}

BOOST_AUTO_TEST_SUITE_END()

// -- calls while the control store stays down ---------------------------------

BOOST_AUTO_TEST_CASE(a_call_needing_the_gcs_fails_typed_after_the_deadline) {
  prism::testing::local_cluster cluster{{{{"CPU", 2}}}, grace_config(300, 300)};
  cluster.stop_gcs();
  auto started = std::chrono::steady_clock::now();
  BOOST_CHECK_THROW((void)prism::get_actor<tally>("anyone"),
                    prism::gcs_unavailable_error);
  BOOST_CHECK_THROW(prism::kv::put("k", "v"), prism::gcs_unavailable_error);
  BOOST_TEST((std::chrono::steady_clock::now() - started < result_timeout));
  try {
    (void)prism::kv::get("k");
    BOOST_FAIL("kv::get answered while the control store was down");
  } catch (const prism::gcs_unavailable_error& e) {
    BOOST_TEST(e.retryable());
    BOOST_TEST(std::string{e.what()}.find("gcs_reconnect_timeout_ms") !=
               std::string::npos);
  }
  cluster.start_gcs();
  BOOST_TEST(!prism::get_actor<tally>("anyone").has_value());
}

BOOST_AUTO_TEST_CASE(a_write_that_timed_out_has_an_unknown_outcome) {
  prism::testing::local_cluster cluster{{{{"CPU", 2}}}, grace_config(300, 300)};
  cluster.stop_gcs();
  try {
    prism::kv::put("leader", "me", false);
    BOOST_FAIL("kv::put answered while the control store was down");
  } catch (const prism::gcs_unavailable_error& e) {
    BOOST_TEST(e.retryable());
    BOOST_TEST(std::string{e.what()}.find("may or may not have been applied") !=
               std::string::npos);
  }
  cluster.start_gcs();
  // The write that timed out while the store was down was never applied
  // late: calling again applies it, once.
  BOOST_TEST(!prism::kv::put("leader", "me", false));
  BOOST_TEST((prism::kv::get("leader") == "me"));
}

// -- what the control store remembers ----------------------------------------

BOOST_AUTO_TEST_CASE(the_control_store_forgets_the_actors_that_died_first) {
  auto cfg = grace_config(5000);
  cfg.gcs_max_dead_actors = 2;
  prism::testing::local_cluster cluster{{{{"CPU", 2}}}, cfg};
  std::vector<tally_handle> actors;
  for (int i = 0; i < 4; ++i) {
    actors.push_back(prism::actor(tally::create).remote(0));
    BOOST_REQUIRE(call_add(actors.back(), 1) == 1);
  }
  for (auto& h : actors)
    prism::kill(h);
  // Each call of a dead actor asks the control store why it died.
  auto cause = [](const tally_handle& h) {
    return prism_test::actor_died_message(h.task(&tally::add).remote(1))
        .value_or("(it answered)");
  };
  auto forgotten = [&](const tally_handle& h) {
    return cause(h).find("forgotten") != std::string::npos;
  };
  auto killed = [&](const tally_handle& h) {
    return cause(h).find("prism::kill") != std::string::npos;
  };
  BOOST_TEST(wait_until([&] { return forgotten(actors[0]); }));
  BOOST_TEST(forgotten(actors[1]));
  BOOST_TEST(killed(actors[2]));
  BOOST_TEST(killed(actors[3]));
  // The storage forgot them too: a restarted control store knows the same.
  cluster.restart_gcs();
  BOOST_TEST(forgotten(actors[0]));
  BOOST_TEST(forgotten(actors[1]));
  BOOST_TEST(killed(actors[2]));
  BOOST_TEST(killed(actors[3]));
}

// -- the whole cluster
// ---------------------------------------------------------

BOOST_AUTO_TEST_CASE(whole_cluster_restart_brings_detached_actors_back) {
  temp_dir dir;
  builds = 0;
  prism::config cfg;
  cfg.num_cpus = 2;
  cfg.ns = "services";
  cfg.storage_path = dir.path;
  prism::actor_id detached_id;
  {
    prism_test::cluster first{cfg};
    auto h = prism::actor(tally::create)
                 .name("ledger")
                 .lifetime(prism::lifetime::detached)
                 .remote(100);
    BOOST_REQUIRE(call_add(h, 1) == 101);
    detached_id = h.id();
    auto scratch = prism::actor(tally::create).name("scratch").remote(0);
    BOOST_REQUIRE(call_add(scratch, 1) == 1);
    prism::kv::put("ledger/owner", "finance");
  }
  BOOST_REQUIRE(std::filesystem::exists(dir.path));
  {
    prism_test::cluster second{cfg};
    auto found = prism::get_actor<tally>("ledger");
    BOOST_REQUIRE(found.has_value());
    BOOST_TEST((found->id() == detached_id));
    // Built again from its stored creation spec: the factory's argument is
    // back, the state of the first instance is not.
    BOOST_TEST(call_add(*found, 1) == 101);
    BOOST_TEST(!prism::get_actor<tally>("scratch").has_value());
    BOOST_TEST((prism::kv::get("ledger/owner") == "finance"));
  }
}

BOOST_AUTO_TEST_CASE(temporary_storage_is_removed_at_shutdown) {
  std::string path;
  {
    prism_test::cluster c{prism_test::make_config(1)};
    path = prism::testing::storage_path();
    BOOST_TEST(std::filesystem::exists(path));
    prism::kv::put("k", "v");
  }
  BOOST_TEST(!std::filesystem::exists(path));
}

BOOST_AUTO_TEST_CASE(a_damaged_store_is_refused_and_left_untouched) {
  temp_dir dir;
  {
    std::ofstream junk{dir.path + "/CURRENT"};
    junk << "not a store\n";
  }
  prism::config cfg;
  cfg.num_cpus = 1;
  cfg.storage_path = dir.path;
  try {
    prism::init(cfg);
    prism::shutdown();
    BOOST_FAIL("a damaged store was opened");
  } catch (const prism::storage_corrupt_error& e) {
    BOOST_TEST(std::string{e.what()}.find(dir.path) != std::string::npos);
    BOOST_TEST(e.path() == dir.path);
  }
  BOOST_TEST(!prism::is_initialized());
  std::ifstream kept{dir.path + "/CURRENT"};
  std::string line;
  std::getline(kept, line);
  BOOST_TEST(line == "not a store");
}

} // namespace gcs_restart_test
