#pragma once

// Fixtures and helpers shared by the integration tests. Every test case gets
// a fresh embedded cluster, and every wait is bounded, so that a broken
// runtime fails a test instead of hanging the suite.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "prism/prism.hpp"
#include "prism/testing.hpp"

namespace prism_test {

/// How long a test waits for a result before it fails instead of hanging.
inline constexpr std::chrono::milliseconds result_timeout{30'000};

/// Returns a config for an embedded node with `num_cpus` CPUs and `resources`.
inline prism::config make_config(double num_cpus,
                                 prism::resource_map resources = {}) {
  prism::config cfg;
  cfg.num_cpus = num_cpus;
  cfg.resources = std::move(resources);
  return cfg;
}

/// An embedded cluster that lives as long as this object: `prism::init` in the
/// constructor, `prism::shutdown` in the destructor.
class cluster {
public:
  explicit cluster(const prism::config& cfg) {
    prism::init(cfg);
  }

  ~cluster() {
    prism::shutdown();
  }

  cluster(const cluster&) = delete;
  cluster& operator=(const cluster&) = delete;
};

/// Boost fixture: a fresh cluster whose one node has `NumCpus` CPUs.
template <int NumCpus>
struct cpus_fixture : cluster {
  cpus_fixture() : cluster(make_config(NumCpus)) {}
};

/// Boost fixture: a fresh cluster with the default two CPUs.
using cluster_fixture = cpus_fixture<2>;

/// Returns true once `condition()` holds, or false if `deadline` passes first.
template <class Condition>
bool wait_until(Condition condition,
                std::chrono::milliseconds deadline = result_timeout) {
  auto until = std::chrono::steady_clock::now() + deadline;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= until)
      return condition();
    std::this_thread::sleep_for(std::chrono::milliseconds{2});
  }
  return true;
}

/// Counts, in `counter`, the task or actor bodies that have not returned
/// yet. A body on a killed worker runs to its end inside this process, so a
/// test waits for the count to reach 0 before its cluster shuts down.
class in_flight_scope {
public:
  explicit in_flight_scope(std::atomic<int>& counter) : counter_(counter) {
    ++counter_;
  }
  ~in_flight_scope() {
    --counter_;
  }
  in_flight_scope(const in_flight_scope&) = delete;
  in_flight_scope& operator=(const in_flight_scope&) = delete;

private:
  std::atomic<int>& counter_;
};

/// Returns the message of the `actor_died_error` that getting `ref` throws,
/// or nothing if the call returned. Other errors propagate to the test.
template <class T>
std::optional<std::string>
actor_died_message(const prism::object_ref<T>& ref,
                   std::chrono::milliseconds timeout = result_timeout) {
  try {
    prism::get(ref, timeout);
  } catch (const prism::actor_died_error& e) {
    return std::string{e.what()};
  }
  return std::nullopt;
}

/// Like `actor_died_message(ref)`, for a ref of a call made through `job`.
template <class T>
std::optional<std::string>
actor_died_message(const prism::client& job, const prism::object_ref<T>& ref,
                   std::chrono::milliseconds timeout = result_timeout) {
  try {
    job.get(ref, timeout);
  } catch (const prism::actor_died_error& e) {
    return std::string{e.what()};
  }
  return std::nullopt;
}

/// Lets tasks show that they run at the same time: each one arrives and waits
/// until `expected` tasks have arrived. A task returns false if the others do
/// not arrive before the deadline, so a runtime that runs them one after the
/// other fails the test instead of hanging it.
class rendezvous {
public:
  void reset(int expected) {
    expected_ = expected;
    arrived_ = 0;
  }

  bool arrive_and_wait(
      std::chrono::milliseconds deadline = std::chrono::milliseconds{10'000}) {
    ++arrived_;
    return wait_until([this] { return arrived_.load() >= expected_.load(); },
                      deadline);
  }

private:
  std::atomic<int> expected_{0};
  std::atomic<int> arrived_{0};
};

/// Counts how many tasks are inside a section at once, and the most it saw.
class concurrency_gauge {
public:
  void reset() {
    inside_ = 0;
    peak_ = 0;
  }

  /// Marks the calling task as inside the section until the scope ends.
  class scope {
  public:
    explicit scope(concurrency_gauge& gauge) : gauge_(gauge) {
      auto now = ++gauge_.inside_;
      auto peak = gauge_.peak_.load();
      while (now > peak && !gauge_.peak_.compare_exchange_weak(peak, now)) {
        // `peak` now holds the latest value; try again.
      }
    }

    ~scope() {
      --gauge_.inside_;
    }

    scope(const scope&) = delete;
    scope& operator=(const scope&) = delete;

  private:
    concurrency_gauge& gauge_;
  };

  int peak() const {
    return peak_.load();
  }

private:
  std::atomic<int> inside_{0};
  std::atomic<int> peak_{0};
};

} // namespace prism_test
