#include <atomic>
#include <condition_variable>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "prism/internal/thread_annotations.hpp"
#include "prism/testing.hpp"

namespace prism::testing {

struct node_killer::impl {
  local_cluster& cluster;
  resource_map replacement;
  std::chrono::milliseconds period;
  std::mt19937 rng;
  std::mutex mu;
  std::condition_variable cv;
  bool stopping GUARDED_BY(mu) = false;
  std::atomic<int> kills{0};
  std::thread thread;

  impl(local_cluster& c, resource_map r, std::chrono::milliseconds p,
       std::uint32_t seed)
      : cluster(c), replacement(std::move(r)), period(p), rng(seed) {}

  void run() {
    for (;;) {
      {
        // The pace of the faults: one per period, none once stopped.
        std::unique_lock<std::mutex> guard{mu};
        if (cv.wait_for(guard, period, [this] { return stopping; }))
          return;
      }
      std::vector<node_id> victims;
      for (auto& n : cluster.alive_nodes())
        if (n != cluster.node(0))
          victims.push_back(n);
      if (!victims.empty() &&
          cluster.kill_node(victims[rng() % victims.size()])) {
        ++kills;
        cluster.add_node(replacement);
      }
    }
  }
};

node_killer::node_killer(local_cluster& cluster, resource_map replacement,
                         std::chrono::milliseconds period, std::uint32_t seed)
    : impl_(std::make_unique<impl>(cluster, std::move(replacement), period,
                                   seed)) {
  impl_->thread = std::thread{[this] { impl_->run(); }};
}

node_killer::~node_killer() {
  stop();
}

void node_killer::stop() {
  {
    std::lock_guard<std::mutex> guard{impl_->mu};
    impl_->stopping = true;
  }
  impl_->cv.notify_all();
  if (impl_->thread.joinable())
    impl_->thread.join();
}

int node_killer::kills() const {
  return impl_->kills.load();
}

} // namespace prism::testing
