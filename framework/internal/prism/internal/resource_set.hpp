#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "prism/config.hpp"

namespace prism::internal {

/// Resource quantities in fixed point (1/10000 of a unit), so that adding and
/// taking back fractions never drifts.
class resource_set {
public:
  static constexpr std::int64_t unit = 10000;

  resource_set() = default;

  /// Converts a validated request. Quantities are rounded to 1/10000.
  explicit resource_set(const resource_map& quantities);

  /// Whether every quantity in `request` is available here.
  bool contains(const resource_set& request) const;

  /// Takes `request` out; quantities may go negative (a worker that was
  /// blocked and is running again oversubscribes for a while).
  void subtract(const resource_set& request);

  /// Gives `request` back.
  void add(const resource_set& request);

  /// The CPU part of this set alone.
  resource_set cpu_only() const;

  /// Quantity of `name` in units (1/10000).
  std::int64_t units(const std::string& name) const;

  /// Quantity of `name`.
  double quantity(const std::string& name) const {
    return static_cast<double>(units(name)) / unit;
  }

  bool empty() const noexcept {
    return amounts_.empty();
  }

  resource_map to_map() const;

  /// A stable text form, e.g. "CPU:1,GPU:0.5"; used as a scheduling key.
  std::string to_string() const;

  const std::map<std::string, std::int64_t>& amounts() const noexcept {
    return amounts_;
  }

  std::map<std::string, std::int64_t>& amounts() noexcept {
    return amounts_;
  }

  friend bool operator==(const resource_set&, const resource_set&) = default;

private:
  std::map<std::string, std::int64_t> amounts_;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, resource_set& x) {
  return f(x.amounts());
}

} // namespace prism::internal
