// Borrowed large objects: a process that borrows an object kept in a node's
// store (a ref inside a value, or a task's ref argument) asks its owner
// where the copies are, reads it from the nearest one itself, in chunks,
// and keeps a copy in its own node's store, which the owner counts among
// the object's copies and frees with them.

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "cluster_fixture.hpp"

namespace borrowed_copies_test {

using prism_test::result_timeout;

/// Above the default `max_inline_object_bytes` (100 KiB).
constexpr std::size_t big_size = 300 * 1024;

/// A large value whose bytes all equal `seed`.
std::string make(int seed) {
  return std::string(big_size, static_cast<char>(seed));
}

/// `make`, after a while: a borrower asks for it before it is made.
std::string make_later(int seed) {
  // Time is the subject: the object must not be ready when asked for.
  std::this_thread::sleep_for(std::chrono::milliseconds{300});
  return make(seed);
}

/// Reads a ref it borrowed (inside a vector, so the task gets the ref, not
/// the value) and says what it found.
std::string read_borrowed(std::vector<prism::object_ref<std::string>> refs) {
  auto value = prism::get(refs.at(0), result_timeout);
  return std::to_string(value.size()) + ":" + std::to_string(value.front());
}

/// What a task found in the large argument it was given.
std::string describe(std::string value) {
  return std::to_string(value.size()) + ":" + std::to_string(value.front());
}

PRISM_REMOTE(borrowed_copies_test::make, borrowed_copies_test::make_later,
             borrowed_copies_test::read_borrowed,
             borrowed_copies_test::describe);

using namespace borrowed_copies_test;

namespace {

struct three_nodes {
  std::size_t objects_on(const prism::node_id& node) {
    auto usage = cluster.object_store(node);
    BOOST_REQUIRE(usage.has_value());
    return usage->objects;
  }

  prism::testing::local_cluster cluster{
      {{{"CPU", 1}}, {{"CPU", 1}}, {{"CPU", 1}}}};
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(borrowed_copies, three_nodes)

BOOST_AUTO_TEST_CASE(a_borrower_keeps_a_copy_that_outlives_the_first) {
  auto head = cluster.node(0);
  auto maker = cluster.node(1);
  auto reader = cluster.node(2);
  {
    // No retries: were every copy lost, it could not be made again.
    auto ref = prism::task(make).node_affinity(maker).max_retries(0).remote(9);
    auto [ready, rest] = prism::wait(
        std::vector<prism::object_ref<std::string>>{ref}, 1, result_timeout);
    BOOST_REQUIRE(ready.size() == 1u);
    BOOST_TEST(objects_on(maker) == 1u);
    // A task on a third node borrows it: it reads it from the maker's store
    // and keeps a copy in its own node's; the owner read nothing.
    auto read = prism::task(read_borrowed)
                    .node_affinity(reader)
                    .remote(std::vector<prism::object_ref<std::string>>{ref});
    BOOST_TEST(prism::get(read, result_timeout) ==
               std::to_string(big_size) + ":9");
    BOOST_TEST(
        prism_test::wait_until([&] { return objects_on(reader) == 1u; }));
    BOOST_TEST(objects_on(head) == 0u);
    // Its owner learns of the copy once the reader's store keeps it.
    BOOST_TEST(prism_test::wait_until(
        [&] { return prism::testing::object_copies(ref.id()) == 2u; }));
    // The first copy is lost with its node: the owner reads the borrower's.
    BOOST_REQUIRE(cluster.kill_node(maker));
    auto value = prism::get(ref, result_timeout);
    BOOST_TEST(value.size() == big_size);
    BOOST_TEST(value.back() == 9);
  }
  // Freed: every copy goes.
  BOOST_TEST(prism_test::wait_until(
      [&] { return objects_on(reader) == 0u && objects_on(head) == 0u; }));
}

BOOST_AUTO_TEST_CASE(a_borrower_that_asks_early_reads_it_from_its_store) {
  auto maker = cluster.node(1);
  auto reader = cluster.node(2);
  auto ref = prism::task(make_later).node_affinity(maker).remote(6);
  // Asked for while it is being made: told where it is kept once it is.
  auto read = prism::task(read_borrowed)
                  .node_affinity(reader)
                  .remote(std::vector<prism::object_ref<std::string>>{ref});
  BOOST_TEST(prism::get(read, result_timeout) ==
             std::to_string(big_size) + ":6");
  BOOST_TEST(prism_test::wait_until([&] { return objects_on(reader) == 1u; }));
  BOOST_TEST(prism_test::wait_until(
      [&] { return prism::testing::object_copies(ref.id()) == 2u; }));
}

BOOST_AUTO_TEST_CASE(a_task_reads_a_large_argument_from_a_store_itself) {
  auto head = cluster.node(0);
  auto maker = cluster.node(1);
  auto reader = cluster.node(2);
  auto ref = prism::task(make).node_affinity(maker).max_retries(0).remote(3);
  auto [ready, rest] = prism::wait(
      std::vector<prism::object_ref<std::string>>{ref}, 1, result_timeout);
  BOOST_REQUIRE(ready.size() == 1u);
  // Passed by ref, it reaches the task as a ref: the task's worker reads it
  // from the maker's store and keeps a copy on its node; its owner, the
  // driver, reads nothing.
  BOOST_TEST(prism::get(prism::task(describe).node_affinity(reader).remote(ref),
                        result_timeout) == std::to_string(big_size) + ":3");
  BOOST_TEST(prism_test::wait_until([&] { return objects_on(reader) == 1u; }));
  BOOST_TEST(objects_on(head) == 0u);
  BOOST_TEST(prism_test::wait_until(
      [&] { return prism::testing::object_copies(ref.id()) == 2u; }));
  // The next task there reads that copy, even with the first one gone.
  BOOST_REQUIRE(cluster.kill_node(maker));
  BOOST_TEST(prism::get(prism::task(describe).node_affinity(reader).remote(ref),
                        result_timeout) == std::to_string(big_size) + ":3");
}

BOOST_AUTO_TEST_CASE(a_borrower_on_the_makers_node_reads_it_there) {
  auto maker = cluster.node(1);
  auto ref = prism::task(make).node_affinity(maker).remote(4);
  auto read = prism::task(read_borrowed)
                  .node_affinity(maker)
                  .remote(std::vector<prism::object_ref<std::string>>{ref});
  BOOST_TEST(prism::get(read, result_timeout) ==
             std::to_string(big_size) + ":4");
  // One copy is enough on one node.
  BOOST_TEST(objects_on(maker) == 1u);
  BOOST_TEST(prism::testing::object_copies(ref.id()) == 1u);
}

BOOST_AUTO_TEST_CASE(a_borrower_whose_copy_is_gone_gets_the_value_anyway) {
  auto maker = cluster.node(1);
  auto reader = cluster.node(2);
  auto ref = prism::task(make).node_affinity(maker).remote(5);
  auto [ready, rest] = prism::wait(
      std::vector<prism::object_ref<std::string>>{ref}, 1, result_timeout);
  BOOST_REQUIRE(ready.size() == 1u);
  // The store forgets it, but its owner does not know yet: the borrower's
  // read fails there, and the owner gets it (rebuilt) for the borrower.
  BOOST_REQUIRE(cluster.drop_objects(maker) == 1u);
  auto read = prism::task(read_borrowed)
                  .node_affinity(reader)
                  .remote(std::vector<prism::object_ref<std::string>>{ref});
  BOOST_TEST(prism::get(read, result_timeout) ==
             std::to_string(big_size) + ":5");
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace borrowed_copies_test
