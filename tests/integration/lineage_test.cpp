// Objects in nodes' object stores, and lineage reconstruction: a large
// result stays on the node that made it, and a read from another node keeps
// a copy there too; when every copy is lost (the node
// dies, or its store is emptied), the owner runs the task again, and the
// task's lost arguments too. A lost put fails with object_lost_error; a
// task out of retries, or whose re-run fails, gives
// reconstruction_failed_error.

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <string>
#include <vector>

#include "cluster_fixture.hpp"

namespace lineage_test {

using prism_test::result_timeout;

/// Above the default `max_inline_object_bytes` (100 KiB).
constexpr std::size_t big_size = 200 * 1024;

std::atomic<int> make_runs{0};
std::atomic<int> grow_runs{0};
std::atomic<bool> fail_next{false};

/// A large value whose bytes all equal `seed`.
std::vector<char> make(int seed) {
  ++make_runs;
  return std::vector<char>(big_size, static_cast<char>(seed));
}

/// A large value made from another one.
std::vector<char> grow(std::vector<char> in) {
  ++grow_runs;
  in.push_back('+');
  return in;
}

/// Like `make`, but throws once `fail_next` is set.
std::vector<char> make_or_throw(int seed) {
  if (fail_next.load())
    throw std::runtime_error("the source of this data is gone");
  return make(seed);
}

std::size_t size_of(std::vector<char> v) {
  return v.size();
}

/// Reads a ref it borrowed: its owner serves it (and rebuilds it first if
/// it was lost).
std::size_t size_through(std::vector<prism::object_ref<std::vector<char>>> r) {
  return prism::get(r.at(0), prism_test::result_timeout).size();
}

int small(int x) {
  return x * 2;
}

PRISM_REMOTE(lineage_test::make, lineage_test::grow,
             lineage_test::make_or_throw, lineage_test::size_of,
             lineage_test::size_through, lineage_test::small);

using namespace lineage_test;

namespace {

struct lineage_fixture {
  lineage_fixture() {
    make_runs = 0;
    grow_runs = 0;
    fail_next = false;
  }

  std::size_t objects_on(const prism::node_id& node) {
    auto usage = cluster.object_store(node);
    BOOST_REQUIRE(usage.has_value());
    return usage->objects;
  }

  /// Waits until `ref` is ready, without reading it.
  template <class T>
  void wait_ready(const prism::object_ref<T>& ref) {
    auto [ready, rest] =
        prism::wait(std::vector<prism::object_ref<T>>{ref}, 1, result_timeout);
    BOOST_REQUIRE(ready.size() == 1u);
  }

  prism::testing::local_cluster cluster{
      {{{"CPU", 1}}, {{"CPU", 1}}, {{"CPU", 1}}}};
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(lineage, lineage_fixture)

BOOST_AUTO_TEST_CASE(a_large_result_stays_in_its_nodes_store_until_freed) {
  auto node = cluster.node(1);
  {
    auto ref = prism::task(make).node_affinity(node).remote(7);
    auto value = prism::get(ref, result_timeout);
    BOOST_TEST(value.size() == big_size);
    BOOST_TEST(value.at(big_size - 1) == 7);
    BOOST_TEST(objects_on(node) == 1u);
    BOOST_TEST(cluster.object_store(node)->bytes >= big_size);
    // A small result goes to its owner with the report.
    BOOST_TEST(prism::get(prism::task(small).node_affinity(node).remote(4),
                          result_timeout) == 8);
    BOOST_TEST(objects_on(node) == 1u);
  }
  // The last ref is gone: so is the copy.
  BOOST_TEST(prism_test::wait_until([&] { return objects_on(node) == 0u; }));
  BOOST_TEST(make_runs.load() == 1);
}

BOOST_AUTO_TEST_CASE(a_copy_read_on_another_node_outlives_the_first) {
  auto head = cluster.node(0);
  auto doomed = cluster.node(1);
  {
    auto ref = prism::task(make).node_affinity(doomed, true).remote(8);
    BOOST_TEST(prism::get(ref, result_timeout).back() == 8);
    // The read kept a copy in the store of the driver's node.
    BOOST_TEST(objects_on(head) == 1u);
    BOOST_REQUIRE(cluster.kill_node(doomed));
    auto value = prism::get(ref, result_timeout);
    BOOST_TEST(value.size() == big_size);
    BOOST_TEST(value.front() == 8);
    BOOST_TEST(prism::get(prism::task(size_of).remote(ref), result_timeout) ==
               big_size);
    BOOST_TEST(make_runs.load() == 1);
  }
  // Freed: the copy goes too.
  BOOST_TEST(prism_test::wait_until([&] { return objects_on(head) == 0u; }));
}

BOOST_AUTO_TEST_CASE(a_result_lost_with_its_node_is_rebuilt) {
  auto doomed = cluster.node(1);
  auto ref = prism::task(make).node_affinity(doomed, true).remote(3);
  wait_ready(ref);
  BOOST_TEST(make_runs.load() == 1);
  BOOST_REQUIRE(cluster.kill_node(doomed));
  auto value = prism::get(ref, result_timeout);
  BOOST_TEST(value.size() == big_size);
  BOOST_TEST(value.front() == 3);
  BOOST_TEST(make_runs.load() == 2);
  // Read again: the rebuilt copy is there, nothing runs a third time.
  BOOST_TEST(prism::get(ref, result_timeout).size() == big_size);
  BOOST_TEST(make_runs.load() == 2);
}

BOOST_AUTO_TEST_CASE(lost_arguments_are_rebuilt_recursively) {
  auto doomed = cluster.node(1);
  auto a = prism::task(make).node_affinity(doomed, true).remote(5);
  auto b = prism::task(grow).node_affinity(doomed, true).remote(a);
  wait_ready(b);
  auto rebuilt_before = prism::testing::objects_rebuilt();
  BOOST_TEST(make_runs.load() == 1);
  BOOST_TEST(grow_runs.load() == 1);
  BOOST_TEST(objects_on(doomed) == 2u);
  BOOST_REQUIRE(cluster.kill_node(doomed));
  // b is lost, and so is a, which b's re-run needs.
  auto value = prism::get(b, result_timeout);
  BOOST_TEST(value.size() == big_size + 1);
  BOOST_TEST(value.front() == 5);
  BOOST_TEST(value.back() == '+');
  BOOST_TEST(grow_runs.load() == 2);
  BOOST_TEST(make_runs.load() == 2);
  BOOST_TEST(prism::testing::objects_rebuilt() - rebuilt_before == 2u);
}

BOOST_AUTO_TEST_CASE(
    a_lost_argument_is_rebuilt_once_for_a_task_and_a_borrower) {
  auto doomed = cluster.node(1);
  auto a = prism::task(make).node_affinity(doomed, true).remote(9);
  wait_ready(a);
  BOOST_REQUIRE(cluster.kill_node(doomed));
  // One task takes it as an argument; the other borrows it, nested in a
  // container, and asks its owner for it.
  auto by_value = prism::task(size_of).remote(a);
  std::vector<prism::object_ref<std::vector<char>>> nested{a};
  auto borrowed = prism::task(size_through).remote(nested);
  BOOST_TEST(prism::get(by_value, result_timeout) == big_size);
  BOOST_TEST(prism::get(borrowed, result_timeout) == big_size);
  BOOST_TEST(make_runs.load() == 2);
}

BOOST_AUTO_TEST_CASE(an_emptied_store_on_a_live_node_is_rebuilt_from) {
  auto node = cluster.node(2);
  auto ref = prism::task(make).node_affinity(node).remote(4);
  wait_ready(ref);
  BOOST_TEST(cluster.drop_objects(node).value_or(0) == 1u);
  BOOST_TEST(objects_on(node) == 0u);
  BOOST_TEST(prism::get(ref, result_timeout).front() == 4);
  BOOST_TEST(make_runs.load() == 2);
  BOOST_TEST(objects_on(node) == 1u);
}

BOOST_AUTO_TEST_CASE(a_lost_put_fails_with_object_lost) {
  auto head = cluster.node(0);
  auto ref = prism::put(std::vector<char>(big_size, 'p'));
  BOOST_TEST(objects_on(head) == 1u);
  BOOST_TEST(prism::get(ref, result_timeout).size() == big_size);
  auto consumer = prism::task(size_of).remote(ref);
  BOOST_TEST(prism::get(consumer, result_timeout) == big_size);
  BOOST_TEST(cluster.drop_objects(head).value_or(0) == 1u);
  try {
    prism::get(ref, result_timeout);
    BOOST_FAIL("a lost put was read");
  } catch (const prism::object_lost_error& e) {
    BOOST_TEST(!e.retryable());
    BOOST_TEST(std::string{e.what()}.find("put") != std::string::npos);
  }
  // A task that takes it fails with the same cause.
  BOOST_CHECK_THROW(
      prism::get(prism::task(size_of).remote(ref), result_timeout),
      prism::object_lost_error);
  // A small put stays in its owner's memory and is never lost this way.
  auto small_put = prism::put(std::vector<char>(16, 's'));
  cluster.drop_objects(head);
  BOOST_TEST(prism::get(small_put, result_timeout).size() == 16u);
}

BOOST_AUTO_TEST_CASE(rebuilding_is_bounded_by_the_tasks_retries) {
  auto node = cluster.node(1);
  auto once = prism::task(make).node_affinity(node).max_retries(1).remote(1);
  auto never = prism::task(make).node_affinity(node).max_retries(0).remote(2);
  wait_ready(once);
  wait_ready(never);
  BOOST_TEST(cluster.drop_objects(node).value_or(0) == 2u);
  try {
    prism::get(never, result_timeout);
    BOOST_FAIL("an object whose task has no retries was rebuilt");
  } catch (const prism::reconstruction_failed_error& e) {
    BOOST_TEST(!e.retryable());
    BOOST_TEST(std::string{e.what()}.find("no retries left") !=
               std::string::npos);
  }
  // One retry: rebuilt once, then lost for good (with the copy the read
  // left in the store of the driver's node).
  BOOST_TEST(prism::get(once, result_timeout).front() == 1);
  BOOST_TEST(cluster.drop_objects(node).value_or(0) == 1u);
  BOOST_TEST(cluster.drop_objects(cluster.node(0)).value_or(0) == 1u);
  BOOST_CHECK_THROW(prism::get(once, result_timeout),
                    prism::reconstruction_failed_error);
  BOOST_TEST(make_runs.load() == 3);
}

BOOST_AUTO_TEST_CASE(a_failed_rebuild_names_its_cause) {
  auto node = cluster.node(1);
  auto ref = prism::task(make_or_throw).node_affinity(node).remote(6);
  wait_ready(ref);
  fail_next = true;
  cluster.drop_objects(node);
  try {
    prism::get(ref, result_timeout);
    BOOST_FAIL("a rebuild that threw gave a value");
  } catch (const prism::reconstruction_failed_error& e) {
    BOOST_TEST(std::string{e.what()}.find("the source of this data is gone") !=
               std::string::npos);
  }
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace lineage_test
