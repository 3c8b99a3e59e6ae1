#pragma once

// The fork server of a node's worker program: the job's program, started
// once with `fork_wire::server_variable` set, stops at `prism::init` (or
// `prism::serve_if_worker`) with its libraries loaded and its static
// initialisation done, and forks a worker process whenever its node asks.
// A fork takes a millisecond where a start of the program takes tens.

namespace prism::actors {

/// Whether this process was started as the fork server of a node.
bool started_as_fork_server() noexcept;

/// Serves its node's requests until the node closes the socket, then exits
/// (`_exit`). Returns only in a forked process, whose environment then holds
/// the worker's variables (`worker_environment`): the forked process goes on to
/// serve as that worker. A server that finds threads running (started
/// before `prism::init`) cannot fork safely: it says so to its node, which
/// starts the program's workers by exec instead, and exits.
void serve_forks();

} // namespace prism::actors
