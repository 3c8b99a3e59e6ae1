// Damage to each kind of file of a store, in the middle and at the tail:
// the write-ahead log, the MANIFEST, CURRENT and a table file. Damage that a
// crash can leave (a torn last log record, never acknowledged) is recovered;
// any other damage is refused and not a byte of the store changes. Then the
// operator's path: `check_store` says what a repair drops, `repair_store`
// drops it after a backup, and the `prism store` command does both.

#include <boost/test/unit_test.hpp>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <sys/wait.h>

#include <rocksdb/db.h>

#include "control_store.hpp"
#include "store_check.hpp"
#include "test_support.hpp"

namespace damaged_files_test {

using namespace prism;
using namespace prism::persistence;
using namespace prism::persistence::testing;

namespace {

namespace fs = std::filesystem;
using kind = store_error::kind_t;

constexpr int num_keys = 200;

std::string key_of(int i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "key-%03d", i);
  return buf;
}

/// A closed store holding `num_keys` acknowledged kv entries, written one
/// by one as `kv::put` writes them.
void populate(const std::string& path) {
  auto store = control_store::open(options_for(path));
  for (int i = 0; i < num_keys; ++i)
    store.kv_put("ns", key_of(i), "value-" + std::to_string(i));
  store.close();
}

/// XORs `n` bytes of `p` from offset `at` with 0xff.
void flip(const fs::path& p, std::uintmax_t at, std::size_t n) {
  std::fstream f{p, std::ios::in | std::ios::out | std::ios::binary};
  std::string bytes(n, '\0');
  f.seekg(static_cast<std::streamoff>(at));
  f.read(bytes.data(), static_cast<std::streamsize>(n));
  for (auto& c : bytes)
    c = static_cast<char>(c ^ 0xff);
  f.seekp(static_cast<std::streamoff>(at));
  f.write(bytes.data(), static_cast<std::streamsize>(n));
}

/// Cuts the last `n` bytes off `p`.
void cut(const fs::path& p, std::uintmax_t n) {
  fs::resize_file(p, fs::file_size(p) - n);
}

fs::path newest_log(const std::string& dir) {
  return file_matching(dir, "", ".log");
}

/// Opening `path` is refused as corrupt, and the store is byte for byte as
/// it was. Returns the error.
store_error expect_refused(const std::string& path) {
  auto before = fingerprint_of(path);
  try {
    auto store = control_store::open(options_for(path));
  } catch (const store_error& e) {
    BOOST_TEST_MESSAGE("refused: " << e.what());
    BOOST_TEST((e.kind() == kind::corrupt));
    BOOST_TEST((fingerprint_of(path) == before), "the store changed");
    return e;
  }
  BOOST_FAIL("the damaged store was opened");
  return store_error(kind::io, "unreachable");
}

/// The keys of `ns` in an opened and recovered store.
std::set<std::string> keys_after_open(const std::string& path) {
  auto store = control_store::open(options_for(path));
  auto rec = store.recover();
  auto keys = store.kv_keys("ns", "");
  return {keys.begin(), keys.end()};
}

/// The keys `0` to `n - 1`.
std::set<std::string> first_keys(int n) {
  std::set<std::string> out;
  for (int i = 0; i < n; ++i)
    out.insert(key_of(i));
  return out;
}

/// The MANIFEST that CURRENT names.
fs::path current_manifest(const std::string& dir) {
  std::ifstream in{fs::path{dir} / "CURRENT"};
  std::string name;
  std::getline(in, name);
  return fs::path{dir} / name;
}

/// A store whose newest log has 64 flipped bytes in its middle.
void damage_log_middle(const std::string& path) {
  populate(path);
  auto log = newest_log(path);
  flip(log, fs::file_size(log) / 2, 64);
}

/// Runs `cmd` and returns its exit status and output.
std::pair<int, std::string> run(const std::string& cmd) {
  std::string out;
  auto* pipe = ::popen((cmd + " 2>&1").c_str(), "r");
  BOOST_REQUIRE(pipe != nullptr);
  std::array<char, 4096> buf;
  while (auto n = std::fread(buf.data(), 1, buf.size(), pipe))
    out.append(buf.data(), n);
  auto status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

bool contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

} // namespace

BOOST_AUTO_TEST_SUITE(damaged_files)

BOOST_AUTO_TEST_CASE(log_damage_followed_by_acknowledged_writes_is_refused) {
  temp_dir dir;
  populate(dir.path());
  auto log = newest_log(dir.path());
  auto middle = fs::file_size(log) / 2;
  flip(log, middle, 64);
  auto e = expect_refused(dir.path());
  BOOST_TEST(e.file() == log.filename().string());
  BOOST_TEST(e.offset() <= middle);
  BOOST_TEST(e.offset() + 200 > middle, "the damage is near " << middle);
  BOOST_TEST(contains(e.what(), log.filename().string()));
  BOOST_TEST(contains(e.what(), "offset " + std::to_string(e.offset())));
}

BOOST_AUTO_TEST_CASE(torn_last_log_record_is_dropped_and_earlier_writes_kept) {
  temp_dir dir;
  populate(dir.path());
  cut(newest_log(dir.path()), 5);
  // The last put's record was cut short: a crash in its write, which was
  // never acknowledged. Everything before it is there.
  BOOST_TEST((keys_after_open(dir.path()) == first_keys(num_keys - 1)));
}

BOOST_AUTO_TEST_CASE(garbage_in_the_last_log_record_is_dropped) {
  temp_dir dir;
  populate(dir.path());
  auto log = newest_log(dir.path());
  flip(log, fs::file_size(log) - 4, 4);
  BOOST_TEST((keys_after_open(dir.path()) == first_keys(num_keys - 1)));
}

BOOST_AUTO_TEST_CASE(torn_older_log_followed_by_the_next_writes_is_opened) {
  // A crash tore the last record of a log; RocksDB recovered the store
  // without flushing it, so that log stays, and new writes went on in a
  // newer log, with the sequence numbers after the last intact record.
  temp_dir dir;
  populate(dir.path());
  auto old_log = newest_log(dir.path());
  cut(old_log, 5);
  {
    rocksdb::Options o;
    o.avoid_flush_during_recovery = true;
    o.wal_recovery_mode = rocksdb::WALRecoveryMode::kPointInTimeRecovery;
    std::vector<std::string> names;
    BOOST_REQUIRE(rocksdb::DB::ListColumnFamilies(o, dir.path(), &names).ok());
    std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
    for (const auto& n : names)
      cfs.emplace_back(n, rocksdb::ColumnFamilyOptions{o});
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DB* db = nullptr;
    BOOST_REQUIRE(rocksdb::DB::Open(o, dir.path(), cfs, &handles, &db).ok());
    rocksdb::WriteOptions wo;
    wo.sync = true;
    for (std::size_t i = 0; i < names.size(); ++i)
      if (names[i] == "kv")
        BOOST_REQUIRE(db->Put(wo, handles[i],
                              layout::scoped_key("ns", "after-the-crash"), "v")
                          .ok());
    for (auto* h : handles)
      db->DestroyColumnFamilyHandle(h);
    BOOST_REQUIRE(db->Close().ok());
    delete db;
  }
  BOOST_REQUIRE(fs::exists(old_log));
  auto found = check_store(dir.path());
  BOOST_TEST(found.sound());
  BOOST_TEST(found.logs.harmless.size() == 1u);
  auto keys = keys_after_open(dir.path());
  BOOST_TEST(keys.count("after-the-crash") == 1u);
  BOOST_TEST(keys.count(key_of(num_keys - 2)) == 1u);
}

BOOST_AUTO_TEST_CASE(manifest_damage_in_the_middle_is_refused) {
  temp_dir dir;
  populate(dir.path());
  auto manifest = current_manifest(dir.path());
  flip(manifest, fs::file_size(manifest) / 2, 8);
  expect_refused(dir.path());
}

BOOST_AUTO_TEST_CASE(manifest_damage_at_the_tail_is_refused) {
  temp_dir dir;
  populate(dir.path());
  auto manifest = current_manifest(dir.path());
  flip(manifest, fs::file_size(manifest) - 4, 4);
  expect_refused(dir.path());
}

BOOST_AUTO_TEST_CASE(current_cut_at_the_tail_is_refused) {
  temp_dir dir;
  populate(dir.path());
  cut(fs::path{dir.path()} / "CURRENT", 1); // its newline
  expect_refused(dir.path());
}

BOOST_AUTO_TEST_CASE(current_damaged_in_the_middle_is_refused) {
  temp_dir dir;
  populate(dir.path());
  auto current = fs::path{dir.path()} / "CURRENT";
  flip(current, fs::file_size(current) / 2, 1);
  expect_refused(dir.path());
}

BOOST_AUTO_TEST_CASE(table_file_damage_at_the_tail_is_refused) {
  temp_dir dir;
  populate(dir.path());
  raw_store{dir.path()}.flush();
  auto sst = file_matching(dir.path(), "", ".sst");
  flip(sst, fs::file_size(sst) - 8, 8); // the footer's magic number
  expect_refused(dir.path());
}

BOOST_AUTO_TEST_CASE(table_file_damage_in_the_middle_is_refused) {
  temp_dir dir;
  populate(dir.path());
  raw_store{dir.path()}.flush();
  auto sst = file_matching(dir.path(), "", ".sst");
  flip(sst, fs::file_size(sst) / 3, 8);
  expect_refused(dir.path());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(store_repair)

BOOST_AUTO_TEST_CASE(
    check_lists_the_writes_after_log_damage_and_changes_nothing) {
  temp_dir dir;
  damage_log_middle(dir.path());
  auto before = fingerprint_of(dir.path());
  auto found = check_store(dir.path());
  BOOST_TEST(!found.sound());
  BOOST_TEST(found.repairable());
  std::vector<std::string> listed;
  for (const auto& b : found.logs.after_damage)
    for (const auto& w : b.writes) {
      BOOST_TEST(w.table == "kv");
      BOOST_TEST(w.op == "put");
      listed.push_back(show_key(w.table, w.key));
    }
  // What follows the damage is the tail of the puts, up to the last one.
  BOOST_REQUIRE(!listed.empty());
  BOOST_TEST(listed.back() == "ns/" + key_of(num_keys - 1));
  BOOST_TEST(listed.size() < static_cast<std::size_t>(num_keys));
  BOOST_TEST((fingerprint_of(dir.path()) == before));
}

BOOST_AUTO_TEST_CASE(repair_keeps_every_write_before_the_damage) {
  temp_dir dir;
  damage_log_middle(dir.path());
  auto before = fingerprint_of(dir.path());
  auto found = check_store(dir.path());
  auto backup = dir.path() + ".backup";
  auto done = repair_store(dir.path(), backup);
  BOOST_TEST(done.backup == backup);
  BOOST_TEST(done.dropped.size() == found.logs.after_damage.size());
  // The backup holds the store as it was, damage included.
  BOOST_TEST((fingerprint_of(backup) == before));
  auto keys = keys_after_open(dir.path());
  // Every write before the damage, none of those the check listed, and
  // none of the few whose records the 64 damaged bytes hit.
  auto kept = static_cast<int>(keys.size());
  auto first_listed = num_keys - static_cast<int>(done.dropped.size());
  BOOST_TEST((keys == first_keys(kept)));
  BOOST_TEST(kept < first_listed);
  BOOST_TEST(kept + 4 >= first_listed);
  BOOST_TEST(check_store(dir.path()).sound());
  fs::remove_all(backup);
}

BOOST_AUTO_TEST_CASE(repair_refuses_damage_outside_the_logs) {
  temp_dir dir;
  populate(dir.path());
  raw_store{dir.path()}.flush();
  auto sst = file_matching(dir.path(), "", ".sst");
  flip(sst, fs::file_size(sst) / 3, 8);
  auto before = fingerprint_of(dir.path());
  auto backup = dir.path() + ".backup";
  BOOST_CHECK_EXCEPTION(
      repair_store(dir.path(), backup), store_error,
      [](const store_error& e) { return e.kind() == kind::corrupt; });
  BOOST_TEST((fingerprint_of(dir.path()) == before));
  BOOST_TEST(!fs::exists(backup));
}

BOOST_AUTO_TEST_CASE(repair_of_a_sound_store_changes_nothing) {
  temp_dir dir;
  populate(dir.path());
  auto before = fingerprint_of(dir.path());
  auto done = repair_store(dir.path(), dir.path() + ".backup");
  BOOST_TEST(done.backup.empty());
  BOOST_TEST((fingerprint_of(dir.path()) == before));
}

BOOST_AUTO_TEST_CASE(the_prism_command_checks_then_repairs_a_store) {
  temp_dir dir;
  damage_log_middle(dir.path());
  auto before = fingerprint_of(dir.path());
  std::string tool = PRISM_TOOL_PATH;
  auto [check_status, check_out] = run(tool + " store check " + dir.path());
  BOOST_TEST_MESSAGE(check_out);
  BOOST_TEST(check_status == 1);
  BOOST_TEST(contains(check_out, "would drop"));
  BOOST_TEST(contains(check_out, "put kv ns/" + key_of(num_keys - 1)));
  auto [dry_status, dry_out] = run(tool + " store repair " + dir.path());
  BOOST_TEST(dry_status == 1);
  BOOST_TEST(contains(dry_out, "nothing was changed"));
  BOOST_TEST((fingerprint_of(dir.path()) == before));
  auto backup = dir.path() + ".backup";
  auto [status, out] =
      run(tool + " store repair --apply --backup " + backup + " " + dir.path());
  BOOST_TEST_MESSAGE(out);
  BOOST_TEST(status == 0);
  BOOST_TEST(contains(out, "opens now"));
  BOOST_TEST(run(tool + " store check " + dir.path()).first == 0);
  fs::remove_all(backup);
}

BOOST_AUTO_TEST_CASE(the_prism_command_tells_a_missing_store) {
  temp_dir dir;
  auto [status, out] =
      run(std::string{PRISM_TOOL_PATH} + " store check " + dir.path());
  BOOST_TEST(status == 2);
  BOOST_TEST(contains(out, "no control store"));
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace damaged_files_test
