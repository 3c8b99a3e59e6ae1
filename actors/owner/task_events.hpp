#pragma once

// Whether the owners of this process record their tasks' events (see
// task_events.cpp for the recording itself): off until Prism starts, then
// as `config::task_events` (a driver) or PRISM_TASK_EVENTS (any process)
// says.

namespace prism::actors {

/// Turns this process's recording of task events on or off.
void set_task_event_recording(bool on) noexcept;

/// Records task events as PRISM_TASK_EVENTS says (1 or 0), if it is set;
/// else if `configured` (`config::task_events`).
void configure_task_events(bool configured);

/// Whether this process records task events.
bool task_event_recording() noexcept;

} // namespace prism::actors
