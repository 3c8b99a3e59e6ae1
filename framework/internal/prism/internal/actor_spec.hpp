#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "prism/detail/runtime.hpp"
#include "prism/ids.hpp"
#include "prism/internal/resource_set.hpp"

namespace prism::internal {

/// Everything needed to create an actor, and to create it again after a
/// restart, from the control store alone.
struct actor_spec {
  actor_id id;
  job_id job;
  std::string factory;
  std::uint64_t class_tag = 0;
  std::vector<detail::task_arg> args;
  std::string name;
  std::string ns;
  bool detached = false;
  std::int32_t max_restarts = 0;
  std::int32_t max_task_retries = 0;
  std::int32_t max_concurrency = 1;
  resource_set resources;
  /// The worker (driver, worker or actor) that created the actor; a
  /// non-detached actor dies with it.
  worker_id owner;

  friend bool operator==(const actor_spec&, const actor_spec&) = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, actor_spec& x) {
  return f(static_cast<unique_id&>(x.id), x.job, x.factory, x.class_tag, x.args,
           x.name, x.ns, x.detached, x.max_restarts, x.max_task_retries,
           x.max_concurrency, x.resources, static_cast<unique_id&>(x.owner));
}

/// The life of an actor: pending creation -> alive -> restarting -> alive
/// ... -> dead.
enum class actor_state : std::uint8_t { pending, alive, restarting, dead };

inline const char* to_string(actor_state s) {
  switch (s) {
  case actor_state::pending:
    return "pending";
  case actor_state::alive:
    return "alive";
  case actor_state::restarting:
    return "restarting";
  case actor_state::dead:
    return "dead";
  }
  return "unknown";
}

} // namespace prism::internal
