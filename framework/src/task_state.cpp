#include "prism/internal/task_state.hpp"

#include "prism/testing.hpp"

#include <atomic>

namespace prism::internal {

namespace {

std::atomic<std::uint64_t> illegal{0};

} // namespace

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
  }
  return "unknown";
}

bool transition(task_state& s, task_state to) noexcept {
  if (!allowed(s, to)) {
    illegal.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  s = to;
  return true;
}

std::uint64_t illegal_task_transitions() noexcept {
  return illegal.load(std::memory_order_relaxed);
}

} // namespace prism::internal
