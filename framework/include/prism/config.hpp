#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace prism {

/// Quantities of named resources, e.g. {{"CPU", 1}, {"GPU", 0.5}}.
using resource_map = std::map<std::string, double>;

/// How `prism::init` starts or joins a cluster.
struct config {
  /// Address of a running cluster's head, "host:port". Empty (the default)
  /// starts an embedded cluster inside the calling process.
  std::string address;

  /// CPUs of the embedded node. 0 (the default) uses the number of hardware
  /// threads.
  double num_cpus = 0;

  /// Custom resources of the embedded node, e.g. {{"GPU", 1}}. "CPU" here
  /// overrides `num_cpus`.
  resource_map resources;

  /// Namespace of the driver's job: named actors are found by name within
  /// it. Empty gives the job an anonymous namespace of its own.
  std::string ns;

  /// Log level of Prism's own components: "trace", "debug", "info", "warn",
  /// "error" or "off". Empty reads the PRISM_LOG_LEVEL environment variable,
  /// and falls back to "warn".
  std::string log_level;

  /// Upper bound on the workers one embedded node runs at once, counting
  /// workers that are blocked in `get` and lent their CPU back.
  std::uint32_t max_workers_per_node = 256;

  /// Threads of the scheduler that runs Prism's own components. 0 uses the
  /// number of hardware threads.
  std::uint32_t scheduler_threads = 0;
};

} // namespace prism
