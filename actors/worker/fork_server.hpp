#pragma once

// The fork server of a node's worker program: the job's program, started
// once with `fork_wire::server_variable` set, stops at `prism::init` (or
// `prism::serve_if_worker`) with its libraries loaded and its static
// initialisation done, and forks a worker process whenever its node asks.
// A fork takes a millisecond where a start of the program takes tens.
//
// What every worker does first (make its actor system, listen, reach its
// node's door) takes tens of milliseconds more, mostly page faults of the
// forked copy: the server keeps spares, processes forked ahead of requests
// that do this while they wait, and hands a request to a spare first.

#include <functional>

namespace prism::actors {

/// Whether this process was started as the fork server of a node.
bool started_as_fork_server() noexcept;

/// Serves its node's requests until the node closes the socket, then exits
/// (`_exit`). Returns only in a forked process, whose environment then holds
/// the worker's variables (`worker_environment`): the forked process goes on to
/// serve as that worker. A server that finds threads running (started
/// before `prism::init`) cannot fork safely: it says so to its node, which
/// starts the program's workers by exec instead, and exits.
///
/// It keeps as many spares as `fork_wire::spares_variable` says (none if
/// unset), forked when no request came for 30 ms. A spare runs `prepare`
/// as soon as it is forked, with the
/// server's environment (the variables common to the node's workers), then
/// waits for a request's variables; it exits if the server does first. A
/// spare that ends before its request (it crashed, or was killed) stops the
/// server from keeping spares.
void serve_forks(const std::function<void()>& prepare);

} // namespace prism::actors
