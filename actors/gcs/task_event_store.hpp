#pragma once

// The control store's task event store: the tasks of the cluster as the
// events their owners send tell them (internal/task_events.hpp), and the
// answers of `prism list|get|summary tasks`. It runs on a thread of its
// own, so that a list over a million tasks holds up no other actor; the
// control store hands it the events and the questions.

#include <cstddef>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

namespace prism::actors {

/// Spawns the store, keeping at most `max_tasks` tasks (past it, those
/// recorded first are forgotten and counted).
caf::actor spawn_task_event_store(caf::actor_system& sys,
                                  std::size_t max_tasks);

} // namespace prism::actors
