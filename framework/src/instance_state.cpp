#include "prism/internal/instance_state.hpp"

namespace prism::internal {

const char* to_string(instance_state s) noexcept {
  switch (s) {
  case instance_state::queued:
    return "queued";
  case instance_state::requested:
    return "requested";
  case instance_state::allocated:
    return "allocated";
  case instance_state::running:
    return "running";
  case instance_state::stopping:
    return "stopping";
  case instance_state::terminated:
    return "terminated";
  case instance_state::allocation_failed:
    return "allocation_failed";
  case instance_state::termination_failed:
    return "termination_failed";
  }
  return "unknown";
}

instance new_instance(std::string id, std::string node_type,
                      instance_state state, autoscaler_time now,
                      std::string why) {
  instance x;
  x.id = std::move(id);
  x.node_type = std::move(node_type);
  x.state = state;
  x.since = now;
  x.history.push_back(instance_event{now, state, state, std::move(why)});
  return x;
}

bool change_state(instance& x, instance_state to, autoscaler_time now,
                  std::string why) {
  auto from = x.state;
  if (!instance_state_machine::transition(x.state, to))
    return false;
  // The first change (how it began) and the latest ones tell its story.
  if (x.history.size() >= max_instance_history)
    x.history.erase(x.history.begin() + 1);
  x.history.push_back(instance_event{now, from, to, std::move(why)});
  x.since = now;
  return true;
}

std::uint64_t illegal_instance_transitions() noexcept {
  return instance_state_machine::illegal_transitions();
}

} // namespace prism::internal
