#pragma once

// The programs the control store keeps, by SHA-256: each job's driver hands
// its executable over once (`protocol::offer_program`, `program_part`), and
// a node that does not hold a job's program at the driver's path on its own
// host reads it from here (`protocol::read_program`), checks it and runs it.
// A program is a file named by its SHA-256 in the store's directory, written
// beside it first and renamed into place only once its bytes hash to that
// name and are on disk: a file there is always a whole, checked program, and
// it outlives the head's restarts with the control store's tables.

#include <chrono>
#include <cstdint>
#include <string>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

namespace prism::actors {

/// The largest program the store takes.
inline constexpr std::uint64_t max_program_bytes = std::uint64_t{4} << 30;

/// The most bytes one `program_part` carries, and one `read_program` gets.
inline constexpr std::uint64_t max_program_part_bytes = std::uint64_t{8} << 20;

/// An upload with no part for this long is abandoned (its driver is gone):
/// another driver may offer the program again.
inline constexpr std::chrono::seconds stale_program_upload{10};

/// Spawns the keeper of the programs in `dir`, creating it if missing, on a
/// thread of its own (it reads and writes files). Throws
/// `invalid_argument_error` if `dir` cannot be created.
caf::actor spawn_program_store(caf::actor_system& sys, const std::string& dir);

} // namespace prism::actors
