#pragma once

// Reading a node's log files for `prism logs`: the files its worker
// processes' output went to, as its index lists them
// (raylet/worker_output.hpp), and its own process's log. No CAF here.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

#include "prism/ids.hpp"
#include "protocol/output.hpp"

namespace prism::actors {

/// The most bytes one answer carries, over all its files; a file's rest
/// comes with the next request (`read_logs::offsets`).
inline constexpr std::uint64_t max_log_answer_bytes = 4 * 1024 * 1024;

/// The files the index `index` in `dir` lists, each once, in the order
/// they were made; nothing if there is no index.
std::vector<std::string> indexed_files(const std::string& dir,
                                       const std::string& index);

/// Whether worker file `name` ("worker-<job>-<pid>.out") is of `job` (any
/// for 0), of process `pid` (any for 0), and of stderr if `err`, else of
/// stdout. A fork server's files are of no job.
bool log_file_matches(const std::string& name, job_id job, pid_t pid, bool err);

/// Reads file `name` of `dir` from `offset`, or, without one, from where
/// its last `tail` lines start (its start for 0), at most `max_bytes`.
/// Nothing if the file does not exist.
std::optional<protocol::log_piece>
read_log_piece(const std::string& dir, const std::string& name,
               std::optional<std::uint64_t> offset, std::uint32_t tail,
               std::uint64_t max_bytes);

/// The log file of this process: where its stderr goes, if that is a
/// file; empty otherwise (a terminal, a pipe).
std::string own_log_file();

} // namespace prism::actors
