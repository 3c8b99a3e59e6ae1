#include "prism/kv.hpp"

#include "prism/detail/runtime.hpp"
#include "prism/error.hpp"

namespace prism::kv {

namespace {

void check_key(const std::string& key) {
  if (key.empty())
    throw invalid_argument_error("a key-value key must not be empty");
}

} // namespace

bool put(const std::string& key, const std::string& value, bool overwrite,
         const std::string& ns) {
  check_key(key);
  return detail::current_runtime().kv_put(ns, key, value, overwrite);
}

std::optional<std::string> get(const std::string& key, const std::string& ns) {
  check_key(key);
  return detail::current_runtime().kv_get(ns, key);
}

bool exists(const std::string& key, const std::string& ns) {
  return get(key, ns).has_value();
}

bool del(const std::string& key, const std::string& ns) {
  check_key(key);
  return detail::current_runtime().kv_del(ns, key);
}

std::vector<std::string> keys(const std::string& prefix,
                              const std::string& ns) {
  return detail::current_runtime().kv_keys(ns, prefix);
}

} // namespace prism::kv
