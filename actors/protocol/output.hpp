#pragma once

// The output of a job's worker processes, on its way to the job's driver:
// a node sends the lines it read (raylet/worker_output.hpp) to the control
// store, which hands them to the driver that asked for its job's output. The
// driver answers the node itself, so a node sends its next lines only once
// the driver took the last, and what a slow driver cannot take is dropped
// at the node and counted, never held up in a worker.

#include <cstdint>
#include <map>
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

/// driver -> gcs -> every live raylet: the job is ending; send on what
/// its worker processes wrote so far. Answered with `true` once the lines
/// read by then have been taken by the driver (or dropped), so that a
/// driver prints the last lines of its job before it ends it.
struct flush_output {
  job_id job;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, flush_output& x) {
  return f(x.job);
}

/// `prism logs` -> raylet: what log files of a node hold, read from this
/// raylet's session directory. Answered with `log_pieces`.
struct read_logs {
  /// Whose files: a node that shares this raylet's session directory (a
  /// dead one too, whose files stay); nil for the answering node's own.
  node_id of;
  /// "worker": its worker processes' output files; "node": the log of the
  /// answering node's process (`head.log`, `node-<pid>.log`).
  std::string component = "worker";
  /// Worker files of this job only; 0 for every job's.
  job_id job;
  /// Of this process only; 0 for any.
  std::int32_t pid = 0;
  /// Of the process hosting this actor on the answering node; nil for any.
  actor_id actor;
  /// The stderr files instead of the stdout files.
  bool err = false;
  /// A file not read before (not in `offsets`) is read from its last
  /// `tail` lines; 0: from its start.
  std::uint32_t tail = 0;
  /// Where each file was read up to before (a follow, or the next piece).
  std::map<std::string, std::uint64_t> offsets;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, read_logs& x) {
  return f(static_cast<unique_id&>(x.of), x.component, x.job, x.pid,
           static_cast<unique_id&>(x.actor), x.err, x.tail, x.offsets);
}

/// Bytes of one log file, from `offset`; the file was `size` bytes long.
struct log_piece {
  std::string file;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  std::string bytes;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, log_piece& x) {
  return f(x.file, x.offset, x.size, x.bytes);
}

/// raylet -> `prism logs`: pieces of the files that matched, in name
/// order; `error` says why none could be read.
struct log_pieces {
  /// The session directory they are in, on the answering node's host.
  std::string directory;
  std::vector<log_piece> pieces;
  std::string error;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, log_pieces& x) {
  return f(x.directory, x.pieces, x.error);
}

} // namespace prism::protocol
