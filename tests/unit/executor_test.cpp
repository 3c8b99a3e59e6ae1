// The thread pool that runs actors' user code: every job runs, whether its
// threads are busy, looking for work, or asleep; and a thread that blocks
// does not hold back the jobs queued behind it. Its threads, and CAF's
// scheduler threads under Prism's policy, spin for work only while spinning
// pays (`idle_gauge`).

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <ctime>
#include <mutex>
#include <thread>
#include <vector>

#include <caf/all.hpp>

#include "common/executor.hpp"
#include "common/shared_queue_policy.hpp"
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

/// The CPU time the calling thread has used.
std::chrono::nanoseconds thread_cpu() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return std::chrono::seconds{t.tv_sec} + std::chrono::nanoseconds{t.tv_nsec};
}

/// Jobs handed to a pool one at a time, far apart, each of which notes the
/// CPU time of the thread it runs on: what a pool's one thread used between
/// one job and the next is what it used waiting for the next.
struct seldom_jobs {
  static constexpr int count = 150;
  /// Between one job's end and the next job: much longer than any spin.
  static constexpr auto apart = std::chrono::milliseconds{2};

  std::mutex mu;
  std::thread::id thread;
  bool one_thread = true;
  std::chrono::nanoseconds last{-1};
  /// The CPU used between each job and the one before.
  std::vector<std::chrono::nanoseconds> waits;
  std::atomic<int> done{0};

  /// The body of each job.
  void run() {
    auto now = thread_cpu();
    {
      std::lock_guard<std::mutex> guard{mu};
      if (last.count() < 0)
        thread = std::this_thread::get_id();
      else
        waits.push_back(now - last);
      one_thread = one_thread && thread == std::this_thread::get_id();
      last = now;
    }
    ++done;
  }

  /// Hands out every job with `submit`; true if each ran, all on one thread.
  template <class Submit>
  bool hand_out(Submit submit) {
    for (int i = 1; i <= count; ++i) {
      submit();
      if (!wait_until([&] { return done == i; }))
        return false;
      // Time is the subject: the pool must find no work for a while.
      std::this_thread::sleep_for(apart);
    }
    std::lock_guard<std::mutex> guard{mu};
    return one_thread;
  }

  /// The CPU the pool's thread used per job while it waited for them: the
  /// median, as a machine busy with other work (CI runs two test programs
  /// at once) makes some waits cost more, a spin or not.
  std::chrono::nanoseconds waiting_per_job() {
    std::lock_guard<std::mutex> guard{mu};
    auto middle = waits.begin() + static_cast<std::ptrdiff_t>(waits.size() / 2);
    std::nth_element(waits.begin(), middle, waits.end());
    return *middle;
  }
};

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
  // The pool's threads spin for 50 us: a thread that spun after each job
  // would use about that much CPU per job; one that sleeps at once, a few
  // microseconds to be woken.
  prism::actors::executor pool{1, 1};
  seldom_jobs jobs;
  BOOST_REQUIRE(jobs.hand_out([&] { pool.submit([&] { jobs.run(); }); }));
  auto used = jobs.waiting_per_job();
  BOOST_TEST(used < std::chrono::microseconds{25},
             "the pool's thread used "
                 << used.count()
                 << " ns of CPU per job while it waited for the next");
}

BOOST_AUTO_TEST_CASE(a_scheduler_thread_that_gets_work_seldom_does_not_spin) {
  // CAF's scheduler threads spin for 200 us under Prism's policy.
  caf::actor_system_config cfg;
  prism::actors::use_shared_queue_scheduler(cfg);
  cfg.set("scheduler.max-threads", std::size_t{1});
  caf::actor_system sys{cfg};
  seldom_jobs jobs;
  // Spawned with an argument: CAF 0.17 binds a function actor's missing
  // arguments through a null pointer, which UBSan reports.
  auto noter = sys.spawn(
      [&](int) -> caf::behavior { return {[&](int) { jobs.run(); }}; }, 0);
  BOOST_REQUIRE(jobs.hand_out([&] { caf::anon_send(noter, 1); }));
  auto used = jobs.waiting_per_job();
  BOOST_TEST(used < std::chrono::microseconds{100},
             "the scheduler's thread used "
                 << used.count()
                 << " ns of CPU per message while it waited for the next");
  caf::anon_send_exit(noter, caf::exit_reason::user_shutdown);
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
