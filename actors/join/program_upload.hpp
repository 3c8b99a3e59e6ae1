#pragma once

// An attached driver hands its program to the control store, so that a node
// that does not hold it at the driver's path on its own host (another host,
// or a file rebuilt since the driver started) still runs the job's tasks
// and actors, also after the driver ended (a detached actor restarting).

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include "protocol/raylet_gcs.hpp"

namespace prism::actors {

/// Spawns the actor that offers `program`, this process's own, to the
/// control store behind `gcs` and, if it is wanted, hands it over in 1 MiB
/// parts
/// read from the running image (`/proc/self/exe`, the bytes the digest was
/// taken of, even if the file at the program's path changed since). It ends
/// when done, or at its first failure, which it logs: the job runs on, and a
/// node that needs the program says why it cannot run it.
caf::actor spawn_program_upload(caf::actor_system& sys, caf::actor gcs,
                                protocol::job_program program);

} // namespace prism::actors
