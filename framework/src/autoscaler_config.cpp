#include "prism/internal/autoscaler_config.hpp"

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "prism/error.hpp"

namespace prism::internal {

namespace {

using json = nlohmann::json;

[[noreturn]] void refuse(const std::string& where, const std::string& what) {
  throw invalid_argument_error(
      "autoscaler config: " + (where.empty() ? "the file" : where) + ": " +
      what);
}

std::string field(const std::string& where, const std::string& key) {
  return where.empty() ? key : where + "." + key;
}

/// Refuses fields of `object` not in `known`: a typo must not be ignored.
void only_fields(const json& object, const std::string& where,
                 const std::set<std::string>& known) {
  if (!object.is_object())
    refuse(where, "must be an object");
  for (const auto& [key, value] : object.items())
    if (!known.contains(key))
      refuse(field(where, key), "unknown field");
}

int read_count(const json& object, const std::string& key,
               const std::string& where, int fallback) {
  if (!object.contains(key))
    return fallback;
  const auto& v = object.at(key);
  if (!v.is_number_integer() || v.get<std::int64_t>() < 0 ||
      v.get<std::int64_t>() > 1000000)
    refuse(field(where, key), "must be a whole number from 0 to 1000000");
  return v.get<int>();
}

std::chrono::milliseconds read_seconds(const json& object,
                                       const std::string& key,
                                       const std::string& where,
                                       std::chrono::milliseconds fallback) {
  if (!object.contains(key))
    return fallback;
  const auto& v = object.at(key);
  if (!v.is_number() || !std::isfinite(v.get<double>()) ||
      v.get<double>() < 0 || v.get<double>() > 1e7)
    refuse(field(where, key), "must be a number of seconds from 0 to 1e7");
  return std::chrono::milliseconds{std::llround(v.get<double>() * 1000)};
}

node_type_config read_node_type(const std::string& name, const json& t,
                                const std::string& where) {
  only_fields(t, where, {"resources", "min_workers", "max_workers"});
  node_type_config out;
  out.name = name;
  if (!t.contains("resources"))
    refuse(where + ".resources", "missing");
  const auto& r = t.at("resources");
  if (!r.is_object() || r.empty())
    refuse(where + ".resources", "must be an object of names to amounts");
  for (const auto& [resource, amount] : r.items()) {
    if (!amount.is_number() || !std::isfinite(amount.get<double>()) ||
        amount.get<double>() < 0)
      refuse(where + ".resources." + resource, "must be a number, 0 or more");
    out.resources[resource] = amount.get<double>();
  }
  out.min_workers = read_count(t, "min_workers", where, 0);
  out.max_workers = read_count(t, "max_workers", where, 10);
  if (out.min_workers > out.max_workers)
    refuse(where, "min_workers is above max_workers");
  return out;
}

void read_provider(const json& p, autoscaler_config& cfg) {
  if (p.is_string()) {
    cfg.provider = p.get<std::string>();
    return;
  }
  if (!p.is_object() || !p.contains("type") || !p.at("type").is_string())
    refuse("provider", "must be a name, or an object with a \"type\"");
  for (const auto& [key, value] : p.items()) {
    if (key == "type") {
      cfg.provider = value.get<std::string>();
    } else if (value.is_string()) {
      cfg.provider_options[key] = value.get<std::string>();
    } else if (value.is_number() || value.is_boolean()) {
      cfg.provider_options[key] = value.dump();
    } else {
      refuse("provider." + key, "must be a string, a number or a boolean");
    }
  }
}

} // namespace

const node_type_config* autoscaler_config::type(const std::string& name) const {
  for (const auto& t : node_types)
    if (t.name == name)
      return &t;
  return nullptr;
}

autoscaler_config parse_autoscaler_config(const std::string& text) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    refuse("", std::string{"is not valid JSON: "} + e.what());
  }
  only_fields(j, "",
              {"node_types", "max_workers", "idle_timeout_s", "max_pending",
               "queued_timeout_s", "request_timeout_s", "max_launch_attempts",
               "join_timeout_s", "stop_timeout_s", "missed_listings",
               "gone_grace_s", "node_grace_s", "backoff_min_s", "backoff_max_s",
               "interval_s", "provider"});
  autoscaler_config cfg;
  if (!j.contains("node_types") || !j.at("node_types").is_object() ||
      j.at("node_types").empty())
    refuse("node_types", "must be an object of node type names to types");
  for (const auto& [name, t] : j.at("node_types").items()) {
    if (name.empty() || name.size() > 64 ||
        name.find_first_not_of("abcdefghijklmnopqrstuvwxyz"
                               "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") !=
            std::string::npos)
      refuse("node_types." + name,
             "a name is 1 to 64 letters, digits, '_', '.' or '-'");
    cfg.node_types.push_back(read_node_type(name, t, "node_types." + name));
  }
  cfg.max_workers = read_count(j, "max_workers", "", cfg.max_workers);
  cfg.max_pending = read_count(j, "max_pending", "", cfg.max_pending);
  cfg.max_launch_attempts =
      read_count(j, "max_launch_attempts", "", cfg.max_launch_attempts);
  cfg.missed_listings =
      read_count(j, "missed_listings", "", cfg.missed_listings);
  cfg.idle_timeout = read_seconds(j, "idle_timeout_s", "", cfg.idle_timeout);
  cfg.queued_timeout =
      read_seconds(j, "queued_timeout_s", "", cfg.queued_timeout);
  cfg.request_timeout =
      read_seconds(j, "request_timeout_s", "", cfg.request_timeout);
  cfg.join_timeout = read_seconds(j, "join_timeout_s", "", cfg.join_timeout);
  cfg.stop_timeout = read_seconds(j, "stop_timeout_s", "", cfg.stop_timeout);
  cfg.gone_grace = read_seconds(j, "gone_grace_s", "", cfg.gone_grace);
  cfg.node_grace = read_seconds(j, "node_grace_s", "", cfg.node_grace);
  cfg.type_backoff.min =
      read_seconds(j, "backoff_min_s", "", cfg.type_backoff.min);
  cfg.type_backoff.max =
      read_seconds(j, "backoff_max_s", "", cfg.type_backoff.max);
  cfg.interval = read_seconds(j, "interval_s", "", cfg.interval);
  if (cfg.max_launch_attempts < 1)
    refuse("max_launch_attempts", "must be 1 or more");
  if (cfg.missed_listings < 1)
    refuse("missed_listings", "must be 1 or more");
  if (cfg.max_pending < 1)
    refuse("max_pending", "must be 1 or more");
  if (cfg.interval.count() < 10)
    refuse("interval_s", "must be 0.01 or more");
  if (cfg.type_backoff.min > cfg.type_backoff.max)
    refuse("backoff_min_s", "is above backoff_max_s");
  if (cfg.type_backoff.min.count() < 10)
    refuse("backoff_min_s", "must be 0.01 or more");
  for (auto [name, value] :
       {std::pair{"request_timeout_s", cfg.request_timeout},
        std::pair{"join_timeout_s", cfg.join_timeout},
        std::pair{"stop_timeout_s", cfg.stop_timeout},
        std::pair{"queued_timeout_s", cfg.queued_timeout}})
    if (value.count() < 1000)
      refuse(name, "must be 1 or more");
  int minimums = 0;
  for (const auto& t : cfg.node_types)
    minimums += t.min_workers;
  if (minimums > cfg.max_workers)
    refuse("max_workers", "is below the sum of the node types' min_workers (" +
                              std::to_string(minimums) + ")");
  if (j.contains("provider"))
    read_provider(j.at("provider"), cfg);
  return cfg;
}

autoscaler_config load_autoscaler_config(const std::string& path) {
  std::ifstream in{path};
  if (!in)
    throw invalid_argument_error("autoscaler config: cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  try {
    return parse_autoscaler_config(text.str());
  } catch (const invalid_argument_error& e) {
    throw invalid_argument_error(path + ": " + e.what());
  }
}

} // namespace prism::internal
