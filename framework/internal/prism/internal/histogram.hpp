#pragma once

// Counts of observations by upper bound, as Prometheus keeps a histogram:
// for metrics of latencies and durations.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace prism::internal {

/// The upper bounds, in seconds, of a histogram of latencies: 100 µs to 60 s,
/// about three a decade.
const std::vector<double>& latency_bounds();

/// Observations counted by the first upper bound they do not exceed.
struct histogram {
  /// Ascending upper bounds; one more count holds what exceeds the last.
  std::vector<double> bounds;
  /// `bounds.size() + 1` counts, each of its own bucket (not cumulative).
  std::vector<std::uint64_t> counts;
  double sum = 0;
  std::uint64_t count = 0;

  histogram() = default;

  /// An empty histogram with `upper_bounds`.
  explicit histogram(std::vector<double> upper_bounds);

  /// An empty histogram of latencies (`latency_bounds`).
  static histogram of_latency() {
    return histogram{latency_bounds()};
  }

  void observe(double value) noexcept;

  /// Adds `other`'s observations. REQUIRES: the same bounds.
  void merge(const histogram& other) noexcept;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, histogram& x) {
  return f(x.bounds, x.counts, x.sum, x.count);
}

} // namespace prism::internal
