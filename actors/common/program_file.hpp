#pragma once

// A program file and its identity: the SHA-256 of its bytes. A worker process
// runs its job's program only if the file on this host is that program.

#include <cstdint>
#include <string>

namespace prism::actors {

/// The SHA-256 of a file's bytes.
struct file_digest {
  /// Lower-case hex, 64 characters; empty if the file could not be read.
  std::string sha256;
  std::uint64_t size = 0;
  /// Why it could not be read, if it could not.
  std::string error;
};

/// Reads the file at `path` and hashes it. Blocks for as long as reading
/// takes (about a second for a few hundred MB): not on a scheduler thread.
file_digest digest_file(const std::string& path);

/// Whether the file at `path` holds the bytes of `sha256` (`size` long).
/// Returns an empty string if it does, else why not. A file already checked
/// and unchanged since (same device, inode, size and modification time) is
/// not read again.
std::string check_program_file(const std::string& path,
                               const std::string& sha256, std::uint64_t size);

} // namespace prism::actors
