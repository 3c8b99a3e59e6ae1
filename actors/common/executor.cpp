#include "common/executor.hpp"

#include <algorithm>
#include <chrono>
#include <memory>

#include "prism/internal/spin_wait.hpp"

namespace prism::actors {

namespace {

thread_local executor* current_pool = nullptr;

/// How long queued work may wait without any job starting before the
/// watchdog adds a thread.
constexpr auto stall_timeout = std::chrono::milliseconds{10};

/// How long an idle thread looks for work before it sleeps. Waking a
/// sleeping thread costs the submitter a futex call and an interrupt of the
/// other core, several microseconds on a virtual machine: more than running
/// an actor's constructor or a batch of its calls.
constexpr auto spin_time = std::chrono::microseconds{50};

} // namespace

executor::executor(std::size_t min_threads, std::size_t max_threads)
    : min_threads_(std::max(min_threads, std::size_t{1})),
      max_threads_(std::max(max_threads, min_threads_)) {
  std::lock_guard<std::mutex> guard{mu_};
  for (std::size_t i = 0; i < min_threads_; ++i)
    threads_.emplace_back([this] { run(); });
  watchdog_ = std::thread{[this] { watch(); }};
}

executor::~executor() {
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> guard{mu_};
    stopping_ = true;
    threads.swap(threads_);
  }
  cv_.notify_all();
  watch_cv_.notify_all();
  watchdog_.join();
  for (auto& t : threads)
    t.join();
}

void executor::grow_if_starved() {
  // Runnable threads are the ones neither blocked nor idle; start one more
  // when queued work has no idle thread and fewer than `min_threads_` run.
  auto runnable = threads_.size() - blocked_;
  if (!stopping_ && !jobs_.empty() && idle_ == 0 && runnable < min_threads_ &&
      threads_.size() < max_threads_)
    threads_.emplace_back([this] { run(); });
}

void executor::submit(job j) {
  std::unique_lock<std::mutex> guard{mu_};
  jobs_.push_back(std::move(j));
  queued_.fetch_add(1);
  grow_if_starved();
  bool wake = sleepers_ > 0 && spinners_.load() == 0;
  // Only work that no idle thread takes can stall.
  bool wake_watchdog = watchdog_parked_ && jobs_.size() > idle_;
  if (wake_watchdog)
    watchdog_parked_ = false;
  guard.unlock();
  if (wake)
    cv_.notify_one();
  if (wake_watchdog)
    watch_cv_.notify_one();
}

std::size_t executor::num_threads() const {
  std::lock_guard<std::mutex> guard{mu_};
  return threads_.size();
}

std::size_t executor::num_sleeping() const {
  std::lock_guard<std::mutex> guard{mu_};
  return sleepers_;
}

std::uint64_t executor::num_spins() const {
  return spins_.load(std::memory_order_relaxed);
}

executor::blocking_scope::blocking_scope() : pool_(current_pool) {
  if (pool_ == nullptr)
    return;
  std::lock_guard<std::mutex> guard{pool_->mu_};
  ++pool_->blocked_;
  pool_->grow_if_starved();
}

executor::blocking_scope::~blocking_scope() {
  if (pool_ == nullptr)
    return;
  std::lock_guard<std::mutex> guard{pool_->mu_};
  --pool_->blocked_;
}

void executor::watch() {
  std::unique_lock<std::mutex> guard{mu_};
  auto last = started_jobs_;
  while (!stopping_) {
    if (jobs_.empty()) {
      // Nothing queued: it sleeps until `submit` queues more jobs than
      // there are idle threads to take them, rather than waking every tick
      // in an idle process.
      watchdog_parked_ = true;
      watch_cv_.wait(guard, [this] { return stopping_ || !watchdog_parked_; });
      watchdog_parked_ = false;
      last = started_jobs_;
      continue;
    }
    watch_cv_.wait_for(guard, stall_timeout);
    if (stopping_)
      return;
    if (!jobs_.empty() && started_jobs_ == last && idle_ == 0 &&
        threads_.size() < max_threads_)
      threads_.emplace_back([this] { run(); });
    last = started_jobs_;
  }
}

void executor::spin(std::unique_lock<std::mutex>& guard) {
  // A thread leaves the spinners before it takes the lock to sleep: a job
  // submitted after that wakes it, one submitted before is seen under it.
  spinners_.fetch_add(1);
  spins_.fetch_add(1, std::memory_order_relaxed);
  guard.unlock();
  internal::spin_until_queued(queued_,
                              std::chrono::steady_clock::now() + spin_time);
  spinners_.fetch_sub(1);
  guard.lock();
}

void executor::run() {
  current_pool = this;
  internal::idle_gauge gauge{spin_time};
  std::unique_lock<std::mutex> guard{mu_};
  for (;;) {
    ++idle_;
    if (jobs_.empty() && !stopping_) {
      auto idle_since = internal::idle_gauge::clock::now();
      if (gauge.spins())
        spin(guard);
      ++sleepers_;
      cv_.wait(guard, [this] { return stopping_ || !jobs_.empty(); });
      --sleepers_;
      gauge.found_work_after(internal::idle_gauge::clock::now() - idle_since);
    } else {
      gauge.found_work_after({});
    }
    --idle_;
    if (jobs_.empty())
      return; // stopping, nothing left
    auto j = std::move(jobs_.front());
    jobs_.pop_front();
    queued_.fetch_sub(1);
    ++started_jobs_;
    // A job submitted while this thread spun woke no one.
    if (!jobs_.empty() && sleepers_ > 0)
      cv_.notify_one();
    guard.unlock();
    j();
    guard.lock();
  }
}

std::shared_ptr<executor> make_actor_pool() {
  /// The most threads for actor methods in one process.
  constexpr std::size_t max_actor_threads = 1024;
  return std::make_shared<executor>(
      std::max(2u, std::thread::hardware_concurrency()), max_actor_threads);
}

} // namespace prism::actors
