#pragma once

// A process's metrics as Prometheus text: the families of its node, its
// control store, its tasks, its autoscaler and its HTTP ports, built from
// their answers. Names follow Prometheus's conventions (`prism_` first,
// units in the name, `_total` for counters), and no label carries an
// actor, task or worker id: a family's series grow with the cluster's
// nodes, functions and classes, never with its actors or tasks.

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "http/http_server.hpp"
#include "protocol/metrics.hpp"

namespace prism::actors {

/// Distinct values a label of a function or class name takes in one
/// family; past it, the rest are summed under "other".
inline constexpr std::size_t max_name_labels = 500;

class metrics_page {
public:
  metrics_page();
  ~metrics_page();
  metrics_page(const metrics_page&) = delete;
  metrics_page& operator=(const metrics_page&) = delete;

  /// A node's own figures.
  void add(const protocol::node_metrics& m);

  /// The control store's figures: nodes, heartbeats, actors, jobs, writes.
  void add(const protocol::control_metrics& m);

  /// The tasks' figures, from the task event store.
  void add(const protocol::task_metrics& m);

  /// The autoscaler's instances by state.
  void add_autoscaler(
      const std::vector<std::pair<std::string, std::uint64_t>>& by_state);

  /// What the HTTP port `port` ("metrics", "status page") counted.
  void add(const std::string& port, const http_counters& c);

  /// Whether `source` ("node", "control_store", "task_events") answered in
  /// time; one that did not has no series but this.
  void add_source(const std::string& source, bool up);

  /// Prometheus's text format, version 0.0.4.
  std::string text() const;

  /// How many series the page holds (a histogram's buckets, sum and count
  /// each count).
  std::size_t series() const;

private:
  struct families;
  std::unique_ptr<families> families_;
};

} // namespace prism::actors
