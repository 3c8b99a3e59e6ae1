#pragma once

// The worker side of a worker process, composed: see worker/worker_process.hpp
// for the variables a node starts it with.

namespace prism::actors {

/// Serves as the worker the raylet started this process for: connects to
/// its door, registers with the token, and runs the tasks it is given until
/// its raylet ends (its connection drops) or stops it. Then the process
/// exits at once (`_exit`), without running static destructors or atexit
/// handlers: the user's program does not go on past `prism::init`. Exits
/// with code 70 if it cannot register.
[[noreturn]] void serve_as_worker();

/// Does what `serve_as_worker` does before it needs its token: makes the
/// actor system, listens for peers and connects to the door of the node
/// named by the environment. For a spare of a fork server, which waits for
/// its token then; `serve_as_worker` goes on from there. What fails here
/// is said (and the process exits) only then: a door that did not answer
/// is tried once more first.
void prepare_worker();

/// The part of `prepare_worker` that starts no thread: reads the door and
/// the TLS files from the environment and configures the actor system. A
/// fork server runs it once, before it forks, and every worker it forks
/// starts configured; `prepare_worker` runs it where it was not run.
void configure_worker();

} // namespace prism::actors
