#include "common/log.hpp"

#include <cstdlib>
#include <mutex>

#include "prism/internal/thread_annotations.hpp"
#include <spdlog/sinks/stdout_color_sinks.h>

namespace prism::actors {

namespace {

std::mutex mu;
spdlog::level::level_enum current_level GUARDED_BY(mu) = spdlog::level::warn;

} // namespace

std::shared_ptr<spdlog::logger> component_logger(const std::string& name) {
  std::lock_guard<std::mutex> guard{mu};
  auto full = "prism." + name;
  if (auto existing = spdlog::get(full))
    return existing;
  auto result = spdlog::stderr_color_mt(full);
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
  std::lock_guard<std::mutex> guard{mu};
  current_level = parsed;
  spdlog::apply_all([parsed](const std::shared_ptr<spdlog::logger>& l) {
    if (l->name().rfind("prism.", 0) == 0)
      l->set_level(parsed);
  });
}

} // namespace prism::actors
