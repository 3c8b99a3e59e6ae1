#pragma once

// The files a node's object store spills objects to, when its memory cannot
// hold them (raylet/node_object_store.hpp). No CAF here.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "prism/ids.hpp"

namespace prism::actors {

class spill_directory;

/// One file of spilled objects, written once. It is deleted when its last
/// handle goes: when every object written into it is freed or read back for
/// good.
class spill_file {
public:
  ~spill_file();

  spill_file(const spill_file&) = delete;
  spill_file& operator=(const spill_file&) = delete;

  /// Reads the `n` bytes at `offset` into `out`. Returns an empty string
  /// once read, else why not (a short or failed read).
  [[nodiscard]] std::string read(std::uint64_t offset, char* out,
                                 std::uint64_t n) const;

  /// The file's path.
  const std::string& path() const noexcept {
    return path_;
  }

  /// The file's size.
  std::uint64_t size() const noexcept {
    return size_;
  }

private:
  friend class spill_directory;

  spill_file(std::shared_ptr<spill_directory> dir, int fd, std::string path,
             std::uint64_t size);

  std::shared_ptr<spill_directory> dir_;
  int fd_;
  std::string path_;
  std::uint64_t size_;
};

/// The spill files of one node in one directory, which nodes may share.
///
/// Each node holds a lock on a file of its own there while it lives. A
/// node opening the directory deletes the spill files of every node whose
/// lock nobody holds: a node that is gone (killed, or its host restarted)
/// leaves no files behind for long.
///
/// Not thread-safe: one node's store uses it, from one thread.
class spill_directory : public std::enable_shared_from_this<spill_directory> {
public:
  /// Opens `dir` for the spill files of `node`, making it (private to this
  /// user) if it does not exist, and deletes the files of nodes that are
  /// gone. Throws `std::system_error` if the directory cannot be made or
  /// the node's lock cannot be taken.
  static std::shared_ptr<spill_directory> open(const std::string& dir,
                                               const node_id& node);

  ~spill_directory();

  spill_directory(const spill_directory&) = delete;
  spill_directory& operator=(const spill_directory&) = delete;

  /// The bytes of one object to write.
  struct part {
    const char* data = nullptr;
    std::uint64_t size = 0;
  };

  /// Writes `parts` one after another into a new file: the first at offset
  /// 0, each next one where the one before ends. Returns the file, or
  /// nullptr and in `why` the reason (the disk is full, the directory is
  /// gone); a file that could not be written whole is deleted.
  std::shared_ptr<spill_file> write(const std::vector<part>& parts,
                                    std::string& why);

  /// The directory.
  const std::string& path() const noexcept {
    return dir_;
  }

  /// Spill files of this node that exist now.
  std::uint64_t files() const noexcept {
    return files_;
  }

  /// Their bytes.
  std::uint64_t bytes() const noexcept {
    return bytes_;
  }

  /// Files of nodes that were gone, deleted when this one opened the
  /// directory.
  std::uint64_t swept() const noexcept {
    return swept_;
  }

private:
  friend class spill_file;

  spill_directory(std::string dir, std::string prefix, int lock_fd,
                  std::uint64_t swept);

  void file_gone(std::uint64_t size) noexcept;

  std::string dir_;
  /// "prism-<node>-": what this node's files are named from.
  std::string prefix_;
  int lock_fd_;
  std::uint64_t next_file_ = 1;
  std::uint64_t files_ = 0;
  std::uint64_t bytes_ = 0;
  std::uint64_t swept_ = 0;
};

} // namespace prism::actors
