#include "gcs/gcs_storage.hpp"

#include <chrono>
#include <utility>

#include "common/log.hpp"

namespace prism::actors {

std::shared_ptr<gcs_storage> gcs_storage::open(const std::string& path,
                                               bool sync) {
  persistence::store_options opts;
  opts.path = path;
  opts.sync = sync;
  return open(opts);
}

std::shared_ptr<gcs_storage>
gcs_storage::open(const persistence::store_options& opts) {
  auto store = persistence::control_store::open(opts);
  auto recovered = store.recover();
  std::shared_ptr<gcs_storage> result{
      new gcs_storage(std::move(store), opts.path)};
  result->recovered_ = std::move(recovered);
  return result;
}

gcs_storage::gcs_storage(persistence::control_store store, std::string path)
    : path_(std::move(path)), store_(std::move(store)) {
  writer_ = std::thread{[this] { run(); }};
}

gcs_storage::~gcs_storage() {
  stop(true);
}

persistence::recovery gcs_storage::take_recovered() {
  return std::move(recovered_);
}

void gcs_storage::set_listener(listener l) {
  std::lock_guard<std::mutex> guard{mu_};
  listener_ = std::move(l);
}

std::uint64_t gcs_storage::submit(persistence::write_batch b) {
  std::lock_guard<std::mutex> guard{mu_};
  queue_.push_back(std::move(b));
  ++submitted_;
  if (!gathering_ || queue_.size() >= gather_limit)
    cv_.notify_one();
  return submitted_;
}

std::pair<internal::histogram, std::uint64_t>
gcs_storage::write_figures() const {
  std::lock_guard<std::mutex> guard{mu_};
  return {write_latency_, writes_failed_};
}

std::uint64_t gcs_storage::last_submitted() const {
  std::lock_guard<std::mutex> guard{mu_};
  return submitted_;
}

void gcs_storage::close() {
  stop(true);
}

void gcs_storage::crash() {
  stop(false);
}

void gcs_storage::stop(bool drain) {
  {
    std::lock_guard<std::mutex> guard{mu_};
    if (stopping_ && !writer_.joinable())
      return;
    stopping_ = true;
    drain_ = drain;
    cv_.notify_one();
  }
  if (writer_.joinable() && writer_.get_id() != std::this_thread::get_id())
    writer_.join();
  try {
    store_.close();
  } catch (const std::exception& e) {
    component_logger("gcs")->error("closing the control store at {} failed: {}",
                                   path_, e.what());
  }
}

void gcs_storage::run() {
  for (;;) {
    persistence::write_batch batch;
    std::uint64_t up_to = 0;
    listener l;
    {
      std::unique_lock<std::mutex> guard{mu_};
      if (queue_.empty()) {
        cv_.wait(guard, [this] { return stopping_ || !queue_.empty(); });
      } else if (!stopping_) {
        // These changes came while the last commit ran: a burst.
        gathering_ = true;
        cv_.wait_for(guard, gather_window, [this] {
          return stopping_ || queue_.size() >= gather_limit;
        });
        gathering_ = false;
      }
      if (queue_.empty() || (stopping_ && !drain_))
        return;
      while (!queue_.empty()) {
        batch.append(std::move(queue_.front()));
        queue_.pop_front();
      }
      up_to = submitted_;
      l = listener_;
    }
    std::string failure = failed_;
    if (failure.empty()) {
      try {
        auto began = std::chrono::steady_clock::now();
        store_.write(batch);
        std::chrono::duration<double> took =
            std::chrono::steady_clock::now() - began;
        std::lock_guard<std::mutex> guard{mu_};
        write_latency_.observe(took.count());
      } catch (const std::exception& e) {
        {
          std::lock_guard<std::mutex> guard{mu_};
          ++writes_failed_;
        }
        failure = e.what();
        // Nothing after a failed batch is written: what is on disk stays a
        // prefix of what was submitted, even if the disk recovers.
        failed_ = failure;
        component_logger("gcs")->error(
            "writing to the control store failed: {}", failure);
      }
    }
    if (l)
      l(up_to, std::move(failure));
  }
}

} // namespace prism::actors
