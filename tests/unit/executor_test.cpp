// The thread pool that runs actors' user code: every job runs, whether its
// threads are busy, looking for work, or asleep; and a thread that blocks
// does not hold back the jobs queued behind it. Its threads spin for work
// only while spinning pays (`idle_gauge`, which CAF's scheduler threads
// under Prism's policy use too).

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "common/executor.hpp"
#include "prism/internal/spin_wait.hpp"

namespace executor_test {

namespace {

using clock_type = std::chrono::steady_clock;

constexpr auto deadline = std::chrono::seconds{10};

/// Polls `condition` until it holds or the deadline passes.
template <class Condition>
bool wait_until(Condition condition) {
  auto until = clock_type::now() + deadline;
  while (!condition()) {
    if (clock_type::now() > until)
      return false;
    std::this_thread::yield();
  }
  return true;
}

} // namespace

BOOST_AUTO_TEST_SUITE(idle_gauge)

using prism::internal::idle_gauge;

constexpr auto spin_time = std::chrono::microseconds{200};
constexpr auto short_wait = std::chrono::microseconds{10};
constexpr auto long_wait = std::chrono::milliseconds{5};

BOOST_AUTO_TEST_CASE(a_thread_spins_once_a_wait_was_short_and_not_before) {
  idle_gauge gauge{spin_time};
  BOOST_TEST(!gauge.spins());
  for (int i = 0; i < 10; ++i)
    gauge.found_work_after(long_wait);
  BOOST_TEST(!gauge.spins());
  gauge.found_work_after(short_wait);
  BOOST_TEST(gauge.spins());
}

BOOST_AUTO_TEST_CASE(a_thread_stops_spinning_after_a_run_of_long_waits) {
  idle_gauge gauge{spin_time};
  for (int i = 0; i < 100; ++i)
    gauge.found_work_after(short_wait);
  BOOST_TEST(gauge.spins());
  int waits = 0;
  while (gauge.spins() && waits < 100) {
    gauge.found_work_after(long_wait);
    ++waits;
  }
  BOOST_TEST(!gauge.spins());
  // An eighth of the weight per wait: a run of long waits that outweighs
  // the short ones before it, neither one nor two.
  BOOST_TEST(waits > 2);
  BOOST_TEST(waits < 30);
}

BOOST_AUTO_TEST_CASE(a_thread_keeps_spinning_while_one_wait_in_four_is_short) {
  idle_gauge gauge{spin_time};
  for (int round = 0; round < 50; ++round) {
    gauge.found_work_after(short_wait);
    for (int i = 0; i < 3; ++i) {
      gauge.found_work_after(long_wait);
      if (round >= 10)
        BOOST_TEST_REQUIRE(gauge.spins());
    }
  }
}

BOOST_AUTO_TEST_CASE(a_pool_thread_that_gets_work_seldom_does_not_spin) {
  prism::actors::executor pool{1, 1};
  constexpr int jobs = 100;
  std::atomic<int> done{0};
  for (int i = 1; i <= jobs; ++i) {
    pool.submit([&] { ++done; });
    BOOST_REQUIRE(wait_until([&] { return done == i; }));
    // Time is the subject: the pool must find no work for longer than a
    // spin before the next job.
    std::this_thread::sleep_for(std::chrono::milliseconds{2});
  }
  // A thread that spun after every job would have spun once per job.
  BOOST_TEST(pool.num_spins() < 10u);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(executor_pool)

BOOST_AUTO_TEST_CASE(every_job_runs_when_many_threads_submit) {
  prism::actors::executor pool{2, 8};
  std::atomic<int> done{0};
  constexpr int submitters = 4;
  constexpr int per_submitter = 10'000;
  std::vector<std::thread> threads;
  for (int t = 0; t < submitters; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < per_submitter; ++i)
        pool.submit([&] { ++done; });
    });
  for (auto& t : threads)
    t.join();
  BOOST_TEST(wait_until([&] { return done == submitters * per_submitter; }));
}

BOOST_AUTO_TEST_CASE(a_job_wakes_threads_that_fell_asleep) {
  prism::actors::executor pool{2, 2};
  std::atomic<int> done{0};
  for (int round = 1; round <= 20; ++round) {
    // Idle long enough, each thread stops looking for work and sleeps: the
    // next job must wake one.
    BOOST_REQUIRE(wait_until([&] { return pool.num_sleeping() == 2; }));
    pool.submit([&] { ++done; });
    BOOST_REQUIRE(wait_until([&] { return done == round; }));
  }
}

BOOST_AUTO_TEST_CASE(a_burst_after_sleep_reaches_every_thread) {
  prism::actors::executor pool{2, 2};
  BOOST_REQUIRE(wait_until([&] { return pool.num_sleeping() == 2; }));
  // Two jobs that only finish together: both threads must be awake.
  std::mutex mu;
  std::condition_variable cv;
  int arrived = 0;
  std::atomic<int> done{0};
  auto meet = [&] {
    std::unique_lock<std::mutex> guard{mu};
    ++arrived;
    cv.notify_all();
    cv.wait_for(guard, deadline, [&] { return arrived == 2; });
    if (arrived == 2)
      ++done;
  };
  pool.submit(meet);
  pool.submit(meet);
  BOOST_TEST(wait_until([&] { return done == 2; }));
}

BOOST_AUTO_TEST_CASE(a_blocked_thread_does_not_hold_back_queued_jobs) {
  prism::actors::executor pool{1, 4};
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  std::atomic<bool> later_ran{false};
  pool.submit([&] {
    prism::actors::executor::blocking_scope blocked;
    std::unique_lock<std::mutex> guard{mu};
    cv.wait_for(guard, deadline, [&] { return release; });
  });
  pool.submit([&] { later_ran = true; });
  BOOST_TEST(wait_until([&] { return later_ran.load(); }));
  {
    std::lock_guard<std::mutex> guard{mu};
    release = true;
  }
  cv.notify_all();
}

BOOST_AUTO_TEST_CASE(
    a_thread_blocked_unannounced_does_not_hold_back_queued_jobs) {
  // The watchdog adds a thread for queued work that makes no progress: here
  // after the pool idled (so its watchdog slept), with the blocking job and
  // the one behind it submitted together.
  prism::actors::executor pool{1, 4};
  BOOST_REQUIRE(wait_until([&] { return pool.num_sleeping() == 1; }));
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  std::atomic<bool> later_ran{false};
  // It blocks until the test ends, whatever the test found.
  pool.submit([&] {
    std::unique_lock<std::mutex> guard{mu};
    cv.wait(guard, [&] { return release; });
  });
  pool.submit([&] { later_ran = true; });
  BOOST_TEST(wait_until([&] { return later_ran.load(); }));
  {
    std::lock_guard<std::mutex> guard{mu};
    release = true;
  }
  cv.notify_all();
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace executor_test
