#pragma once

// What the chaos tests share: a thread that kills nodes of a local cluster
// and starts replacements, and the checks made once the workload is done.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "cluster_fixture.hpp"

namespace prism_chaos {

/// Kills a random node other than the head every `period`, and starts a
/// replacement with `resources` right after, until destroyed or `stop()`.
class node_killer {
public:
  node_killer(prism::testing::local_cluster& cluster,
              prism::resource_map resources, std::chrono::milliseconds period,
              std::uint32_t seed)
      : cluster_(cluster), resources_(std::move(resources)), period_(period),
        rng_(seed) {
    thread_ = std::thread{[this] { run(); }};
  }

  ~node_killer() {
    stop();
  }

  node_killer(const node_killer&) = delete;
  node_killer& operator=(const node_killer&) = delete;

  void stop() {
    {
      std::lock_guard<std::mutex> guard{mu_};
      stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable())
      thread_.join();
  }

  int kills() const {
    return kills_.load();
  }

private:
  void run() {
    for (;;) {
      {
        // The pace of the faults: one per period, or none once stopped.
        std::unique_lock<std::mutex> guard{mu_};
        if (cv_.wait_for(guard, period_, [this] { return stopping_; }))
          return;
      }
      std::vector<prism::node_id> victims;
      for (auto& n : cluster_.alive_nodes())
        if (n != cluster_.node(0))
          victims.push_back(n);
      if (!victims.empty() &&
          cluster_.kill_node(victims[rng_() % victims.size()])) {
        ++kills_;
        cluster_.add_node(resources_);
      }
    }
  }

  prism::testing::local_cluster& cluster_;
  prism::resource_map resources_;
  std::chrono::milliseconds period_;
  std::mt19937 rng_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false; // guarded by mu_
  std::atomic<int> kills_{0};
  std::thread thread_;
};

/// Waits until every live node has all of `cpus` CPUs free again; fails the
/// test with the node's figures if one does not within the deadline.
inline void expect_cpus_return_to_full(prism::testing::local_cluster& cluster,
                                       double cpus) {
  for (auto& n : cluster.alive_nodes()) {
    BOOST_TEST_CONTEXT("node " << n.hex()) {
      double free = -1;
      bool full = prism_test::wait_until([&] {
        auto r = cluster.available_resources(n);
        free = r ? (*r)["CPU"] : -1;
        return !r || free == cpus;
      });
      BOOST_TEST(full, "CPUs free: " << free << " of " << cpus);
    }
  }
}

} // namespace prism_chaos
