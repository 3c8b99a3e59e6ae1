// A control store whose write-ahead log was damaged after acknowledged
// writes is refused by `init`, with a typed error naming the file and the
// offset, and not a byte of it changes; a torn last record, which a crash
// leaves, is recovered.

#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "cluster_fixture.hpp"

namespace damaged_storage_test {

namespace {

namespace fs = std::filesystem;

constexpr int num_puts = 200;

struct storage_dir {
  storage_dir()
      : path((fs::temp_directory_path() /
              ("prism-damaged-" + prism::unique_id::random().hex()))
                 .string()) {}
  ~storage_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string path;
};

prism::config config_for(const std::string& path) {
  auto cfg = prism_test::make_config(1);
  cfg.storage_path = path;
  return cfg;
}

/// Puts `num_puts` keys through a cluster on `path`, with the default
/// `storage_sync`, and shuts it down.
void put_keys(const std::string& path) {
  prism_test::cluster c{config_for(path)};
  for (int i = 0; i < num_puts; ++i)
    prism::kv::put("key-" + std::to_string(i), std::to_string(i), true, "t");
}

/// The store's newest write-ahead log (the one holding the puts).
fs::path newest_log(const std::string& dir) {
  fs::path best;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".log" &&
        (best.empty() || e.file_size() >= fs::file_size(best)))
      best = e.path();
  BOOST_REQUIRE(!best.empty());
  return best;
}

std::map<std::string, std::string> files_of(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::ifstream in{e.path(), std::ios::binary};
    out[e.path().filename().string()].assign(std::istreambuf_iterator<char>{in},
                                             std::istreambuf_iterator<char>{});
  }
  return out;
}

} // namespace

BOOST_AUTO_TEST_SUITE(damaged_storage)

BOOST_AUTO_TEST_CASE(init_refuses_log_damage_followed_by_acknowledged_writes) {
  storage_dir dir;
  put_keys(dir.path);
  auto log = newest_log(dir.path);
  auto middle = fs::file_size(log) / 2;
  {
    std::fstream f{log, std::ios::in | std::ios::out | std::ios::binary};
    f.seekp(static_cast<std::streamoff>(middle));
    f.write(std::string(64, '\x5a').data(), 64);
  }
  auto before = files_of(dir.path);
  try {
    prism::init(config_for(dir.path));
    prism::shutdown();
    BOOST_FAIL("a store with acknowledged writes after log damage opened");
  } catch (const prism::storage_corrupt_error& e) {
    BOOST_TEST_MESSAGE(e.what());
    BOOST_TEST(e.path() == dir.path);
    BOOST_TEST(e.file() == log.filename().string());
    BOOST_TEST(e.offset() <= middle);
    BOOST_TEST((e.code() == prism::errc::storage_corrupt));
    BOOST_TEST(!e.retryable());
  }
  BOOST_TEST(!prism::is_initialized());
  BOOST_TEST((files_of(dir.path) == before), "the refused store changed");
}

BOOST_AUTO_TEST_CASE(init_recovers_a_torn_last_log_record) {
  storage_dir dir;
  put_keys(dir.path);
  auto log = newest_log(dir.path);
  fs::resize_file(log, fs::file_size(log) - 3);
  prism_test::cluster c{config_for(dir.path)};
  // The cut tore the last record (the last put, or a record the shutdown
  // wrote after it); every put before it is there.
  for (int i = 0; i + 1 < num_puts; ++i)
    BOOST_TEST(
        (prism::kv::get("key-" + std::to_string(i), "t") == std::to_string(i)));
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace damaged_storage_test
