#pragma once

// The body of an instance process (worker/instance_wire.hpp): a process
// its node forked from the job's program for one actor instance, whose host
// runs in another process of the job on the same node. It has no actor
// system: it makes the instance and runs the calls its host hands it, and
// ends when its host does.

namespace prism::actors {

/// Whether this process was started as an instance process.
bool started_as_instance() noexcept;

/// Connects to the host this process was started for, makes the instance
/// and runs its calls as the host says, until the host ends the link (or
/// the process exits, as user code may make it). Never returns.
[[noreturn]] void serve_as_instance();

} // namespace prism::actors
