#include "prism/internal/resource_set.hpp"

#include <cmath>

namespace prism::internal {

resource_set::resource_set(const resource_map& quantities) {
  for (const auto& [name, quantity] : quantities) {
    auto units = static_cast<std::int64_t>(std::llround(quantity * unit));
    if (units != 0)
      amounts_[name] = units;
  }
}

bool resource_set::contains(const resource_set& request) const {
  for (const auto& [name, units] : request.amounts_) {
    auto i = amounts_.find(name);
    if (i == amounts_.end() || i->second < units)
      return false;
  }
  return true;
}

void resource_set::subtract(const resource_set& request) {
  for (const auto& [name, units] : request.amounts_)
    amounts_[name] -= units;
}

void resource_set::add(const resource_set& request) {
  for (const auto& [name, units] : request.amounts_)
    amounts_[name] += units;
}

resource_set resource_set::cpu_only() const {
  resource_set result;
  if (auto i = amounts_.find("CPU"); i != amounts_.end())
    result.amounts_.emplace(*i);
  return result;
}

std::int64_t resource_set::units(const std::string& name) const {
  auto i = amounts_.find(name);
  return i != amounts_.end() ? i->second : 0;
}

resource_map resource_set::to_map() const {
  resource_map result;
  for (const auto& [name, units] : amounts_)
    result.emplace(name, static_cast<double>(units) / unit);
  return result;
}

std::string resource_set::to_string() const {
  std::string result;
  for (const auto& [name, units] : amounts_) {
    if (!result.empty())
      result += ',';
    result += name;
    result += ':';
    auto whole = units / unit;
    auto frac = units % unit;
    result += std::to_string(whole);
    if (frac != 0) {
      auto digits = std::to_string(frac + unit).substr(1);
      while (!digits.empty() && digits.back() == '0')
        digits.pop_back();
      result += '.' + digits;
    }
  }
  return result;
}

} // namespace prism::internal
