#include "raylet/host_memory.hpp"

#include <fstream>
#include <optional>
#include <sstream>

namespace prism::actors {

namespace {

// The first number in file `path`; nothing if it holds none ("max").
std::optional<std::uint64_t> number_in(const std::string& path) {
  std::ifstream in{path};
  std::uint64_t n = 0;
  if (in >> n)
    return n;
  return std::nullopt;
}

// The value of `key` in a file of "key value" lines (memory.stat), or of
// "Key: value kB" lines (/proc/meminfo, in bytes).
std::optional<std::uint64_t> field_of(const std::string& path,
                                      const std::string& key) {
  std::ifstream in{path};
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words{line};
    std::string name, unit;
    std::uint64_t value = 0;
    if (!(words >> name >> value))
      continue;
    if (!name.empty() && name.back() == ':')
      name.pop_back();
    if (name != key)
      continue;
    if (words >> unit && unit == "kB")
      value *= 1024;
    return value;
  }
  return std::nullopt;
}

memory_use host_use() {
  memory_use m;
  m.scope = "host";
  auto total = field_of("/proc/meminfo", "MemTotal");
  auto available = field_of("/proc/meminfo", "MemAvailable");
  if (total && available && *available <= *total) {
    m.limit = *total;
    m.used = *total - *available;
  }
  return m;
}

// The cgroup's use and limit; a limit of 0 if it has none below `host`.
memory_use cgroup_use(std::uint64_t host) {
  memory_use m;
  m.scope = "cgroup";
  std::optional<std::uint64_t> limit, current, inactive;
  if ((limit = number_in("/sys/fs/cgroup/memory.max"))) {
    current = number_in("/sys/fs/cgroup/memory.current");
    inactive = field_of("/sys/fs/cgroup/memory.stat", "inactive_file");
  } else if ((limit =
                  number_in("/sys/fs/cgroup/memory/memory.limit_in_bytes"))) {
    current = number_in("/sys/fs/cgroup/memory/memory.usage_in_bytes");
    inactive =
        field_of("/sys/fs/cgroup/memory/memory.stat", "total_inactive_file");
  }
  if (!limit || !current || *limit == 0 || (host > 0 && *limit >= host))
    return m;
  m.limit = *limit;
  auto cache = inactive.value_or(0);
  m.used = *current > cache ? *current - cache : 0;
  return m;
}

} // namespace

memory_use sample_memory_use() {
  auto host = host_use();
  auto cgroup = cgroup_use(host.limit);
  return cgroup.limit > 0 && cgroup.share() >= host.share() ? cgroup : host;
}

std::uint64_t memory_limit_here() {
  auto host = host_use().limit;
  auto cgroup = cgroup_use(host).limit;
  return cgroup > 0 ? cgroup : host;
}

} // namespace prism::actors
