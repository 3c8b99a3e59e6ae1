// A node's object store that is full and cannot spill (its spill directory
// cannot be made): a `put` or a task's result waits for room up to its
// deadline, then fails with `object_store_full_error`; the node lives, what
// it kept is intact, and room freed meanwhile lets a waiting `put` through.

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "cluster_fixture.hpp"

namespace store_full_test {

constexpr std::size_t mib = 1024 * 1024;

std::string blob(std::size_t n, char fill) {
  return std::string(n, fill);
}

} // namespace store_full_test

PRISM_REMOTE(store_full_test::blob);

namespace {

using namespace store_full_test;
using prism_test::result_timeout;

/// A node of 2 CPUs whose store holds 8 MiB, with a spill directory that
/// cannot be made (a file is in its place), and a `put` waiting `wait_ms`
/// for room at most.
struct full_store {
  std::string not_a_directory;
  prism::testing::local_cluster cluster;
  prism::node_id node;

  explicit full_store(std::uint32_t wait_ms)
      : not_a_directory(make_file()),
        cluster({{{"CPU", 2}}}, config(not_a_directory, wait_ms)),
        node(cluster.node(0)) {}

  ~full_store() {
    std::error_code ec;
    std::filesystem::remove(not_a_directory, ec);
  }

  static std::string make_file() {
    auto path = std::filesystem::temp_directory_path() /
                ("prism-no-spill-" + prism::unique_id::random().hex());
    std::ofstream{path} << "in the way";
    return path.string();
  }

  static prism::config config(const std::string& spill_dir,
                              std::uint32_t wait_ms) {
    prism::config cfg;
    cfg.object_store_memory = 8 * mib;
    cfg.spill_dir = spill_dir;
    cfg.object_store_full_timeout_ms = wait_ms;
    return cfg;
  }

  prism::testing::local_cluster::store_usage usage() const {
    return cluster.object_store(node).value();
  }
};

} // namespace

BOOST_AUTO_TEST_SUITE(object_store_full)

BOOST_AUTO_TEST_CASE(a_put_that_finds_no_room_fails_typed_after_its_deadline) {
  full_store s{1000};
  auto a = prism::put(blob(3 * mib, 'a'));
  auto b = prism::put(blob(3 * mib, 'b'));
  auto started = std::chrono::steady_clock::now();
  try {
    prism::put(blob(3 * mib, 'c'));
    BOOST_FAIL("a put past a full store with nowhere to spill was kept");
  } catch (const prism::object_store_full_error& e) {
    std::string what = e.what();
    BOOST_TEST(what.find(s.node.hex()) != std::string::npos, what);
    BOOST_TEST(e.retryable());
  }
  auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - started);
  BOOST_TEST(waited.count() >= 900);
  auto u = s.usage();
  BOOST_TEST(u.objects == 2u);
  BOOST_TEST(u.full_waits == 1u);
  BOOST_TEST(u.full_errors == 1u);
  BOOST_TEST(prism::get(a, result_timeout) == blob(3 * mib, 'a'));
  BOOST_TEST(prism::get(b, result_timeout) == blob(3 * mib, 'b'));
}

BOOST_AUTO_TEST_CASE(a_waiting_put_goes_on_once_room_comes_free) {
  full_store s{60'000};
  auto a = prism::put(blob(3 * mib, 'a'));
  auto b = prism::put(blob(3 * mib, 'b'));
  // Once the third put waits, the first object goes. (Joined at the end of
  // the scope if the put throws.)
  std::jthread dropper{[&] {
    prism_test::wait_until([&] { return s.usage().full_waits == 1; });
    a = {};
  }};
  auto c = prism::put(blob(3 * mib, 'c'));
  dropper.join();
  auto u = s.usage();
  BOOST_TEST(u.full_waits == 1u);
  BOOST_TEST(u.full_errors == 0u);
  BOOST_TEST(u.objects == 2u);
  BOOST_TEST(prism::get(c, result_timeout) == blob(3 * mib, 'c'));
  BOOST_TEST(prism::get(b, result_timeout) == blob(3 * mib, 'b'));
}

BOOST_AUTO_TEST_CASE(a_task_result_that_finds_no_room_fails_typed) {
  full_store s{500};
  auto a = prism::put(blob(6 * mib, 'a'));
  auto r = prism::task(blob).max_retries(0).remote(3 * mib, 'r');
  BOOST_CHECK_THROW(prism::get(r, result_timeout),
                    prism::object_store_full_error);
  BOOST_TEST(s.usage().full_errors == 1u);
  BOOST_TEST(prism::get(a, result_timeout) == blob(6 * mib, 'a'));
  // Room freed, the same task's next run keeps its result.
  a = {};
  BOOST_TEST(prism_test::wait_until([&] { return s.usage().objects == 0; }));
  auto again = prism::task(blob).max_retries(0).remote(3 * mib, 'r');
  BOOST_TEST(prism::get(again, result_timeout) == blob(3 * mib, 'r'));
}

BOOST_AUTO_TEST_SUITE_END()
