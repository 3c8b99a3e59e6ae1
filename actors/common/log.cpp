#include "common/log.hpp"
#include "common/write_fully.hpp"

#include <atomic>
#include <cstdlib>
#include <mutex>

#include <unistd.h>

#include "prism/internal/thread_annotations.hpp"
#include <spdlog/sinks/base_sink.h>

namespace prism::actors {

namespace {

std::mutex level_mu;
spdlog::level::level_enum
    current_level GUARDED_BY(level_mu) = spdlog::level::warn;

/// Where every component logger writes: stderr, unless the process's
/// stderr is its user's (a worker process, see `set_log_descriptor`).
std::atomic<int> log_fd{STDERR_FILENO};

/// Writes each formatted record with one `write` to `log_fd`, so that a
/// change of the descriptor holds for loggers made before it.
class descriptor_sink final : public spdlog::sinks::base_sink<std::mutex> {
protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t out;
    formatter_->format(msg, out);
    write_fully(log_fd.load(std::memory_order_relaxed), out.data(), out.size());
  }

  void flush_() override {}
};

} // namespace

std::shared_ptr<spdlog::logger> component_logger(const std::string& name) {
  std::lock_guard<std::mutex> guard{level_mu};
  auto full = "prism." + name;
  if (auto existing = spdlog::get(full))
    return existing;
  auto result = std::make_shared<spdlog::logger>(
      full, std::make_shared<descriptor_sink>());
  spdlog::register_logger(result);
  result->set_level(current_level);
  result->set_pattern("[%H:%M:%S.%e] [%n] [%l] %v");
  return result;
}

void set_log_level(const std::string& level) {
  std::string name = level;
  if (name.empty()) {
    auto env = std::getenv("PRISM_LOG_LEVEL");
    name = env != nullptr ? env : "warn";
  }
  auto parsed = spdlog::level::from_str(name);
  std::lock_guard<std::mutex> guard{level_mu};
  current_level = parsed;
  spdlog::apply_all([parsed](const std::shared_ptr<spdlog::logger>& l) {
    if (l->name().rfind("prism.", 0) == 0)
      l->set_level(parsed);
  });
}

void set_log_descriptor(int fd) {
  log_fd.store(fd, std::memory_order_relaxed);
}

} // namespace prism::actors
