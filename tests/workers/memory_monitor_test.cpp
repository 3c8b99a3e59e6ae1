// A node's memory monitor: a task that allocates without bound is killed by
// the node, not by the kernel, is retried after a backoff, and fails with
// `out_of_memory_error` naming the memory in use, the threshold and the
// worker; each kill is recorded in the control store, and the node runs on.

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <prism/kv.hpp>
#include <prism/prism.hpp>
#include <prism/testing.hpp>

namespace memory_monitor_test {

constexpr std::uint64_t mib = 1024 * 1024;

/// Takes and touches 32 MiB at a time, holding all of it, up to `cap_mib`
/// (a bound the monitor must act well before); returns what it held.
std::uint64_t hog(std::uint64_t cap_mib) {
  std::vector<std::unique_ptr<char[]>> held;
  std::uint64_t taken = 0;
  while (taken < cap_mib) {
    held.emplace_back(new char[32 * mib]);
    std::memset(held.back().get(), 1, 32 * mib);
    taken += 32;
    // Time is the subject: memory grows at a pace the monitor's samples
    // (every 50 ms here) catch well before the kernel would act.
    std::this_thread::sleep_for(std::chrono::milliseconds{5});
  }
  return taken;
}

int answer() {
  return 42;
}

/// A field of /proc/meminfo, in bytes.
std::uint64_t meminfo(const std::string& key) {
  std::ifstream in{"/proc/meminfo"};
  std::string name, unit;
  std::uint64_t kib = 0;
  while (in >> name >> kib >> unit)
    if (name == key + ":")
      return kib * 1024;
  return 0;
}

} // namespace memory_monitor_test

PRISM_REMOTE(memory_monitor_test::hog, memory_monitor_test::answer);

using namespace memory_monitor_test;

BOOST_AUTO_TEST_SUITE(memory_monitor)

BOOST_AUTO_TEST_CASE(a_task_allocating_without_bound_is_killed_by_the_node) {
  // The threshold lies 1 GiB above what the host uses now; the task would
  // take up to 3 GiB (less on a small host), far past it.
  auto total = meminfo("MemTotal");
  auto available = meminfo("MemAvailable");
  BOOST_TEST_REQUIRE(total > 0);
  auto used = total - available;
  auto threshold =
      static_cast<double>(used + 1024 * mib) / static_cast<double>(total);
  auto cap_mib = std::min<std::uint64_t>(3072, (available - 512 * mib) / mib);
  BOOST_TEST_REQUIRE(cap_mib > 1536u, "the host has too little memory free");
  prism::config cfg;
  cfg.worker_processes = true;
  cfg.memory_usage_threshold = threshold;
  cfg.memory_monitor_interval_ms = 50;
  prism::testing::local_cluster cluster{{{{"CPU", 2}}}, cfg};

  auto started = std::chrono::steady_clock::now();
  auto ref = prism::task(hog).max_retries(1).remote(cap_mib);
  try {
    auto took = prism::get(ref, std::chrono::seconds{120});
    BOOST_FAIL("the task took " << took << " MiB and was never killed");
  } catch (const prism::out_of_memory_error& e) {
    std::string what = e.what();
    BOOST_TEST(what.find("memory monitor of node " + cluster.node(0).hex()) !=
                   std::string::npos,
               what);
    BOOST_TEST(what.find("past the threshold") != std::string::npos, what);
    BOOST_TEST(what.find("killed worker") != std::string::npos, what);
    BOOST_TEST(what.find("no retries are left") != std::string::npos, what);
    BOOST_TEST(e.retryable());
  }
  // Its retry waited for its backoff.
  auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - started);
  BOOST_TEST(took.count() >= 500);

  // Both kills are on record in the control store.
  auto kills = prism::kv::keys("", "prism.memory_monitor");
  BOOST_TEST(kills.size() == 2u);
  for (const auto& k : kills)
    BOOST_TEST(prism::kv::get(k, "prism.memory_monitor")
                   .value_or("")
                   .find("killed worker") != std::string::npos);

  // The node lives and runs work.
  BOOST_TEST(
      prism::get(prism::task(answer).remote(), std::chrono::seconds{60}) == 42);
}

BOOST_AUTO_TEST_SUITE_END()
