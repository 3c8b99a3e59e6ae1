#pragma once

// The metrics a program declares (`prism/metrics.hpp`): the process's
// registry, which keeps their series and ships what changed, and a node's
// table, which sums what its worker processes ship.

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "prism/internal/histogram.hpp"
#include "prism/internal/thread_annotations.hpp"
#include "prism/metrics.hpp"

namespace prism::internal {

enum class user_metric_kind : std::uint8_t { counter, gauge, histogram };

/// "counter", "gauge" or "histogram".
const char* to_string(user_metric_kind k) noexcept;

/// One series of a metric, as a process ships it and a node serves it.
struct user_series {
  std::string name;
  user_metric_kind kind = user_metric_kind::counter;
  std::string description;
  /// Tag values by key, in the metric's order of keys.
  std::vector<std::pair<std::string, std::string>> tags;
  /// A counter's total since its process started; a gauge's value.
  double value = 0;
  /// A gauge: when it was set, in microseconds since the Unix epoch.
  std::int64_t set_us = 0;
  /// A histogram's counts.
  histogram buckets;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, user_series& x) {
  return f(x.name, x.kind, x.description, x.tags, x.value, x.set_us, x.buckets);
}

/// Series a metric keeps at most (distinct tag values); past it, updates of
/// new ones are dropped and counted.
inline constexpr std::size_t max_series_per_metric = 1000;

/// The metrics of this process.
class user_metric_registry {
public:
  /// The process's registry.
  static user_metric_registry& global();

  /// The metric `name`: made now, or the one made before with the same
  /// kind, description, keys and buckets. Throws `invalid_argument_error`
  /// for a bad name or key, or a name declared before otherwise.
  std::shared_ptr<metrics::detail::metric_def>
  define(user_metric_kind kind, std::string name, std::string description,
         std::vector<std::string> tag_keys, std::vector<double> boundaries);

  /// The series updated since the last call, with their values so far.
  std::vector<user_series> take_changed();

  /// Updates dropped because a metric had `max_series_per_metric` series.
  std::uint64_t dropped() const;

private:
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<metrics::detail::metric_def>>
      defs_ GUARDED_BY(mu_);
};

/// A node's series of its worker processes' metrics: what each last
/// shipped, summed (counters, histograms) or as last set (gauges).
class user_metric_table {
public:
  /// Process `from` shipped `series`, each with its value so far. A series
  /// whose name another process declared as another kind, or a metric's
  /// past `max_series_per_metric`, is dropped and counted.
  void apply(const std::string& from, const std::vector<user_series>& series);

  /// Process `from` ended: what it counted stays in the sums.
  void retire(const std::string& from);

  /// Retires every process that shipped series and is not in `alive`.
  void retire_all_but(const std::set<std::string>& alive);

  /// The node's series, by name and tags.
  std::vector<user_series> merged() const;

  /// Series dropped (see `apply`).
  std::uint64_t dropped() const noexcept {
    return dropped_;
  }

private:
  using tag_values = std::vector<std::pair<std::string, std::string>>;
  struct series_entry {
    /// By process: what it last shipped.
    std::map<std::string, user_series> live;
    /// What ended processes counted; a gauge's last value.
    user_series settled;
    bool has_settled = false;
  };
  struct metric_entry {
    user_metric_kind kind = user_metric_kind::counter;
    std::map<tag_values, series_entry> series;
  };
  std::map<std::string, metric_entry> metrics_;
  std::uint64_t dropped_ = 0;
};

} // namespace prism::internal
