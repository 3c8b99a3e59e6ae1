#pragma once

// The output of a job's worker processes, on its way to the job's driver:
// a node sends the lines it read (raylet/worker_output.hpp) to the control
// store, which hands them to the driver that asked for its job's output. The
// driver answers the node itself, so a node sends its next lines only once
// the driver took the last, and what a slow driver cannot take is dropped
// at the node and counted, never held up in a worker.

#include <cstdint>
#include <string>
#include <vector>

#include <caf/actor.hpp>

#include "prism/ids.hpp"

namespace prism::protocol {

/// A line of a worker process's output.
struct output_line {
  /// The task function or actor class that wrote it; empty if the process
  /// had not said yet.
  std::string source;
  std::int32_t pid = 0;
  /// Written to stderr, not stdout.
  bool err = false;
  /// Without its newline.
  std::string text;

  friend bool operator==(const output_line&, const output_line&) = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, output_line& x) {
  return f(x.source, x.pid, x.err, x.text);
}

/// raylet -> gcs -> driver: lines of `job`'s worker processes on `node`,
/// in the order they were read, and how many the node dropped before
/// them. Answered with `true` by the driver, or by the control store if no
/// driver takes them.
struct output_lines {
  job_id job;
  node_id node;
  std::vector<output_line> lines;
  std::uint64_t dropped = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, output_lines& x) {
  return f(x.job, static_cast<unique_id&>(x.node), x.lines, x.dropped);
}

/// driver -> gcs: send `job`'s output to `sink` (again after a restart of
/// the control store) until the job ends or `sink` does. Answered with
/// `true`.
struct subscribe_output {
  job_id job;
  caf::actor sink;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, subscribe_output& x) {
  return f(x.job, x.sink);
}

} // namespace prism::protocol
