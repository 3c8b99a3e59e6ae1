#include "store_log.hpp"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include <rocksdb/env.h>
#include <spdlog/sinks/stdout_color_sinks.h>

namespace prism::persistence {

namespace {

constexpr const char* logger_name = "prism.persistence";

class rocksdb_log : public rocksdb::Logger {
public:
  explicit rocksdb_log(std::shared_ptr<spdlog::logger> out)
      : rocksdb::Logger(rocksdb::InfoLogLevel::DEBUG_LEVEL),
        out_(std::move(out)) {}

  using rocksdb::Logger::Logv;

  void Logv(const char* format, va_list ap) override {
    Logv(rocksdb::InfoLogLevel::INFO_LEVEL, format, ap);
  }

  void Logv(const rocksdb::InfoLogLevel level, const char* format,
            va_list ap) override {
    auto lvl = to_spdlog(level);
    if (!out_->should_log(lvl))
      return;
    char buf[1024];
    std::vsnprintf(buf, sizeof(buf), format, ap);
    out_->log(lvl, "rocksdb: {}", buf);
  }

private:
  static spdlog::level::level_enum to_spdlog(rocksdb::InfoLogLevel level) {
    switch (level) {
    case rocksdb::InfoLogLevel::WARN_LEVEL:
      return spdlog::level::warn;
    case rocksdb::InfoLogLevel::ERROR_LEVEL:
    case rocksdb::InfoLogLevel::FATAL_LEVEL:
      return spdlog::level::err;
    default:
      return spdlog::level::debug;
    }
  }

  std::shared_ptr<spdlog::logger> out_;
};

} // namespace

std::shared_ptr<spdlog::logger> store_log() {
  static std::mutex mu;
  std::lock_guard<std::mutex> guard{mu};
  if (auto existing = spdlog::get(logger_name))
    return existing;
  std::shared_ptr<spdlog::logger> result;
  try {
    result = spdlog::stderr_color_mt(logger_name);
  } catch (const spdlog::spdlog_ex&) {
    // Another component registered it between our get and create.
    if (auto existing = spdlog::get(logger_name))
      return existing;
    throw;
  }
  auto env = std::getenv("PRISM_LOG_LEVEL");
  result->set_level(spdlog::level::from_str(env != nullptr ? env : "warn"));
  result->set_pattern("[%H:%M:%S.%e] [%n] [%l] %v");
  return result;
}

std::shared_ptr<rocksdb::Logger> make_rocksdb_log() {
  return std::make_shared<rocksdb_log>(store_log());
}

} // namespace prism::persistence
