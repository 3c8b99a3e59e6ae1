#pragma once

// The last hour of the cluster, kept in memory on the head for the status
// page's charts, so that the page is useful without Prometheus: tasks
// finished per second, actors by state, and the object stores' bytes.
//
// A thread of its own asks the control store every `interval` (one small
// question each time, answered from memory) and keeps `window / interval`
// samples in a ring; nothing it does waits on scheduling, and scheduling
// never waits on it.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include <caf/actor.hpp>

namespace caf {
class actor_system;
} // namespace caf

namespace prism::actors {

struct status_sample {
  /// Milliseconds since the epoch.
  std::int64_t unix_ms = 0;
  /// Task attempts that ended since the sample before, per second.
  double tasks_per_s = 0;
  std::uint64_t actors_alive = 0;
  std::uint64_t actors_pending = 0;
  std::uint64_t actors_restarting = 0;
  std::uint64_t actors_dead = 0;
  /// Over the live nodes, as their last reports said.
  std::uint64_t store_bytes = 0;
  std::uint64_t store_objects = 0;
  std::uint64_t nodes_alive = 0;
};

class status_history {
public:
  /// Samples `gcs` every `interval`, keeping `window` of them.
  status_history(caf::actor_system& sys, caf::actor gcs,
                 std::chrono::milliseconds interval = std::chrono::seconds{5},
                 std::chrono::milliseconds window = std::chrono::hours{1});

  /// Stops sampling and waits for its thread.
  ~status_history();

  status_history(const status_history&) = delete;
  status_history& operator=(const status_history&) = delete;

  /// The samples kept, oldest first.
  std::vector<status_sample> samples() const;

  std::chrono::milliseconds interval() const {
    return interval_;
  }

private:
  void run();
  /// Asks once; false if the control store did not answer.
  bool sample_once();

  caf::actor_system& sys_;
  caf::actor gcs_;
  std::chrono::milliseconds interval_;
  std::size_t capacity_;
  mutable std::mutex mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::deque<status_sample> samples_;
  /// The attempts that had ended at the sample before, and when.
  std::uint64_t last_ended_ = 0;
  std::chrono::steady_clock::time_point last_at_{};
  bool have_last_ = false;
  std::thread thread_;
};

} // namespace prism::actors
