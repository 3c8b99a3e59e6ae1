// A node's object store in shared memory: a worker process on the node reads
// a stored object in place (it maps the store, it copies nothing over a
// socket), the bytes it reads stay pinned while it holds them and are let
// go when it does or when its process dies; an object past the store's
// shared memory is kept and read as before, in chunks.

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <prism/prism.hpp>
#include <prism/testing.hpp>

#include "worker_env.hpp"

using namespace std::chrono_literals;

namespace node_store_test {

/// `n` bytes that no two offsets 256 apart share by chance.
std::string patterned(int n) {
  std::string s(static_cast<std::size_t>(n), '\0');
  for (std::size_t i = 0; i < s.size(); ++i)
    s[i] = static_cast<char>((i * 7 + i / 4096) & 0xff);
  return s;
}

/// Whether this process maps a node store's shared memory.
bool maps_a_node_store() {
  std::ifstream maps{"/proc/self/maps"};
  std::stringstream text;
  text << maps.rdbuf();
  return text.str().find("prism-object-store") != std::string::npos;
}

/// Reads objects in a worker process of its own, and holds them until told
/// to forget them.
class store_reader {
public:
  static store_reader* create() {
    return new store_reader;
  }

  /// Reads the first of `refs` (a borrowed ref: read from where it is kept)
  /// and says how: "in place" or "in chunks", then "intact" or "damaged".
  std::string read(std::vector<prism::object_ref<std::string>> refs, int size) {
    held_ = refs;
    auto text = prism::get(refs.front(), std::chrono::seconds{60});
    std::string how = maps_a_node_store() ? "in place" : "in chunks";
    return how + (text == patterned(size) ? ", intact" : ", damaged");
  }

  int forget() {
    held_.clear();
    return 0;
  }

private:
  std::vector<prism::object_ref<std::string>> held_;
};

} // namespace node_store_test

PRISM_REMOTE(node_store_test::patterned);
PRISM_REMOTE(node_store_test::store_reader::create,
             &node_store_test::store_reader::read,
             &node_store_test::store_reader::forget);

namespace {

using namespace node_store_test;
using worker_test::eventually;

constexpr auto read_timeout = std::chrono::seconds{60};
constexpr int text_bytes = 3 * 1024 * 1024;

/// One node of 2 CPUs whose workers are processes, its store's shared
/// memory `store_bytes` large (0: the default).
prism::config store_node_config(std::uint64_t store_bytes = 0) {
  prism::config cfg;
  cfg.worker_processes = true;
  cfg.idle_worker_timeout_ms = 300;
  cfg.object_store_memory = store_bytes;
  return cfg;
}

} // namespace

BOOST_AUTO_TEST_SUITE(node_store_in_place)

BOOST_AUTO_TEST_CASE(a_worker_process_reads_its_nodes_store_in_place) {
  prism::testing::local_cluster cluster{{{{"CPU", 2}}}, store_node_config()};
  auto node = cluster.node(0);
  auto text = prism::task(patterned).remote(text_bytes);
  prism::wait(std::vector<prism::object_ref<std::string>>{text}, 1,
              read_timeout);
  auto usage = cluster.object_store(node);
  BOOST_TEST_REQUIRE(usage.has_value());
  BOOST_TEST(usage->objects == 1u);
  BOOST_TEST(usage->shared_bytes >= static_cast<std::size_t>(text_bytes));
  auto reader = prism::actor(store_reader::create).remote();
  auto how =
      prism::get(reader.task(&store_reader::read)
                     .remote(std::vector<prism::object_ref<std::string>>{text},
                             text_bytes),
                 read_timeout);
  BOOST_TEST(how == "in place, intact");
  // The reader holds the bytes in place: pinned until it lets go.
  BOOST_TEST(cluster.object_store(node)->mapped_reads == 1u);
  prism::get(reader.task(&store_reader::forget).remote(), read_timeout);
  BOOST_TEST(eventually(
      10s, [&] { return cluster.object_store(node)->mapped_reads == 0; }));
  // The driver, in the node's own process, reads the value itself.
  BOOST_TEST((prism::get(text, read_timeout) == patterned(text_bytes)));
}

BOOST_AUTO_TEST_CASE(a_readers_pins_go_with_its_process) {
  prism::testing::local_cluster cluster{{{{"CPU", 2}}}, store_node_config()};
  auto node = cluster.node(0);
  auto text = prism::task(patterned).remote(text_bytes);
  auto reader = prism::actor(store_reader::create).remote();
  BOOST_TEST(prism::get(reader.task(&store_reader::read)
                            .remote(std::vector{text}, text_bytes),
                        read_timeout) == "in place, intact");
  BOOST_TEST(cluster.object_store(node)->mapped_reads == 1u);
  prism::kill(reader);
  BOOST_TEST(eventually(
      10s, [&] { return cluster.object_store(node)->mapped_reads == 0; }));
  // Once nothing references it, its shared memory is free again.
  text = {};
  BOOST_TEST(eventually(10s, [&] {
    auto u = cluster.object_store(node);
    return u->objects == 0 && u->shared_bytes == 0;
  }));
}

BOOST_AUTO_TEST_CASE(
    a_read_from_another_node_is_written_into_the_readers_store) {
  prism::testing::local_cluster cluster{
      {{{"CPU", 2}, {"near", 1}}, {{"CPU", 2}, {"far", 1}}},
      store_node_config()};
  auto near = cluster.node(0);
  auto far = cluster.node(1);
  auto text = prism::task(patterned).resources({{"far", 1}}).remote(text_bytes);
  prism::wait(std::vector<prism::object_ref<std::string>>{text}, 1,
              read_timeout);
  BOOST_TEST(cluster.object_store(far)->shared_bytes >=
             static_cast<std::size_t>(text_bytes));
  auto reader =
      prism::actor(store_reader::create).resources({{"near", 1}}).remote();
  BOOST_TEST(prism::get(reader.task(&store_reader::read)
                            .remote(std::vector{text}, text_bytes),
                        read_timeout) == "in place, intact");
  // The chunks went into room in the reader's node's store, which keeps
  // them as its copy: nothing was sent to it again.
  BOOST_TEST(eventually(10s, [&] {
    auto u = cluster.object_store(near);
    return u->objects == 1 &&
           u->shared_bytes >= static_cast<std::size_t>(text_bytes);
  }));
  BOOST_TEST(cluster.object_store(near)->mapped_reads == 1u);
  prism::get(reader.task(&store_reader::forget).remote(), read_timeout);
  BOOST_TEST(eventually(
      10s, [&] { return cluster.object_store(near)->mapped_reads == 0; }));
  BOOST_TEST(cluster.object_store(near)->objects == 1u);
  // Freed, both copies go.
  text = {};
  BOOST_TEST(eventually(10s, [&] {
    auto a = cluster.object_store(near);
    auto b = cluster.object_store(far);
    return a->objects == 0 && a->shared_bytes == 0 && b->objects == 0 &&
           b->shared_bytes == 0;
  }));
}

BOOST_AUTO_TEST_CASE(objects_past_the_shared_memory_are_read_in_chunks) {
  prism::testing::local_cluster cluster{{{{"CPU", 2}}},
                                        store_node_config(1024 * 1024)};
  auto node = cluster.node(0);
  auto text = prism::task(patterned).remote(text_bytes);
  prism::wait(std::vector<prism::object_ref<std::string>>{text}, 1,
              read_timeout);
  auto usage = cluster.object_store(node);
  BOOST_TEST(usage->objects == 1u);
  BOOST_TEST(usage->shared_bytes == 0u);
  auto reader = prism::actor(store_reader::create).remote();
  BOOST_TEST(prism::get(reader.task(&store_reader::read)
                            .remote(std::vector{text}, text_bytes),
                        read_timeout) == "in chunks, intact");
  BOOST_TEST(cluster.object_store(node)->mapped_reads == 0u);
}

BOOST_AUTO_TEST_SUITE_END()
