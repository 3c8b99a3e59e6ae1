#include "prism/detail/exception_types.hpp"

#include <map>
#include <mutex>

namespace prism::detail {

// Named, not anonymous: in a unity build this file shares its unit with
// others.
namespace exception_registry {

struct exception_types {
  std::mutex mu;
  std::map<std::string, exception_test, std::less<>> tests;
};

exception_types& registered_exception_types() {
  static exception_types types;
  return types;
}

} // namespace exception_registry

using exception_registry::registered_exception_types;

std::string register_exception_type(std::string name, exception_test test) {
  auto& types = registered_exception_types();
  std::lock_guard<std::mutex> guard{types.mu};
  types.tests.emplace(name, test);
  return name;
}

bool exception_is_one_of(const std::exception_ptr& e,
                         const std::vector<std::string>& names) {
  if (!e)
    return false;
  auto& types = registered_exception_types();
  std::vector<exception_test> tests;
  {
    std::lock_guard<std::mutex> guard{types.mu};
    for (const auto& name : names)
      if (auto i = types.tests.find(name); i != types.tests.end())
        tests.push_back(i->second);
  }
  for (auto test : tests)
    if (test(e))
      return true;
  return false;
}

} // namespace prism::detail
