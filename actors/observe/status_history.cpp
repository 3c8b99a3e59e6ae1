#include "observe/status_history.hpp"

#include <algorithm>
#include <optional>

#include <caf/all.hpp>

#include "observe/asking.hpp"
#include "protocol/metrics.hpp"

namespace prism::actors {

status_history::status_history(caf::actor_system& sys, caf::actor gcs,
                               std::chrono::milliseconds interval,
                               std::chrono::milliseconds window)
    : sys_(sys), gcs_(std::move(gcs)),
      interval_(std::max(interval, std::chrono::milliseconds{1})),
      capacity_(static_cast<std::size_t>(
          std::max<std::int64_t>(1, window / interval_))) {
  thread_ = std::thread{[this] { run(); }};
}

status_history::~status_history() {
  {
    std::lock_guard<std::mutex> guard{mu_};
    stopping_ = true;
  }
  stop_cv_.notify_all();
  thread_.join();
}

std::vector<status_sample> status_history::samples() const {
  std::lock_guard<std::mutex> guard{mu_};
  return {samples_.begin(), samples_.end()};
}

void status_history::run() {
  for (;;) {
    sample_once();
    std::unique_lock<std::mutex> guard{mu_};
    if (stop_cv_.wait_for(guard, interval_, [this] { return stopping_; }))
      return;
  }
}

bool status_history::sample_once() {
  // Each question is answered from the control store's memory; a control
  // store that is restarting leaves a gap, not a wrong figure.
  auto timeout = std::min(interval_, std::chrono::milliseconds{2000});
  auto control = ask_within<protocol::control_metrics>(
      sys_, gcs_, protocol::query_control_metrics{}, timeout);
  auto tasks = ask_within<protocol::task_metrics>(
      sys_, gcs_, protocol::query_task_metrics{}, timeout);
  if (!control || !tasks)
    return false;
  status_sample s;
  s.unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::system_clock::now().time_since_epoch())
                  .count();
  for (const auto& c : control->actors) {
    if (c.state == "ALIVE")
      s.actors_alive += c.n;
    else if (c.state == "DEAD")
      s.actors_dead += c.n;
    else if (c.state == "RESTARTING")
      s.actors_restarting += c.n;
    else
      s.actors_pending += c.n;
  }
  for (const auto& n : control->nodes)
    if (n.state == "ALIVE") {
      ++s.nodes_alive;
      s.store_bytes += n.object_bytes;
      s.store_objects += n.objects;
    }
  auto now = std::chrono::steady_clock::now();
  auto ended = tasks->running.count;
  if (have_last_ && ended >= last_ended_) {
    auto seconds = std::chrono::duration<double>(now - last_at_).count();
    if (seconds > 0)
      s.tasks_per_s = static_cast<double>(ended - last_ended_) / seconds;
  }
  last_ended_ = ended;
  last_at_ = now;
  have_last_ = true;
  std::lock_guard<std::mutex> guard{mu_};
  samples_.push_back(s);
  while (samples_.size() > capacity_)
    samples_.pop_front();
  return true;
}

} // namespace prism::actors
