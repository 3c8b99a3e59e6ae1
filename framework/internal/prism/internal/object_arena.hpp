#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>

#include "prism/ids.hpp"
#include "prism/internal/thread_annotations.hpp"

namespace prism::internal {

/// The memory of one node's object store: one shared mapping of a fixed
/// capacity, made once, that the node's stored objects are cut from. Memory
/// freed is handed out again before fresh memory, and fresh memory is
/// faulted in one call when first handed out, so a store that keeps and
/// frees large objects writes into memory already faulted in (a fresh
/// buffer costs a page fault per 4 KB, most of what writing it costs).
/// Readers on the same host map it read-only (`arena_view`) and read
/// objects in place.
///
/// Thread-safe: a block may be freed from any thread (the last reader of
/// its bytes may be a network thread writing them out).
class object_arena : public std::enable_shared_from_this<object_arena> {
public:
  /// Blocks start at multiples of this.
  static constexpr std::uint64_t alignment = 64;

  /// The first bytes of the mapping, before any block: what a reader checks
  /// before trusting a mapping it opened.
  static constexpr std::uint64_t header_bytes = 4096;

  /// Makes an arena of `capacity` bytes (rounded up to whole pages) in an
  /// anonymous shared memory file, marked with `mark`, which readers check.
  /// Costs no memory until blocks are handed out. Throws `std::system_error`
  /// if the system refuses the file or the mapping.
  static std::shared_ptr<object_arena> create(std::uint64_t capacity,
                                              const unique_id& mark);

  ~object_arena();

  object_arena(const object_arena&) = delete;
  object_arena& operator=(const object_arena&) = delete;

  /// Room for `n` bytes (at least 1), writable by the caller until it shares
  /// them, and given back to the arena when the last copy of the returned
  /// pointer goes. Returns nullptr if the arena has no free range that
  /// large.
  std::shared_ptr<char> allocate(std::uint64_t n);

  /// Whether `p` points into this arena's mapping.
  bool holds(const char* p) const noexcept {
    return p >= base_ && p < base_ + capacity_;
  }

  /// The offset of `p`, a pointer into a block of this arena, from the start
  /// of the mapping (what a reader's `arena_view::at` takes).
  std::uint64_t offset_of(const char* p) const noexcept {
    return static_cast<std::uint64_t>(p - base_);
  }

  /// The mapping's size, header included.
  std::uint64_t capacity() const noexcept {
    return capacity_;
  }

  /// Bytes handed out and not yet given back (rounded up to the alignment).
  std::uint64_t used() const;

  /// How far into the mapping memory was ever handed out: the memory
  /// faulted in.
  std::uint64_t faulted() const;

  /// Where another process on this host opens the arena:
  /// `/proc/<pid>/fd/<fd>`.
  const std::string& path() const noexcept {
    return path_;
  }

  /// What marks this arena's header.
  const unique_id& mark() const noexcept {
    return mark_;
  }

private:
  object_arena(int fd, char* base, std::uint64_t capacity,
               const unique_id& mark);

  void release(std::uint64_t offset);

  /// Takes `[offset, offset + n)` out of the free range it lies at the
  /// start of. REQUIRES: `mu_` held.
  void take(std::uint64_t offset, std::uint64_t size, std::uint64_t n)
      EXCLUSIVE_LOCKS_REQUIRED(mu_);

  int fd_;
  char* base_;
  std::uint64_t capacity_;
  unique_id mark_;
  std::string path_;

  mutable std::mutex mu_;
  /// Free ranges by offset (for merging neighbours) and by size (for the
  /// smallest that fits, at the lowest offset among equals).
  std::map<std::uint64_t, std::uint64_t> free_by_offset_ GUARDED_BY(mu_);
  std::set<std::pair<std::uint64_t, std::uint64_t>>
      free_by_size_ GUARDED_BY(mu_);
  /// Blocks handed out: offset and size.
  std::unordered_map<std::uint64_t, std::uint64_t> blocks_ GUARDED_BY(mu_);
  std::uint64_t used_ GUARDED_BY(mu_) = 0;
  std::uint64_t faulted_ GUARDED_BY(mu_) = header_bytes;
};

/// A node's arena as a process on the same host maps it, checked against
/// the mark the node gave: to read the blocks the node names, and, mapped
/// `writable`, to write the blocks the node hands it to fill. Unmapped when
/// the last copy goes.
class arena_view {
public:
  /// Maps the arena at `path` of `capacity` bytes if its header carries
  /// `mark`; otherwise returns nullptr and says why in `why` (another host's
  /// node, a node gone since, a file that is no arena).
  static std::shared_ptr<const arena_view>
  open(const std::string& path, std::uint64_t capacity, const unique_id& mark,
       std::string& why, bool writable = false);

  ~arena_view();

  arena_view(const arena_view&) = delete;
  arena_view& operator=(const arena_view&) = delete;

  /// The bytes at `offset`, or nullptr if `[offset, offset + n)` is not
  /// inside the arena's blocks.
  const char* at(std::uint64_t offset, std::uint64_t n) const noexcept;

  /// What marks the arena mapped.
  const unique_id& mark() const noexcept {
    return mark_;
  }

  /// Where it was mapped from, and how large it is.
  const std::string& path() const noexcept {
    return path_;
  }
  std::uint64_t capacity() const noexcept {
    return capacity_;
  }

  /// The view of this process that maps the `n` bytes at `p`, if one does,
  /// and their offset in it: for a process that hands bytes it read in
  /// place on to another process on its host.
  static std::shared_ptr<const arena_view>
  containing(const char* p, std::size_t n, std::uint64_t& offset);

  /// As `at`, to write; nullptr if not mapped `writable`.
  char* writable_at(std::uint64_t offset, std::uint64_t n) const noexcept {
    return writable_ ? const_cast<char*>(at(offset, n)) : nullptr;
  }

private:
  arena_view(char* base, std::uint64_t capacity, const unique_id& mark,
             bool writable, std::string path)
      : base_(base), capacity_(capacity), mark_(mark), writable_(writable),
        path_(std::move(path)) {}

  char* base_;
  std::uint64_t capacity_;
  unique_id mark_;
  bool writable_;
  std::string path_;
};

} // namespace prism::internal
