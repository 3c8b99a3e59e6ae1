#pragma once

// How a raylet starts a worker process: the job's own program with the
// variables below set, which `prism::init` (or `prism::serve_if_worker`)
// finds and turns the process into that worker (boot/serve_worker.hpp).

#include <string>
#include <vector>

#include "net/tls.hpp"

namespace prism::actors {

/// The one-time token a worker process registers with; its presence is
/// what makes a process a worker.
inline constexpr const char* worker_token_variable = "PRISM_WORKER_TOKEN";
/// "HOST:PORT" of the door of the raylet that started it.
inline constexpr const char* worker_door_variable = "PRISM_WORKER_DOOR";

/// The environment entries a raylet gives a worker process it starts: its
/// token, its door, and the node's TLS credentials (`tls`), with which it
/// connects to the door and the cluster.
std::vector<std::string> worker_environment(const std::string& token,
                                            const std::string& door_address,
                                            const tls_files& tls);

/// Of those, the entries every worker process of a node gets (the door and
/// the TLS credentials), which a spare of a fork server has before its
/// launch (worker/fork_server.hpp), and the one of its own.
std::vector<std::string>
worker_common_environment(const std::string& door_address,
                          const tls_files& tls);
std::string worker_token_entry(const std::string& token);

/// Whether this process was started as a worker process.
bool started_as_worker() noexcept;

} // namespace prism::actors
