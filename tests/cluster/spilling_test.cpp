// A node whose store holds 256 MB, in a process of its own: a driver puts
// eight times that in 1 MB and 64 MB pieces, tasks return 64 MB results
// there too, and every byte reads back as written. The node's memory stays
// within its store's bound and a stated overhead while it spills; the
// spill files go once the refs are dropped.

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

#include <prism/prism.hpp>

#include "prism_command.hpp"

namespace spilling_test {

using namespace prism::cluster_test;

constexpr auto result_timeout = std::chrono::seconds{120};
constexpr std::uint64_t mib = 1024 * 1024;
constexpr std::uint64_t store_bytes = 256 * mib;

/// `n` bytes (a multiple of 8) whose every word names `seed` and its place.
std::string pattern(std::uint64_t n, std::uint64_t seed) {
  std::string s(n, '\0');
  auto* words = reinterpret_cast<std::uint64_t*>(s.data());
  for (std::uint64_t i = 0; i < n / 8; ++i)
    words[i] = (seed << 40) | i;
  return s;
}

/// Whether `s` is `pattern(s.size(), seed)`.
bool is_pattern(const std::string& s, std::uint64_t seed) {
  const auto* words = reinterpret_cast<const std::uint64_t*>(s.data());
  for (std::uint64_t i = 0; i < s.size() / 8; ++i)
    if (words[i] != ((seed << 40) | i))
      return false;
  return true;
}

/// A task's large result.
std::string made_in_a_task(std::uint64_t n, std::uint64_t seed) {
  return pattern(n, seed);
}

/// The resident memory of process `pid`, in bytes.
std::uint64_t rss_of(int pid) {
  std::ifstream status{"/proc/" + std::to_string(pid) + "/status"};
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0)
      return std::stoull(line.substr(6)) * 1024;
  return 0;
}

/// The spill files in `dir`, and their bytes.
std::pair<std::size_t, std::uint64_t> spill_files_in(const std::string& dir) {
  std::size_t files = 0;
  std::uint64_t bytes = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator{dir, ec})
    if (e.path().extension() == ".spill") {
      ++files;
      bytes += e.file_size(ec);
    }
  return {files, bytes};
}

/// The spill files in `dir` of nodes other than `node`.
std::size_t spill_files_not_of(const std::string& dir,
                               const std::string& node) {
  std::size_t files = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator{dir, ec}) {
    auto name = e.path().filename().string();
    if (e.path().extension() == ".spill" &&
        name.rfind("prism-" + node + "-", 0) != 0)
      ++files;
  }
  return files;
}

/// How many bytes the driver puts: 2 GB, or `PRISM_SPILL_TEST_MB`.
std::uint64_t bytes_to_put() {
  const char* env = std::getenv("PRISM_SPILL_TEST_MB");
  return (env != nullptr ? std::strtoull(env, nullptr, 10) : 2048) * mib;
}

} // namespace spilling_test

PRISM_REMOTE(spilling_test::made_in_a_task);

using namespace spilling_test;

BOOST_AUTO_TEST_SUITE(cluster_spilling)

BOOST_AUTO_TEST_CASE(a_driver_puts_eight_stores_worth_and_reads_every_byte) {
  auto o = attached_cluster(0);
  auto spill_dir = std::filesystem::temp_directory_path() /
                   ("prism-spill-" + prism::unique_id::random().hex());
  o.flags = {"--object-store-memory", std::to_string(store_bytes),
             "--spill-dir", spill_dir.string()};
  process_cluster cluster{o};
  auto node = cluster.node_pid(0);
  auto before = rss_of(node);
  BOOST_TEST_MESSAGE("node RSS before: " << before / mib << " MiB");

  // Half in 1 MB pieces, half in 64 MB pieces.
  auto total = bytes_to_put();
  std::vector<prism::object_ref<std::string>> refs;
  std::vector<std::uint64_t> sizes;
  std::uint64_t put = 0, peak = before;
  while (put < total) {
    auto n = put < total / 2 ? mib : 64 * mib;
    refs.push_back(prism::put(pattern(n, refs.size())));
    sizes.push_back(n);
    put += n;
    peak = std::max(peak, rss_of(node));
  }
  // Task results made in worker processes spill too.
  for (int i = 0; i < 4; ++i) {
    refs.push_back(prism::task(made_in_a_task).remote(64 * mib, refs.size()));
    sizes.push_back(64 * mib);
  }
  prism::wait(refs, static_cast<int>(refs.size()), result_timeout);
  peak = std::max(peak, rss_of(node));
  auto [files, on_disk] = spill_files_in(spill_dir.string());
  BOOST_TEST_MESSAGE("spilled: " << files << " files, " << on_disk / mib
                                 << " MiB");
  BOOST_TEST(on_disk >= total - store_bytes);

  // Every byte, read back in the order it was written: most from disk.
  for (std::size_t i = 0; i < refs.size(); ++i) {
    auto value = prism::get(refs[i], result_timeout);
    BOOST_TEST_REQUIRE(value.size() == sizes[i]);
    BOOST_TEST_REQUIRE(is_pattern(value, i), "object " << i << " differs");
    peak = std::max(peak, rss_of(node));
  }

  // The node's memory: its store, its own before, and a stated overhead
  // for values on their way in (a 64 MB message and its decoded copy);
  // under AddressSanitizer also its quarantine, which holds freed memory
  // back (256 MB by default).
  std::uint64_t overhead = 256 * mib;
#if defined(__SANITIZE_ADDRESS__)
  overhead += 256 * mib;
#endif
  BOOST_TEST_MESSAGE("node RSS peak: " << peak / mib << " MiB");
  BOOST_TEST(peak <= before + store_bytes + overhead,
             "peak " << peak / mib << " MiB, before " << before / mib
                     << " MiB");

  refs.clear();
  BOOST_TEST(eventually(std::chrono::seconds{30}, [&] {
    return spill_files_in(spill_dir.string()).first == 0;
  }));
  BOOST_TEST(cluster.sanitizer_reports() == "");
  std::error_code ec;
  std::filesystem::remove_all(spill_dir, ec);
}

// Results spilled on another node are read from its spill files by the
// driver; once that node is killed, the next node to start on the same
// spill directory deletes what it left.
BOOST_AUTO_TEST_CASE(spilled_results_are_read_across_nodes_and_swept_after) {
  auto o = attached_cluster(0);
  auto spill_dir = std::filesystem::temp_directory_path() /
                   ("prism-spill-" + prism::unique_id::random().hex());
  o.flags = {"--object-store-memory", std::to_string(64 * mib), "--spill-dir",
             spill_dir.string()};
  process_cluster cluster{o};
  cluster.add_node({"--resources", R"({"far": 2})"});
  auto head = prism::get_runtime_context().node.hex();

  // Made on the far node, three times its store: most spill there.
  std::vector<prism::object_ref<std::string>> refs;
  for (std::uint64_t i = 0; i < 6; ++i)
    refs.push_back(prism::task(made_in_a_task)
                       .resources({{"far", 1}})
                       .remote(32 * mib, i));
  prism::wait(refs, static_cast<int>(refs.size()), result_timeout);
  BOOST_TEST(spill_files_not_of(spill_dir.string(), head) > 0u);
  for (std::size_t i = 0; i < refs.size(); ++i)
    BOOST_TEST(is_pattern(prism::get(refs[i], result_timeout), i),
               "object " << i << " differs");

  // Killed, the far node leaves its files; the next node deletes them.
  cluster.kill_node(1);
  BOOST_TEST(spill_files_not_of(spill_dir.string(), head) > 0u);
  cluster.add_node({"--resources", R"({"far": 2})"});
  BOOST_TEST(eventually(std::chrono::seconds{30}, [&] {
    return spill_files_not_of(spill_dir.string(), head) == 0;
  }));
  BOOST_TEST(cluster.sanitizer_reports() == "");
  refs.clear();
  std::error_code ec;
  std::filesystem::remove_all(spill_dir, ec);
}

BOOST_AUTO_TEST_SUITE_END()
