#pragma once

// What the cluster tests share: `prism::testing::process_cluster` running
// the `prism` command built with them, and waiting on conditions.

#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include <prism/testing.hpp>

namespace prism::cluster_test {

using prism::testing::process_cluster;

/// A session directory of its own for a test of the command: no head yet,
/// nothing attached.
inline process_cluster::options bare_session() {
  process_cluster::options o;
  o.head = false;
  o.attach = false;
  o.command = PRISM_TOOL_PATH;
  return o;
}

/// A head with `nodes` more nodes, this process attached as the driver.
inline process_cluster::options attached_cluster(std::size_t nodes) {
  process_cluster::options o;
  o.nodes = nodes;
  o.command = PRISM_TOOL_PATH;
  return o;
}

/// Runs `check` until it returns true or `timeout` passes; returns its last
/// answer.
inline bool eventually(std::chrono::milliseconds timeout,
                       const std::function<bool()>& check) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (check())
      return true;
    if (std::chrono::steady_clock::now() >= deadline)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds{50});
  }
}

/// Whether `text` contains `part`.
inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

} // namespace prism::cluster_test
