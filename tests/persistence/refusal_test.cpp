// A store of another schema version, a damaged store, or a directory that
// holds no store is refused with a clear error, and not a byte of it changes.

#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "control_store.hpp"
#include "crc32c.hpp"
#include "test_support.hpp"

namespace refusal_test {

using namespace prism;
using namespace prism::persistence;
using namespace prism::persistence::testing;

namespace {

namespace fs = std::filesystem;

using kind = store_error::kind_t;

constexpr std::uint64_t num_actors = 500;

/// A closed store with jobs, actors and kv entries in it.
void populate(const std::string& path) {
  auto store = control_store::open(options_for(path));
  store.put_job(sample_job(1));
  for (std::uint64_t i = 0; i < num_actors; ++i)
    register_actor(store, sample_actor(i));
  store.kv_put("ns", "k", "v");
  store.close();
}

/// Opens `path` and returns the kind of store_error it threw (failing the
/// test if it opened), and checks that the message mentions `needle`.
kind refusal_kind(const std::string& path, const std::string& needle,
                  store_options opts = {}) {
  opts.path = path;
  try {
    auto store = control_store::open(opts);
  } catch (const store_error& e) {
    BOOST_TEST_MESSAGE("refused: " << e.what());
    BOOST_TEST(std::string{e.what()}.find(needle) != std::string::npos,
               "message '" << e.what() << "' lacks '" << needle << "'");
    return e.kind();
  }
  BOOST_FAIL("the store was opened");
  return kind::io;
}

void set_version(const std::string& path, const std::string& version) {
  raw_store raw{path};
  raw.put("default", std::string{layout::schema_version_key}, version);
}

} // namespace

BOOST_AUTO_TEST_SUITE(refusal)

BOOST_AUTO_TEST_CASE(unknown_schema_version_is_refused_and_nothing_changes) {
  temp_dir dir;
  populate(dir.path());
  set_version(dir.path(), "2");
  auto before = fingerprint_of(dir.path());
  BOOST_TEST((refusal_kind(dir.path(), "schema version 2") ==
              kind::wrong_schema_version));
  BOOST_TEST((fingerprint_of(dir.path()) == before));
  // The refused store is whole: with its version set back, it opens.
  set_version(dir.path(), "1");
  auto store = control_store::open(options_for(dir.path()));
  auto rec = store.recover();
  BOOST_TEST(rec.tables.actors.size() == num_actors);
  BOOST_TEST(rec.report.empty());
}

BOOST_AUTO_TEST_CASE(unreadable_schema_version_is_refused_as_corrupt) {
  temp_dir dir;
  populate(dir.path());
  set_version(dir.path(), "one");
  auto before = fingerprint_of(dir.path());
  BOOST_TEST((refusal_kind(dir.path(), "schema version") == kind::corrupt));
  BOOST_TEST((fingerprint_of(dir.path()) == before));
}

BOOST_AUTO_TEST_CASE(records_without_a_schema_version_are_refused) {
  temp_dir dir;
  populate(dir.path());
  raw_store{dir.path()}.del("default", std::string{layout::schema_version_key});
  auto before = fingerprint_of(dir.path());
  BOOST_TEST((refusal_kind(dir.path(), "no schema version") == kind::corrupt));
  BOOST_TEST((fingerprint_of(dir.path()) == before));
}

BOOST_AUTO_TEST_CASE(empty_store_without_a_schema_version_gets_one) {
  // A crash between creating the store and writing its version.
  temp_dir dir;
  control_store::open(options_for(dir.path())).close();
  raw_store{dir.path()}.del("default", std::string{layout::schema_version_key});
  control_store::open(options_for(dir.path())).close();
  raw_store raw{dir.path()};
  BOOST_TEST(raw.get("default", std::string{layout::schema_version_key}) ==
             "1");
}

BOOST_AUTO_TEST_CASE(intact_log_record_that_does_not_decode_is_refused) {
  // A record whose checksum holds but whose write batch is garbage: the
  // open reads the logs' batches itself and must refuse before RocksDB
  // replays, and so writes, anything.
  temp_dir dir;
  populate(dir.path());
  auto log = file_matching(dir.path(), "", ".log");
  std::ifstream in{log, std::ios::binary};
  std::string bytes{std::istreambuf_iterator<char>{in}, {}};
  in.close();
  // Sequence 1,000,000, one write, then a write type no batch has.
  std::string batch(12, '\0');
  batch[2] = '\x0f';
  batch[3] = '\x42';
  batch[8] = 1;
  batch += "\x7f garbage";
  std::string typed = std::string(1, '\x01') + batch; // a full record
  auto c = crc32c(typed);
  auto masked = ((c >> 15) | (c << 17)) + 0xa282ead8u;
  std::string header(7, '\0');
  for (int i = 0; i < 4; ++i)
    header[i] = static_cast<char>(masked >> (8 * i));
  header[4] = static_cast<char>(batch.size() & 0xff);
  header[5] = static_cast<char>(batch.size() >> 8);
  header[6] = '\x01';
  constexpr std::size_t block = 32768;
  if (block - bytes.size() % block < header.size() + batch.size())
    bytes.append(block - bytes.size() % block, '\0');
  bytes += header + batch;
  write_file(log, bytes);
  auto before = fingerprint_of(dir.path());
  BOOST_TEST((refusal_kind(dir.path(), "does not decode") == kind::corrupt));
  BOOST_TEST((fingerprint_of(dir.path()) == before));
}

BOOST_AUTO_TEST_CASE(garbage_in_current_is_refused_and_nothing_changes) {
  temp_dir dir;
  populate(dir.path());
  write_file(fs::path{dir.path()} / "CURRENT", "\x13\x37garbage");
  auto before = fingerprint_of(dir.path());
  BOOST_TEST((refusal_kind(dir.path(), dir.path()) == kind::corrupt));
  BOOST_TEST((fingerprint_of(dir.path()) == before));
}

BOOST_AUTO_TEST_CASE(current_naming_a_missing_manifest_is_refused) {
  temp_dir dir;
  populate(dir.path());
  write_file(fs::path{dir.path()} / "CURRENT", "MANIFEST-999999\n");
  auto before = fingerprint_of(dir.path());
  BOOST_TEST((refusal_kind(dir.path(), dir.path()) == kind::corrupt));
  BOOST_TEST((fingerprint_of(dir.path()) == before));
}

BOOST_AUTO_TEST_CASE(garbage_manifest_is_refused_and_nothing_changes) {
  temp_dir dir;
  populate(dir.path());
  auto manifest = file_matching(dir.path(), "MANIFEST-");
  std::string garbage(fs::file_size(manifest), '\0');
  for (std::size_t i = 0; i < garbage.size(); ++i)
    garbage[i] = static_cast<char>(i * 131 + 7);
  write_file(manifest, garbage);
  auto before = fingerprint_of(dir.path());
  BOOST_TEST((refusal_kind(dir.path(), dir.path()) == kind::corrupt));
  BOOST_TEST((fingerprint_of(dir.path()) == before));
}

BOOST_AUTO_TEST_CASE(damaged_table_file_is_refused_and_nothing_changes) {
  temp_dir dir;
  populate(dir.path());
  raw_store{dir.path()}.flush();
  auto sst = file_matching(dir.path(), "", ".sst");
  {
    std::fstream f{sst, std::ios::in | std::ios::out | std::ios::binary};
    f.seekp(static_cast<std::streamoff>(fs::file_size(sst) / 3));
    f.write("\xde\xad\xbe\xef\xde\xad\xbe\xef", 8);
  }
  auto before = fingerprint_of(dir.path());
  BOOST_TEST((refusal_kind(dir.path(), dir.path()) == kind::corrupt));
  BOOST_TEST((fingerprint_of(dir.path()) == before));
}

BOOST_AUTO_TEST_CASE(damaged_table_file_fails_recovery_without_checks_on_open) {
  temp_dir dir;
  populate(dir.path());
  raw_store{dir.path()}.flush();
  auto sst = file_matching(dir.path(), "", ".sst");
  {
    std::fstream f{sst, std::ios::in | std::ios::out | std::ios::binary};
    f.seekp(static_cast<std::streamoff>(fs::file_size(sst) / 3));
    f.write("\xde\xad\xbe\xef\xde\xad\xbe\xef", 8);
  }
  auto opts = options_for(dir.path());
  opts.verify_checksums = false;
  auto store = control_store::open(opts);
  try {
    auto rec = store.recover();
    BOOST_FAIL("recovered from a damaged table file");
  } catch (const store_error& e) {
    BOOST_TEST_MESSAGE("refused: " << e.what());
    BOOST_TEST((e.kind() == kind::corrupt));
  }
}

BOOST_AUTO_TEST_CASE(directory_without_a_store_is_refused) {
  temp_dir dir;
  fs::create_directories(dir.path());
  write_file(fs::path{dir.path()} / "notes.txt", "not a store");
  auto before = fingerprint_of(dir.path());
  BOOST_TEST((refusal_kind(dir.path(), "no CURRENT") == kind::corrupt));
  BOOST_TEST((fingerprint_of(dir.path()) == before));
}

BOOST_AUTO_TEST_CASE(empty_directory_becomes_a_store) {
  temp_dir dir;
  fs::create_directories(dir.path());
  auto store = control_store::open(options_for(dir.path()));
  store.put_job(sample_job(1));
  BOOST_TEST(fs::exists(fs::path{dir.path()} / "CURRENT"));
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace refusal_test
