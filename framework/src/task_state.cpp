#include "prism/internal/task_state.hpp"

namespace prism::internal {

const char* to_string(task_state s) noexcept {
  switch (s) {
  case task_state::waiting_args:
    return "waiting_args";
  case task_state::queued:
    return "queued";
  case task_state::running:
    return "running";
  case task_state::forwarded:
    return "forwarded";
  case task_state::finished:
    return "finished";
  case task_state::failed:
    return "failed";
  case task_state::cancelled:
    return "cancelled";
  }
  return "unknown";
}

bool transition(task_state& s, task_state to) noexcept {
  return task_state_machine::transition(s, to);
}

std::uint64_t illegal_task_transitions() noexcept {
  return task_state_machine::illegal_transitions();
}

} // namespace prism::internal
