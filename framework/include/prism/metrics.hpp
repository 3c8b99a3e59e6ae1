#pragma once

// Metrics of your own, served with Prism's on each node's metrics port
// (`/metrics`, Prometheus text):
//
//   prism::metrics::counter served{"kv_requests_total", "Requests served",
//                                  {"op"}};
//   prism::metrics::histogram took{"kv_request_seconds", "Request time",
//                                  {0.001, 0.01, 0.1, 1}, {"op"}};
//   served.inc(1, {{"op", "get"}});
//   took.observe(0.004, {{"op", "get"}});
//
// Use them in tasks, actor methods and drivers, from any thread: an update
// costs a lookup of its tag values and an atomic add or a short lock, and
// never a message. A worker process ships what changed to its node every
// second, and the node serves them summed over its worker processes
// (counters and histograms; a process that ended keeps counting in the
// sum) or as last set on the node (gauges). Series of the same name and
// tags from several nodes are told apart by Prometheus's `instance` label.
//
// A metric is known by its name: declaring one again with the same kind,
// description, tag keys and buckets gives the same metric; with anything
// else it throws `invalid_argument_error`.

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace prism::metrics {

/// Tag values by tag key; every key must be one of the metric's tag keys
/// (those left out are empty).
using tags = std::map<std::string, std::string>;

namespace detail {
struct metric_def;
} // namespace detail

/// A value that only goes up, e.g. requests served.
class counter {
public:
  /// REQUIRES: `name` matches [a-zA-Z_:][a-zA-Z0-9_:]* and does not start
  /// with "prism_"; each tag key matches [a-zA-Z_][a-zA-Z0-9_]*. Throws
  /// `invalid_argument_error` otherwise.
  explicit counter(std::string name, std::string description = {},
                   std::vector<std::string> tag_keys = {});

  /// Adds `amount` to the series of `t`. Throws `invalid_argument_error`
  /// for a negative amount or a tag key the counter does not have.
  void inc(double amount = 1.0, const tags& t = {});

private:
  std::shared_ptr<detail::metric_def> def_;
};

/// A value that goes up and down, e.g. a queue's length.
class gauge {
public:
  /// As `counter`'s.
  explicit gauge(std::string name, std::string description = {},
                 std::vector<std::string> tag_keys = {});

  /// Sets the series of `t` to `value`. Throws `invalid_argument_error` for
  /// a tag key the gauge does not have.
  void set(double value, const tags& t = {});

private:
  std::shared_ptr<detail::metric_def> def_;
};

/// Observations counted by bucket, e.g. request times.
class histogram {
public:
  /// As `counter`'s; `boundaries` are the buckets' upper bounds, ascending
  /// and at least one (a last bucket takes what exceeds them).
  histogram(std::string name, std::string description,
            std::vector<double> boundaries,
            std::vector<std::string> tag_keys = {});

  /// Counts `value` in the series of `t`. Throws `invalid_argument_error`
  /// for a tag key the histogram does not have.
  void observe(double value, const tags& t = {});

private:
  std::shared_ptr<detail::metric_def> def_;
};

} // namespace prism::metrics
