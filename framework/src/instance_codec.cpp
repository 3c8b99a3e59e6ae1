#include "prism/internal/instance_codec.hpp"

#include <nlohmann/json.hpp>

namespace prism::internal {

namespace {

using json = nlohmann::json;

std::int64_t ms(autoscaler_time t) {
  return t.time_since_epoch().count();
}

autoscaler_time at(const json& j, const char* key) {
  return autoscaler_time{
      std::chrono::milliseconds{j.at(key).get<std::int64_t>()}};
}

// Whether nobody asked for the instance: "found", or "adopted" in the
// records of earlier versions.
bool found_field(const json& j) {
  if (auto i = j.find("found"); i != j.end())
    return i->get<bool>();
  return j.at("adopted").get<bool>();
}

std::optional<instance_state> state_named(const std::string& name) {
  for (std::size_t k = 0; k < num_instance_states; ++k) {
    auto s = static_cast<instance_state>(k);
    if (name == to_string(s))
      return s;
  }
  return std::nullopt;
}

} // namespace

std::string encode_instance(const instance& x) {
  json history = json::array();
  for (const auto& e : x.history)
    history.push_back({{"at", ms(e.at)},
                       {"from", to_string(e.from)},
                       {"to", to_string(e.to)},
                       {"why", e.why}});
  json j{{"id", x.id},
         {"node_type", x.node_type},
         {"state", to_string(x.state)},
         {"since", ms(x.since)},
         {"request_id", x.request_id},
         {"request_count", x.request_count},
         {"cloud_id", x.cloud_id},
         {"address", x.address},
         {"node_id", x.node_id},
         {"launch_attempts", x.launch_attempts},
         {"terminate_attempts", x.terminate_attempts},
         {"call_due", x.call_due},
         {"called_at", ms(x.called_at)},
         {"retry_at", ms(x.retry_at)},
         {"seen_at", ms(x.seen_at)},
         {"missed_listings", x.missed_listings},
         {"idle", x.idle},
         {"idle_since", ms(x.idle_since)},
         {"found", x.found},
         {"history", std::move(history)}};
  // Replaced, not refused: a provider's text need not be UTF-8.
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::optional<instance> decode_instance(const std::string& text) {
  try {
    auto j = json::parse(text);
    instance x;
    auto state = state_named(j.at("state").get<std::string>());
    if (!state)
      return std::nullopt;
    x.id = j.at("id").get<std::string>();
    x.node_type = j.at("node_type").get<std::string>();
    x.state = *state;
    x.since = at(j, "since");
    x.request_id = j.at("request_id").get<std::string>();
    x.request_count = j.at("request_count").get<int>();
    x.cloud_id = j.at("cloud_id").get<std::string>();
    x.address = j.at("address").get<std::string>();
    x.node_id = j.at("node_id").get<std::string>();
    x.launch_attempts = j.at("launch_attempts").get<int>();
    x.terminate_attempts = j.at("terminate_attempts").get<int>();
    x.call_due = j.at("call_due").get<bool>();
    x.called_at = at(j, "called_at");
    x.retry_at = at(j, "retry_at");
    x.seen_at = at(j, "seen_at");
    x.missed_listings = j.at("missed_listings").get<int>();
    x.idle = j.at("idle").get<bool>();
    x.idle_since = at(j, "idle_since");
    x.found = found_field(j);
    for (const auto& e : j.at("history")) {
      auto from = state_named(e.at("from").get<std::string>());
      auto to = state_named(e.at("to").get<std::string>());
      if (!from || !to)
        return std::nullopt;
      x.history.push_back(instance_event{at(e, "at"), *from, *to,
                                         e.at("why").get<std::string>()});
    }
    if (x.id.empty())
      return std::nullopt;
    return x;
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

} // namespace prism::internal
