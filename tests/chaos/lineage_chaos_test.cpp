// Large results under repeated node kills: chains of large values, kept in
// the object stores of nodes that keep dying, are read back right, rebuilt
// from lineage (recursively) while the kills go on.

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "chaos_support.hpp"

namespace lineage_chaos_test {

using prism_test::result_timeout;

/// Just above `max_inline_object_bytes`, so that every link_resources is kept
/// in the store of the node that made it.
constexpr std::size_t link_size = 101 * 1024;

std::atomic<int> source_runs{0};
std::atomic<int> in_flight{0};

std::vector<char> source(int seed) {
  prism_test::in_flight_scope scope{in_flight};
  ++source_runs;
  return std::vector<char>(link_size, static_cast<char>(seed % 100));
}

std::vector<char> step(std::vector<char> in) {
  prism_test::in_flight_scope scope{in_flight};
  in.push_back('+');
  return in;
}

PRISM_REMOTE(lineage_chaos_test::source, lineage_chaos_test::step);

using namespace lineage_chaos_test;

namespace {

/// A node the killer may take down. The links ask for "spot", so they live
/// on such nodes only and every kill can hit them.
const prism::resource_map worker_node{{"CPU", 2}, {"spot", 4}};
const prism::resource_map link_resources{{"CPU", 1}, {"spot", 1}};

/// A head and three nodes the killer takes down; each node's store holds
/// `StoreKiB` (0: the default, far more than the chains take).
template <std::uint64_t StoreKiB>
struct lineage_chaos_fixture : prism_chaos::transitions_stay_legal {
  lineage_chaos_fixture() {
    source_runs = 0;
  }

  ~lineage_chaos_fixture() {
    prism_chaos::expect_bodies_end(in_flight);
  }

  static prism::config store_config() {
    prism::config cfg;
    cfg.object_store_memory = StoreKiB * 1024;
    return cfg;
  }

  prism::testing::local_cluster cluster{
      {{{"CPU", 2}}, worker_node, worker_node, worker_node}, store_config()};
};

/// Objects the live nodes of `cluster` spilled since they started.
std::size_t spills_of(const prism::testing::local_cluster& cluster) {
  std::size_t spills = 0;
  for (const auto& node : cluster.alive_nodes())
    if (auto usage = cluster.object_store(node))
      spills += usage->spills;
  return spills;
}

/// Chains of three large links, each retried (and so rebuildable) forever,
/// made and read back while a node is killed every 60 ms: every value comes
/// back right. Returns the objects spilled meanwhile, as far as the nodes
/// alive at the end saw.
std::size_t chains_survive_node_kills(prism::testing::local_cluster& cluster) {
  constexpr int chains = 48;
  constexpr int chains_per_wave = 4;
  constexpr int kills_while_held = 3;
  using blob = std::vector<char>;
  std::vector<prism::object_ref<blob>> ends;
  int kills = 0;
  auto rebuilt_before = prism::testing::objects_rebuilt();
  {
    prism::testing::node_killer killer{cluster, worker_node,
                                       std::chrono::milliseconds{60}, 52090};
    // Chains of three large links, each retried (and so rebuildable)
    // forever, made while nodes die.
    for (int c = 0; c < chains; c += chains_per_wave) {
      std::vector<prism::object_ref<blob>> wave;
      for (int i = c; i < c + chains_per_wave; ++i) {
        auto a = prism::task(source)
                     .resources(link_resources)
                     .max_retries(-1)
                     .remote(i);
        auto b = prism::task(step)
                     .resources(link_resources)
                     .max_retries(-1)
                     .remote(a);
        wave.push_back(prism::task(step)
                           .resources(link_resources)
                           .max_retries(-1)
                           .remote(b));
      }
      auto [ready, rest] = prism::wait(wave, wave.size(), result_timeout);
      BOOST_REQUIRE(rest.empty());
      ends.insert(ends.end(), wave.begin(), wave.end());
    }
    // More nodes die with the links on them: every node that held some
    // when the last wave ended, so that each chain's end is lost and read
    // back made again (a few kills at random may miss them all). Then
    // everything is read while the kills go on.
    auto holders = cluster.alive_nodes();
    std::erase(holders, cluster.node(0));
    auto seen = killer.kills();
    BOOST_TEST(prism_test::wait_until([&] {
      auto alive = cluster.alive_nodes();
      return killer.kills() >= seen + kills_while_held &&
             std::none_of(holders.begin(), holders.end(), [&](const auto& n) {
               return std::find(alive.begin(), alive.end(), n) != alive.end();
             });
    }));
    for (int i = 0; i < chains; ++i) {
      auto v = prism::get(ends[i], result_timeout);
      BOOST_TEST_CONTEXT("chain " << i) {
        BOOST_TEST(v.size() == link_size + 2);
        BOOST_TEST(v.front() == static_cast<char>(i % 100));
        BOOST_TEST(v.back() == '+');
      }
    }
    kills = killer.kills();
  }
  auto rebuilt = prism::testing::objects_rebuilt() - rebuilt_before;
  BOOST_TEST_MESSAGE(chains << " chains, " << kills << " node kills, "
                            << rebuilt << " links rebuilt, "
                            << source_runs.load() << " runs of the source");
  // Every end was lost with its node and made again from lineage.
  BOOST_TEST(rebuilt >= static_cast<std::uint64_t>(chains));
  prism_chaos::expect_cpus_return_to_full(cluster, 2);
  BOOST_TEST(prism::testing::illegal_task_transitions() == 0u);
  return spills_of(cluster);
}

} // namespace

BOOST_AUTO_TEST_SUITE(lineage_chaos)

BOOST_FIXTURE_TEST_CASE(large_results_lost_to_node_kills_are_rebuilt_right,
                        lineage_chaos_fixture<0>) {
  chains_survive_node_kills(cluster);
}

// Stores of 512 KiB hold five links: most links spill to disk, and are
// read back from there, or rebuilt when their node dies with its files.
BOOST_FIXTURE_TEST_CASE(spilled_results_survive_node_kills,
                        lineage_chaos_fixture<512>) {
  auto spills = chains_survive_node_kills(cluster);
  BOOST_TEST_MESSAGE(spills << " links spilled on the nodes alive at the end");
  BOOST_TEST(spills > 0u);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace lineage_chaos_test
