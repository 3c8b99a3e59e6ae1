// Durable objects: a task submitted with `.durable()` has its lineage kept
// in the control store, so that when the result's owner dies, the control
// store's owner adopts the object and borrowers still get it, made again.
// Without `.durable()`, the owner's death is an owner_died_error.

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <string>
#include <vector>

#include "cluster_fixture.hpp"

namespace durable_test {

using prism_test::result_timeout;

std::atomic<int> runs{0};

int square(int x) {
  ++runs;
  return x * x;
}

/// Submits `square(x)` from a worker, which then owns the result, and hands
/// the ref out: the caller borrows it.
prism::object_ref<int> square_owned_here(int x, bool durable) {
  return prism::task(square).durable(durable).remote(x);
}

/// Submits `square(x)` and `square(y)` durably from a worker, which then
/// owns both results, and hands the refs out: the caller borrows them.
std::vector<prism::object_ref<int>> two_squares_owned_here(int x, int y) {
  return {prism::task(square).durable().remote(x),
          prism::task(square).durable().remote(y)};
}

/// Like `square_owned_here`, with the argument a ref this worker owns: the
/// record keeps the argument's value.
prism::object_ref<int> square_of_own_put(int x) {
  auto arg = prism::put(x);
  return prism::task(square).durable().remote(arg);
}

PRISM_REMOTE(durable_test::square, durable_test::square_owned_here,
             durable_test::two_squares_owned_here,
             durable_test::square_of_own_put);

using namespace durable_test;

namespace {

std::size_t lineage_records() {
  return prism::testing::durable_lineage_records();
}

struct durable_fixture {
  durable_fixture() {
    runs = 0;
  }

  /// Returns the ref `make` hands out from a worker on node 1, once the
  /// task behind it has run there.
  prism::object_ref<int>
  borrowed_from_node_1(prism::object_ref<prism::object_ref<int>> make) {
    auto ref = prism::get(make, result_timeout);
    BOOST_REQUIRE(prism_test::wait_until([] { return runs.load() == 1; }));
    // The record is written before the task runs; wait for it to be there.
    BOOST_REQUIRE(prism_test::wait_until([] { return lineage_records() > 0; }));
    return ref;
  }

  prism::testing::local_cluster cluster{{{{"CPU", 2}}, {{"CPU", 2}}}};
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(durable, durable_fixture)

BOOST_AUTO_TEST_CASE(a_durable_object_outlives_its_owner) {
  auto node = cluster.node(1);
  auto ref = borrowed_from_node_1(
      prism::task(square_owned_here).node_affinity(node).remote(7, true));
  // The owner (the worker on node 1) dies with its node, before anyone
  // read the object.
  BOOST_REQUIRE(cluster.kill_node(node));
  BOOST_TEST(prism::get(ref, result_timeout) == 49);
  BOOST_TEST(runs.load() == 2);
  // A task that takes the ref gets the adopted object too.
  BOOST_TEST(prism::get(prism::task(square).remote(ref), result_timeout) ==
             49 * 49);
}

BOOST_AUTO_TEST_CASE(without_durable_the_owners_death_is_an_error) {
  auto node = cluster.node(1);
  auto ref = prism::get(
      prism::task(square_owned_here).node_affinity(node).remote(7, false),
      result_timeout);
  BOOST_REQUIRE(prism_test::wait_until([] { return runs.load() == 1; }));
  BOOST_REQUIRE(cluster.kill_node(node));
  BOOST_CHECK_THROW(prism::get(ref, result_timeout), prism::owner_died_error);
  BOOST_TEST(lineage_records() == 0u);
}

BOOST_AUTO_TEST_CASE(the_record_keeps_argument_values) {
  auto node = cluster.node(1);
  auto ref = borrowed_from_node_1(
      prism::task(square_of_own_put).node_affinity(node).remote(5));
  // The argument was a put of the dead owner: the record has its value.
  BOOST_REQUIRE(cluster.kill_node(node));
  BOOST_TEST(prism::get(ref, result_timeout) == 25);
}

BOOST_AUTO_TEST_CASE(user_keys_cannot_reach_the_lineage) {
  auto node = cluster.node(1);
  auto ref = borrowed_from_node_1(
      prism::task(square_owned_here).node_affinity(node).remote(8, true));
  // A user who writes over every key of the namespace that once held
  // lineage records, and over one named after the object, changes nothing.
  auto ns = std::string{"prism.lineage"};
  for (const auto& key : prism::kv::keys("", ns))
    prism::kv::put(key, "not a record", true, ns);
  prism::kv::put(ref.id().hex(), "not a record", true, ns);
  BOOST_REQUIRE(cluster.kill_node(node));
  BOOST_TEST(prism::get(ref, result_timeout) == 64);
}

BOOST_AUTO_TEST_CASE(the_record_survives_a_control_store_restart) {
  auto node = cluster.node(1);
  auto ref = borrowed_from_node_1(
      prism::task(square_owned_here).node_affinity(node).remote(6, true));
  cluster.restart_gcs();
  BOOST_REQUIRE(cluster.kill_node(node));
  BOOST_TEST(prism::get(ref, result_timeout) == 36);
}

// Of two records, the one of the result freed goes: the other result is
// still made again once its owner dies.
BOOST_AUTO_TEST_CASE(the_record_goes_when_its_owner_frees_the_result) {
  auto node = cluster.node(1);
  auto refs = prism::get(
      prism::task(two_squares_owned_here).node_affinity(node).remote(3, 4),
      result_timeout);
  auto kept = refs.at(1);
  BOOST_REQUIRE(prism_test::wait_until([] { return runs.load() == 2; }));
  BOOST_REQUIRE(prism_test::wait_until([] { return lineage_records() == 2; }));
  // The only ref to square(3) goes: its owner frees it.
  refs.clear();
  BOOST_REQUIRE(prism_test::wait_until([] { return lineage_records() == 1; }));
  // The record left is square(4)'s: without it, its owner's death would be
  // an owner_died_error.
  BOOST_REQUIRE(cluster.kill_node(node));
  BOOST_TEST(prism::get(kept, result_timeout) == 16);
}

// The records of the job that ends go, those of another job stay.
BOOST_AUTO_TEST_CASE(the_records_of_a_job_go_when_it_ends) {
  auto default_jobs = prism::task(square).durable().remote(10);
  BOOST_REQUIRE(prism::get(default_jobs, result_timeout) == 100);
  std::vector<prism::object_ref<int>> kept;
  {
    auto job = prism::client::connect();
    for (int i = 0; i < 3; ++i)
      kept.push_back(job.task(square).durable().remote(i));
    for (auto& ref : kept)
      prism::get(ref, result_timeout);
    BOOST_REQUIRE(lineage_records() == 4u);
  }
  BOOST_TEST(lineage_records() == 1u);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace durable_test
