#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "prism/detail/runtime.hpp"
#include "prism/ids.hpp"
#include "prism/internal/actor_state.hpp"
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
  /// Hosted in a process its node shares among actors of its job
  /// (`isolation::shared`), not in one of its own. Next to `detached`: a
  /// spec takes 8 bytes fewer than with it after `owner`.
  bool shared_host = false;
  std::int32_t max_restarts = 0;
  std::int32_t max_task_retries = 0;
  std::int32_t max_concurrency = 1;
  resource_set resources;
  /// The worker (driver, worker or actor) that created the actor; a
  /// non-detached actor dies with it.
  worker_id owner;
  /// Named groups of methods, each with its own concurrency; calls of no
  /// group run in the default one, `max_concurrency` at a time.
  std::vector<concurrency_group> concurrency_groups;

  friend bool operator==(const actor_spec&, const actor_spec&) = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, actor_spec& x) {
  return f(static_cast<unique_id&>(x.id), x.job, x.factory, x.class_tag, x.args,
           x.name, x.ns, x.detached, x.max_restarts, x.max_task_retries,
           x.max_concurrency, x.resources, static_cast<unique_id&>(x.owner),
           x.shared_host, x.concurrency_groups);
}

/// Why an actor died, for the code that acts on it (a supervisor, an owner);
/// the death cause next to it says the same in words, for people.
enum class death_kind : std::uint8_t {
  /// Not dead, or dead for a reason the control store did not record.
  none,
  /// A method called `exit_actor`: the actor finished its work.
  exited,
  /// Killed on request (`prism::kill`, or its stand-in stopping it).
  killed,
  /// It never ran: its factory threw or called `exit_actor`, or no factory
  /// of that name is registered.
  constructor_failed,
  /// Its instance was lost (its worker or node died) with no restarts left.
  out_of_restarts,
  /// Its owner, which it shares fate with, died or never reported back
  /// after the control store restarted.
  owner_died,
  /// Its job ended.
  job_ended,
  /// The control store cannot re-create it, or no longer knows it.
  lost,
};

inline const char* to_string(death_kind k) {
  switch (k) {
  case death_kind::none:
    return "none";
  case death_kind::exited:
    return "exited";
  case death_kind::killed:
    return "killed";
  case death_kind::constructor_failed:
    return "constructor_failed";
  case death_kind::out_of_restarts:
    return "out_of_restarts";
  case death_kind::owner_died:
    return "owner_died";
  case death_kind::job_ended:
    return "job_ended";
  case death_kind::lost:
    return "lost";
  }
  return "unknown";
}

} // namespace prism::internal
