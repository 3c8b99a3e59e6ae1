#pragma once

// The worker side of a worker process: a raylet starts the job's own
// program with the variables below set, and `prism::init` (or
// `prism::serve_if_worker`) turns the process into that worker.

#include <string>
#include <vector>

#include "cluster/tls.hpp"

namespace prism::actors {

/// The one-time token a worker process registers with; its presence is
/// what makes a process a worker.
inline constexpr const char* worker_token_variable = "PRISM_WORKER_TOKEN";
/// "HOST:PORT" of the gate of the raylet that started it.
inline constexpr const char* worker_gate_variable = "PRISM_WORKER_GATE";

/// The environment entries a raylet gives a worker process it starts: its
/// token, its gate, and the node's TLS credentials (`tls`), with which it
/// connects to the gate and the cluster.
std::vector<std::string> worker_environment(const std::string& token,
                                            const std::string& gate_address,
                                            const tls_files& tls);

/// Whether this process was started as a worker process.
bool started_as_worker() noexcept;

/// Serves as the worker the raylet started this process for: connects to
/// its gate, registers with the token, and runs the tasks it is given until
/// its raylet ends (its connection drops) or stops it. Then the process
/// exits at once (`_exit`), without running static destructors or atexit
/// handlers: the user's program does not go on past `prism::init`. Exits
/// with code 70 if it cannot register.
[[noreturn]] void serve_as_worker();

} // namespace prism::actors
