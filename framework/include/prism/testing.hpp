#pragma once

#include "prism/ids.hpp"

namespace prism::testing {

/// Kills a worker of the embedded cluster as a crash would: its running and
/// queued tasks fail over to their owners, which retry them. The C++ function
/// the worker was running cannot be interrupted inside one process; it runs
/// to its end and its result is discarded. Returns false if no live worker
/// has this id.
bool kill_worker(const worker_id& id);

/// Number of live workers on all nodes of the embedded cluster.
std::size_t num_workers();

} // namespace prism::testing
