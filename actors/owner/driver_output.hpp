#pragma once

// The driver's end of its job's output: the lines its worker processes
// write, on every node, printed on the driver's own stdout and stderr, each
// after who wrote it: "(square pid=4123 node=5be0c2a7) text".

#include <cstdio>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include "prism/ids.hpp"

namespace prism::actors {

struct driver_output_config {
  job_id job;
  /// The control store (its endpoint), which hands this actor the job's
  /// output once asked, and again after it restarts.
  caf::actor gcs;
  /// Collapse a text many workers print alike (internal/output_dedup.hpp).
  bool dedup = true;
  /// Colour the prefixes (on a terminal, without NO_COLOR).
  bool colour = false;
  /// Where lines of stdout and of stderr go.
  std::FILE* out = stdout;
  std::FILE* err = stderr;
};

/// Whether `config.log_to_driver` and PRISM_LOG_TO_DRIVER (0 turns it off)
/// want a job's output printed by its driver.
bool output_to_driver(bool configured);

/// Whether `config.dedup_logs` and PRISM_DEDUP_LOGS (0 turns it off) want
/// repeated lines collapsed.
bool dedup_output(bool configured);

/// Whether the driver's terminal takes colour: stdout is one, and NO_COLOR
/// is not set.
bool output_in_colour();

/// Spawns the actor that prints `cfg.job`'s output, on a thread of its own
/// (a terminal may block). The caller asks the control store to send it
/// the output (`protocol::subscribe_output`); it asks again itself after a
/// restart of the control store. It prints the repeats it held back when
/// it exits.
caf::actor spawn_driver_output(caf::actor_system& sys,
                               driver_output_config cfg);

} // namespace prism::actors
