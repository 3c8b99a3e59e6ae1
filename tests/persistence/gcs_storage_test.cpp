// The control store's writer: changes commit in order and in groups, and a
// burst of changes commits in a few large groups rather than one small group
// per change.

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "gcs/gcs_storage.hpp"
#include "test_support.hpp"

namespace gcs_storage_test {

using namespace prism;
using namespace prism::persistence::testing;
using namespace std::chrono_literals;

namespace {

persistence::write_batch change(int i) {
  persistence::write_batch b;
  b.kv_put("writer", "key-" + std::to_string(i), "value");
  return b;
}

/// A store without fsync, whose commits are fast enough that a commit per
/// change would keep up with changes that come apart.
struct storage_fixture {
  temp_dir dir;
  std::shared_ptr<actors::gcs_storage> storage;
  std::mutex mu;
  std::condition_variable cv;
  /// What each report said: every change up to it is durable.
  std::vector<std::uint64_t> reports;

  storage_fixture() {
    auto opts = options_for(dir.path());
    opts.sync = false;
    storage = actors::gcs_storage::open(opts);
    storage->set_listener([this](std::uint64_t up_to, std::string failure) {
      BOOST_TEST(failure.empty());
      std::lock_guard<std::mutex> guard{mu};
      reports.push_back(up_to);
      cv.notify_all();
    });
  }

  ~storage_fixture() {
    storage->close();
  }

  /// Waits up to 10 s until change `n` is reported durable.
  bool wait_for(std::uint64_t n) {
    std::unique_lock<std::mutex> guard{mu};
    return cv.wait_for(guard, 10s,
                       [&] { return !reports.empty() && reports.back() >= n; });
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(gcs_storage_writer, storage_fixture)

// Changes 10 µs apart for 100 ms, faster than the writer commits them one by
// one: without gathering, each commit takes what queued while the one before
// ran, a few changes, and there are thousands of commits. Gathering for up to
// half a millisecond makes at most a commit or two per half millisecond.
BOOST_AUTO_TEST_CASE(a_burst_commits_in_few_groups) {
  constexpr int n = 10'000;
  auto next = std::chrono::steady_clock::now();
  for (int i = 1; i <= n; ++i) {
    storage->submit(change(i));
    next += 10us;
    while (std::chrono::steady_clock::now() < next) {
    }
  }
  BOOST_REQUIRE(wait_for(n));
  std::lock_guard<std::mutex> guard{mu};
  BOOST_TEST_MESSAGE(n << " changes committed in " << reports.size()
                       << " groups");
  // Each report covers more than the one before, up to the last change.
  for (std::size_t i = 1; i < reports.size(); ++i)
    BOOST_TEST(reports[i] > reports[i - 1]);
  BOOST_TEST(reports.back() == std::uint64_t{n});
  BOOST_TEST(reports.size() <= 500u);
}

// A lone change is not held back to gather others: it commits at once. Had
// it waited for the gathering window, none of 20 would be reported sooner.
BOOST_AUTO_TEST_CASE(a_lone_change_commits_at_once) {
  auto fastest = std::chrono::steady_clock::duration::max();
  for (int i = 1; i <= 20; ++i) {
    auto start = std::chrono::steady_clock::now();
    storage->submit(change(i));
    BOOST_REQUIRE(wait_for(static_cast<std::uint64_t>(i)));
    fastest = std::min(fastest, std::chrono::steady_clock::now() - start);
  }
  BOOST_TEST_MESSAGE(
      "the fastest lone change was reported in "
      << std::chrono::duration_cast<std::chrono::microseconds>(fastest).count()
      << " us");
  BOOST_TEST(fastest < actors::gcs_storage::gather_window);
  std::lock_guard<std::mutex> guard{mu};
  BOOST_TEST(reports.size() == 20u);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace gcs_storage_test
