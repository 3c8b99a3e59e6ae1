#pragma once

// A program file and its identity: the SHA-256 of its bytes. A worker process
// runs its job's program only if the file on this host is that program.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
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

/// A SHA-256 over bytes given piece by piece.
class sha256_stream {
public:
  sha256_stream();
  ~sha256_stream();
  sha256_stream(sha256_stream&&) noexcept;
  sha256_stream& operator=(sha256_stream&&) noexcept;

  void update(const void* data, std::size_t size);

  /// The digest of every byte given, lower-case hex; the stream takes no
  /// more bytes after.
  std::string finish();

private:
  struct state;
  std::unique_ptr<state> state_;
};

/// A program file written from bytes that arrive in parts: beside its final
/// name first, hashed on the way, and renamed into place only if the bytes
/// hash to the SHA-256 it should have, so a file under the final name is
/// always a whole, checked program. A writer destroyed before `commit`
/// removes what it wrote.
class program_file_writer {
public:
  program_file_writer() = default;
  ~program_file_writer();
  program_file_writer(program_file_writer&&) noexcept;
  program_file_writer& operator=(program_file_writer&&) noexcept;

  /// Creates (or truncates) `partial` with `mode`. Returns why not, or "".
  std::string open(std::string partial, unsigned mode);

  /// Appends `size` bytes. Returns why not, or "".
  std::string append(const char* data, std::size_t size);

  /// Checks the bytes against `sha256`, gives the file `mode`, syncs it to
  /// disk with its directory if `sync`, and renames it to `path`. Returns
  /// why not, or "" (then the file is no longer the writer's).
  std::string commit(const std::string& sha256, const std::string& path,
                     unsigned mode, bool sync);

  const std::string& partial() const {
    return partial_;
  }

private:
  void discard();

  std::string partial_;
  int fd_ = -1;
  std::optional<sha256_stream> hash_;
};

/// Whether `text` can be a SHA-256 in lower-case hex: 64 characters, each
/// 0-9 or a-f. Such a text is safe as a file name.
bool is_sha256_hex(const std::string& text);

/// Writes all `size` bytes of `data` to `fd`; false (with `errno` set) if
/// it cannot.
bool write_all(int fd, const char* data, std::size_t size);

/// Reads up to `size` bytes of `fd` at `offset` into `data`; returns how many
/// it read (fewer at the end of the file, or on an error, with `errno` set).
std::size_t read_at(int fd, char* data, std::size_t size, std::uint64_t offset);

/// Reads the file at `path` and hashes it. Blocks for as long as reading
/// takes (about a second for a few hundred MB): not on a scheduler thread.
file_digest digest_file(const std::string& path);

/// Whether the file at `path` holds the bytes of `sha256` (`size` long).
/// Returns an empty string if it does, else why not. A file already checked
/// and unchanged since (same device, inode, size and modification time) is
/// not read again.
std::string check_program_file(const std::string& path,
                               const std::string& sha256, std::uint64_t size);

/// Records that the file at `path` holds the bytes of `sha256`, as a check
/// would, without reading it: for a file just written from bytes whose
/// digest was taken on the way.
void remember_program_file(const std::string& path, const std::string& sha256);

} // namespace prism::actors
