#include "prism/detail/function_registry.hpp"

#include <cmath>
#include <mutex>
#include <unordered_map>

#include "prism/internal/thread_annotations.hpp"
#include "prism/task.hpp"

namespace prism::detail {

struct function_registry::impl {
  mutable std::mutex mu;
  std::unordered_map<std::string, entry> by_name GUARDED_BY(mu);
  std::unordered_map<std::string, std::string> by_key GUARDED_BY(mu);
  /// Concurrency groups of methods, by the method's key: bound before or
  /// after the method is registered.
  std::unordered_map<std::string, std::string> groups GUARDED_BY(mu);
  std::unordered_map<std::string, std::string> key_of GUARDED_BY(mu);
  std::vector<std::string> static_errors GUARDED_BY(mu);
};

function_registry& function_registry::instance() {
  static function_registry registry;
  return registry;
}

function_registry::impl& function_registry::state() const {
  static impl instance;
  return instance;
}

void function_registry::add(std::string name, std::string key, entry e) {
  if (name.empty())
    throw registration_error("cannot register a function under an empty name");
  auto& st = state();
  std::lock_guard<std::mutex> guard{st.mu};
  if (st.by_name.count(name) > 0)
    throw registration_error("function '" + name + "' is already registered");
  if (auto i = st.by_key.find(key); i != st.by_key.end())
    throw registration_error("function '" + name +
                             "' is already registered as '" + i->second + "'");
  st.key_of.emplace(name, key);
  st.by_key.emplace(std::move(key), name);
  st.by_name.emplace(name, std::move(e));
}

void function_registry::set_group(std::string key, std::string group) {
  if (group.empty())
    throw registration_error("a concurrency group needs a name");
  auto& st = state();
  std::lock_guard<std::mutex> guard{st.mu};
  auto [i, added] = st.groups.emplace(std::move(key), group);
  if (!added && i->second != group)
    throw registration_error("a method is bound to concurrency groups '" +
                             i->second + "' and '" + group + "'");
}

std::string function_registry::group_of(const std::string& name) const {
  auto& st = state();
  std::lock_guard<std::mutex> guard{st.mu};
  auto k = st.key_of.find(name);
  if (k == st.key_of.end())
    return {};
  auto g = st.groups.find(k->second);
  return g != st.groups.end() ? g->second : std::string{};
}

const function_registry::entry*
function_registry::find(const std::string& name) const {
  auto& st = state();
  std::lock_guard<std::mutex> guard{st.mu};
  auto i = st.by_name.find(name);
  // Entries are never removed, so the pointer stays valid.
  return i != st.by_name.end() ? &i->second : nullptr;
}

const std::string* function_registry::name_of(const std::string& key) const {
  auto& st = state();
  std::lock_guard<std::mutex> guard{st.mu};
  auto i = st.by_key.find(key);
  return i != st.by_key.end() ? &i->second : nullptr;
}

std::vector<std::string> function_registry::static_errors() const {
  auto& st = state();
  std::lock_guard<std::mutex> guard{st.mu};
  return st.static_errors;
}

void function_registry::add_static_error(std::string what) {
  auto& st = state();
  std::lock_guard<std::mutex> guard{st.mu};
  st.static_errors.push_back(std::move(what));
}

std::vector<std::string> split_remote_names(const char* text) {
  std::vector<std::string> result;
  std::string current;
  int depth = 0;
  auto flush = [&] {
    auto first = current.find_first_not_of(" \t\n\r");
    auto last = current.find_last_not_of(" \t\n\r");
    result.push_back(first == std::string::npos
                         ? std::string{}
                         : current.substr(first, last - first + 1));
    current.clear();
  };
  for (const char* c = text; *c != '\0'; ++c) {
    switch (*c) {
    case '(':
    case '<':
    case '[':
    case '{':
      ++depth;
      break;
    case ')':
    case '>':
    case ']':
    case '}':
      --depth;
      break;
    case ',':
      if (depth == 0) {
        flush();
        continue;
      }
      break;
    default:
      break;
    }
    current += *c;
  }
  flush();
  return result;
}

std::string canonical_name(std::string name) {
  auto first = name.find_first_not_of(" \t&");
  if (first == std::string::npos)
    return {};
  return name.substr(first);
}

void throw_arity_mismatch(const std::string& fn, std::size_t expected,
                          std::size_t actual) {
  throw invalid_argument_error("'" + fn + "' takes " +
                               std::to_string(expected) +
                               " arguments but got " + std::to_string(actual));
}

const std::string& registered_name(const std::string& key) {
  if (auto name = function_registry::instance().name_of(key))
    return *name;
  throw function_not_found_error(
      "the function is not registered; register it with PRISM_REMOTE");
}

void validate_resources(const resource_map& resources) {
  for (const auto& [name, quantity] : resources) {
    if (name.empty())
      throw invalid_argument_error("resource names must not be empty");
    if (!std::isfinite(quantity) || quantity <= 0)
      throw invalid_argument_error("resource '" + name +
                                   "' must have a positive quantity, got " +
                                   std::to_string(quantity));
    if (quantity > 1 && std::floor(quantity) != quantity)
      throw invalid_argument_error(
          "resource '" + name +
          "': quantities above 1 must be whole numbers, got " +
          std::to_string(quantity));
  }
}

} // namespace prism::detail
