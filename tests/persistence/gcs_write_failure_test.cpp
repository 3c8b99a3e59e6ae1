// The running control store over a failing disk: a write the disk refuses
// comes back to its caller as a typed error, the control store stops serving
// what it could not make durable and its keeper starts it again from what
// is, and nothing acknowledged is lost.

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "control_store.hpp"
#include "gcs_fixture.hpp"
#include "prism/error.hpp"
#include "protocol/kv.hpp"
#include "test_support.hpp"

namespace gcs_write_failure_test {

using namespace prism;
using namespace prism::persistence::testing;
using namespace std::chrono_literals;

namespace {

const std::string ns = "failing-disk";

std::string key(int i) {
  return "key-" + std::to_string(i);
}

std::string value(int i) {
  return "value-" + std::to_string(i) + std::string(64, 'v');
}

/// The control store over a failing disk, with the writes of these tests.
struct failing_disk_gcs : gcs_on_failing_disk {
  using gcs_on_failing_disk::gcs_on_failing_disk;

  bool put(int i) {
    return ask<bool>(protocol::kv_put{ns, key(i), value(i), true, {}}, "put");
  }

  std::optional<std::string> get(int i) {
    auto r = ask<protocol::kv_value>(protocol::kv_get{ns, key(i)}, "get");
    if (!r.found)
      return std::nullopt;
    return r.value;
  }

  /// `get`, asked again while the control store is unavailable, for up to
  /// 10 s.
  std::optional<std::string> get_once_healed(int i) {
    auto deadline = std::chrono::steady_clock::now() + 10s;
    for (;;) {
      try {
        return get(i);
      } catch (const gcs_unavailable_error&) {
        if (std::chrono::steady_clock::now() >= deadline)
          throw;
      }
    }
  }
};

/// The store at `path`, opened on a healthy disk.
std::optional<std::string> stored(const std::string& path, int i) {
  auto store = persistence::control_store::open(options_for(path));
  return store.kv_get(ns, key(i));
}

} // namespace

BOOST_AUTO_TEST_SUITE(gcs_write_failure)

BOOST_AUTO_TEST_CASE(failed_write_is_an_error_and_the_gcs_restarts_durable) {
  constexpr int acked = 50;
  failing_disk_gcs gcs{10s};
  auto path = gcs.dir().path();
  for (int i = 0; i < acked; ++i)
    BOOST_TEST(!gcs.put(i));
  gcs.disk().fail_appends = true;
  try {
    gcs.put(acked);
    BOOST_FAIL("a write the disk refused was acknowledged");
  } catch (const gcs_unavailable_error& e) {
    BOOST_TEST_MESSAGE("refused: " << e.what());
    BOOST_TEST(std::string{e.what()}.find("injected fault") !=
               std::string::npos);
    BOOST_TEST(e.retryable());
  }
  BOOST_TEST(gcs.disk().injected.load() > 0);
  // The disk heals; requests made meanwhile wait for the control store that
  // the keeper starts again, and see only what is durable.
  gcs.disk().fail_appends = false;
  for (int i = 0; i < acked; ++i)
    BOOST_TEST((gcs.get(i) == value(i)));
  auto failed_value = gcs.get(acked);
  BOOST_TEST(!gcs.put(acked + 1));
  gcs.close();
  for (int i = 0; i < acked; ++i)
    BOOST_TEST((stored(path, i) == value(i)));
  BOOST_TEST((stored(path, acked + 1) == value(acked + 1)));
  // The refused write is in the store or not, and the control store said
  // the same.
  BOOST_TEST((stored(path, acked) == failed_value));
}

BOOST_AUTO_TEST_CASE(a_disk_that_stays_broken_fails_requests_after_the_wait) {
  failing_disk_gcs gcs{300ms};
  BOOST_TEST(!gcs.put(0));
  gcs.disk().fail_syncs = true;
  BOOST_CHECK_THROW(gcs.put(1), gcs_unavailable_error);
  // No control store can start on this disk: a request waits for one, then
  // fails with the same typed error.
  auto start = std::chrono::steady_clock::now();
  BOOST_CHECK_THROW(gcs.get(0), gcs_unavailable_error);
  BOOST_TEST((std::chrono::steady_clock::now() - start >= 250ms));
  gcs.disk().fail_syncs = false;
  // Healed, the disk takes a control store again once its restarts, which
  // back off, try it: a request may still time out meanwhile.
  BOOST_TEST((gcs.get_once_healed(0) == value(0)));
  BOOST_TEST(!gcs.put(2));
}

BOOST_AUTO_TEST_CASE(
    nothing_after_a_failed_commit_is_written_even_if_the_disk_heals) {
  temp_dir dir;
  auto fs = std::make_shared<failing_fs>();
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::pair<std::uint64_t, std::string>> reports;
  {
    auto opts = options_for(dir.path());
    opts.file_system = fs;
    auto storage = actors::gcs_storage::open(opts);
    storage->set_listener([&](std::uint64_t up_to, std::string failure) {
      std::lock_guard<std::mutex> guard{mu};
      reports.emplace_back(up_to, std::move(failure));
      cv.notify_all();
    });
    auto put = [&](int i) {
      persistence::write_batch b;
      b.kv_put(ns, key(i), value(i));
      return storage->submit(std::move(b));
    };
    auto wait_for = [&](std::uint64_t n) {
      std::unique_lock<std::mutex> guard{mu};
      BOOST_REQUIRE(cv.wait_for(guard, 10s, [&] {
        return !reports.empty() && reports.back().first >= n;
      }));
      return reports.back().second;
    };
    BOOST_TEST(wait_for(put(0)).empty());
    fs->fail_appends = true;
    BOOST_TEST(!wait_for(put(1)).empty());
    fs->fail_appends = false;
    // The disk works again; the store still takes nothing more.
    auto failure = wait_for(put(2));
    BOOST_TEST(failure.find("injected fault") != std::string::npos);
    storage->crash();
  }
  BOOST_TEST((stored(dir.path(), 0) == value(0)));
  BOOST_TEST(!stored(dir.path(), 2).has_value());
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace gcs_write_failure_test
