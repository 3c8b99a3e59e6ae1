#include "prism/internal/histogram.hpp"

#include <algorithm>

namespace prism::internal {

const std::vector<double>& latency_bounds() {
  static const std::vector<double> bounds{
      0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
      0.1,    0.25,    0.5,    1,     2.5,    5,     10,   60};
  return bounds;
}

histogram::histogram(std::vector<double> upper_bounds)
    : bounds(std::move(upper_bounds)), counts(bounds.size() + 1, 0) {}

void histogram::observe(double value) noexcept {
  if (counts.size() != bounds.size() + 1)
    return;
  auto i =
      std::lower_bound(bounds.begin(), bounds.end(), value) - bounds.begin();
  ++counts[static_cast<std::size_t>(i)];
  sum += value;
  ++count;
}

void histogram::merge(const histogram& other) noexcept {
  if (other.counts.size() != counts.size())
    return;
  for (std::size_t i = 0; i < counts.size(); ++i)
    counts[i] += other.counts[i];
  sum += other.sum;
  count += other.count;
}

} // namespace prism::internal
