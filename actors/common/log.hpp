#pragma once

#include <memory>
#include <string>

#include <spdlog/spdlog.h>

namespace prism::actors {

/// The logger of one component ("gcs", "raylet", "owner", "worker"), created
/// on first use and writing to stderr at the level set by `set_log_level`.
std::shared_ptr<spdlog::logger> component_logger(const std::string& name);

/// Sets the level of every component logger: "trace" ... "off". An empty
/// level reads PRISM_LOG_LEVEL and falls back to "warn".
void set_log_level(const std::string& level);

/// Sends every component logger's records to descriptor `fd` instead of
/// stderr, also those of loggers made before: a worker process whose stderr
/// is its user's keeps Prism's own log apart (common/output_source.hpp).
void set_log_descriptor(int fd);

} // namespace prism::actors
