// The store over a failing RocksDB file system: a write the disk refuses
// surfaces as a store_error, and every write acknowledged before it is in the
// store when it is reopened on a healthy disk.

#include <boost/test/unit_test.hpp>

#include <memory>
#include <vector>

#include <rocksdb/env.h>

#include "control_store.hpp"
#include "test_support.hpp"

namespace fault_injection_test {

using namespace prism;
using namespace prism::persistence;
using namespace prism::persistence::testing;

namespace {

using kind = store_error::kind_t;

/// Writes actors from 0 until a write throws; returns how many were
/// acknowledged. Fails the test unless the failure is an io store_error.
std::uint64_t write_until_failure(control_store& store, std::uint64_t limit) {
  for (std::uint64_t i = 0; i < limit; ++i) {
    try {
      register_actor(store, sample_actor(i));
    } catch (const store_error& e) {
      BOOST_TEST_MESSAGE("write " << i << " failed: " << e.what());
      BOOST_TEST((e.kind() == kind::io));
      return i;
    }
  }
  BOOST_FAIL("no write failed");
  return limit;
}

/// Reopens on a healthy disk and checks actors [0, acked) are there, each
/// with its name, and that recovery had nothing to repair: a batch is
/// all-or-nothing even when the disk fails under it.
void expect_acknowledged(const std::string& path, std::uint64_t acked) {
  auto store = control_store::open(options_for(path));
  auto rec = store.recover();
  BOOST_TEST(rec.report.empty());
  for (std::uint64_t i = 0; i < acked; ++i) {
    auto a = store.get_actor(sample_actor_id(i));
    BOOST_REQUIRE_MESSAGE(a.has_value(), "acknowledged actor " << i << " lost");
    BOOST_TEST((*a == sample_actor(i)));
    if (!a->name.empty())
      BOOST_TEST((store.get_named_actor(a->ns, a->name) == a->actor));
  }
  BOOST_TEST(rec.tables.actors.size() >= acked);
}

/// Opens a store at `path` on `fs`.
control_store open_on(const std::string& path,
                      const std::shared_ptr<failing_fs>& fs) {
  auto opts = options_for(path);
  opts.file_system = fs;
  return control_store::open(opts);
}

} // namespace

BOOST_AUTO_TEST_SUITE(fault_injection)

BOOST_AUTO_TEST_CASE(
    failed_wal_append_surfaces_and_loses_nothing_acknowledged) {
  temp_dir dir;
  auto fs = std::make_shared<failing_fs>();
  std::uint64_t acked = 100;
  {
    auto store = open_on(dir.path(), fs);
    for (std::uint64_t i = 0; i < acked; ++i)
      register_actor(store, sample_actor(i));
    fs->fail_appends = true;
    BOOST_CHECK_THROW(register_actor(store, sample_actor(acked)), store_error);
    // The store refuses writes from now on instead of losing them.
    BOOST_CHECK_THROW(store.put_job(sample_job(1)), store_error);
    BOOST_TEST(fs->injected.load() > 0);
  }
  expect_acknowledged(dir.path(), acked);
}

BOOST_AUTO_TEST_CASE(failed_wal_sync_surfaces_and_loses_nothing_acknowledged) {
  temp_dir dir;
  auto fs = std::make_shared<failing_fs>();
  std::uint64_t acked = 100;
  {
    auto store = open_on(dir.path(), fs);
    for (std::uint64_t i = 0; i < acked; ++i)
      register_actor(store, sample_actor(i));
    fs->fail_syncs = true;
    try {
      register_actor(store, sample_actor(acked));
      BOOST_FAIL("a write whose sync failed was acknowledged");
    } catch (const store_error& e) {
      BOOST_TEST((e.kind() == kind::io));
      BOOST_TEST(std::string{e.what()}.find("injected fault") !=
                 std::string::npos);
    }
  }
  expect_acknowledged(dir.path(), acked);
}

BOOST_AUTO_TEST_CASE(disk_failing_after_n_appends_loses_nothing_acknowledged) {
  for (std::int64_t n : {0, 1, 2, 5, 13, 40, 97, 250}) {
    BOOST_TEST_CONTEXT("failing after " << n << " appends") {
      temp_dir dir;
      control_store::open(options_for(dir.path())).close();
      auto fs = std::make_shared<failing_fs>();
      std::uint64_t acked = 0;
      try {
        auto store = open_on(dir.path(), fs);
        fs->appends_left = n;
        acked = write_until_failure(store, 100'000);
      } catch (const store_error& e) {
        BOOST_TEST_MESSAGE("open failed: " << e.what());
        BOOST_TEST((e.kind() == kind::io));
      }
      expect_acknowledged(dir.path(), acked);
    }
  }
}

BOOST_AUTO_TEST_CASE(unsynced_store_loses_nothing_acknowledged_either) {
  temp_dir dir;
  auto fs = std::make_shared<failing_fs>();
  auto opts = options_for(dir.path());
  opts.file_system = fs;
  opts.sync = false;
  std::uint64_t acked = 0;
  {
    auto store = control_store::open(opts);
    fs->appends_left = 30;
    acked = write_until_failure(store, 100'000);
  }
  expect_acknowledged(dir.path(), acked);
}

BOOST_AUTO_TEST_CASE(creating_a_store_on_a_failing_disk_is_an_io_error) {
  temp_dir dir;
  auto fs = std::make_shared<failing_fs>();
  fs->fail_appends = true;
  try {
    auto store = open_on(dir.path(), fs);
    BOOST_FAIL("created a store on a disk that fails every write");
  } catch (const store_error& e) {
    BOOST_TEST_MESSAGE("refused: " << e.what());
    BOOST_TEST((e.kind() == kind::io));
  }
}

BOOST_AUTO_TEST_CASE(failing_env_is_accepted_as_an_env) {
  temp_dir dir;
  auto fs = std::make_shared<failing_fs>();
  auto env = rocksdb::NewCompositeEnv(fs);
  auto opts = options_for(dir.path());
  opts.env = env.get();
  {
    auto store = control_store::open(opts);
    register_actor(store, sample_actor(0));
    fs->fail_syncs = true;
    BOOST_CHECK_THROW(register_actor(store, sample_actor(1)), store_error);
  }
  expect_acknowledged(dir.path(), 1);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace fault_injection_test
