#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "prism/detail/value.hpp"
#include "prism/ids.hpp"
#include "prism/internal/object_arena.hpp"
#include "raylet/spill_directory.hpp"

namespace prism::actors {

/// The object store of one node: the values of large task results and `put`
/// objects, too large to pass inline, kept until their owner frees them.
/// Each copy remembers the run of the task that made it (0 for a put), so
/// that the free of a stale run does not drop the copy of a later one.
///
/// Its memory is bounded: an arena (shared memory, which readers on the
/// node's host map), or a count of bytes. When a value does not fit, the
/// store spills objects to disk to make room: primary copies before
/// secondary ones, and the least recently used first, never one a reader
/// has pinned. Small objects spilled together share a file. A value that
/// still does not fit goes to disk itself. Spilled objects are read back
/// from their files.
class node_object_store {
public:
  // -- member types -----------------------------------------------------------

  /// Which copy of an object the store keeps: the one its task or `put`
  /// made, or one read from another node's store.
  enum class copy_kind : std::uint8_t { primary, secondary };

  /// Where the store keeps its objects.
  struct settings {
    /// Set: values lie in this shared memory, which bounds them.
    std::shared_ptr<internal::object_arena> arena;
    /// Without an arena: the payload bytes kept in memory at most; 0 is
    /// no bound.
    std::uint64_t capacity = 0;
    /// Where objects spill; nullptr: nothing spills, and a value that does
    /// not fit is refused.
    std::shared_ptr<spill_directory> spill;
    /// Spilling writes at least this many bytes at once, while there are
    /// objects to spill: small objects share a file.
    std::uint64_t min_spill_bytes = 16 * 1024 * 1024;
  };

  /// One object in the store.
  struct stored_object {
    /// Its tag and refs always; its bytes while they are in memory.
    detail::value value;
    /// The payload's size, in memory or not.
    std::uint64_t size = 0;
    /// The run of the task that made it.
    std::int32_t attempt = 0;
    copy_kind kind = copy_kind::primary;
    /// When it was last kept or read (the store's clock).
    std::uint64_t used = 0;
    /// Set once spilled: the file, and where in it the payload starts.
    std::shared_ptr<spill_file> file;
    std::uint64_t file_offset = 0;

    bool in_memory() const noexcept {
      return size == 0 || !value.bytes.empty();
    }
  };

  /// What the store has done since it was made.
  struct counters {
    std::uint64_t spilled_objects = 0;
    std::uint64_t spilled_bytes = 0;
    std::uint64_t restored_objects = 0;
    std::uint64_t restored_bytes = 0;
    std::uint64_t spill_failures = 0;
  };

  // -- constructors -----------------------------------------------------------

  /// A store that keeps everything on the heap, unbounded.
  node_object_store() = default;

  explicit node_object_store(settings s) : settings_(std::move(s)) {}

  // -- keeping and freeing ----------------------------------------------------

  /// Keeps `value` as `id`, made by run `attempt` of its task, replacing
  /// any copy kept before: in memory if room can be made there by spilling
  /// others, else on disk. Returns an empty string once kept; otherwise why
  /// not (no room and nowhere to spill, or the disk failed), and an earlier
  /// copy stays.
  [[nodiscard]] std::string keep(const object_id& id, detail::value value,
                                 std::int32_t attempt,
                                 copy_kind kind = copy_kind::primary);

  /// Drops the copy of `id` if run `attempt` made it; returns whether it
  /// did. It is not an error if the store does not have `id`.
  bool free(const object_id& id, std::int32_t attempt);

  /// Drops every object (fault injection: the node's store is lost).
  void clear() noexcept;

  // -- reading ----------------------------------------------------------------

  /// What the store keeps as `id`, or nullptr if it does not have it.
  const stored_object* find(const object_id& id) const;

  /// The `n` bytes of `id`'s payload from `offset`: shared from memory, or
  /// read back from disk into a buffer of their own. Empty bytes and in
  /// `why` the reason if `id` is missing or its file cannot be read.
  /// REQUIRES: `offset + n` is within the payload.
  detail::shared_bytes read(const object_id& id, std::uint64_t offset,
                            std::uint64_t n, std::string& why);

  /// The bytes of `id` where they lie in the arena, read back into it first
  /// if they were spilled; empty if they cannot lie there (no arena, no
  /// room, or a failed read).
  detail::shared_bytes in_arena(const object_id& id);

  /// Room for `n` bytes in the arena, made by spilling others if need be;
  /// nullptr if there is no arena or no room can be made.
  std::shared_ptr<char> room(std::uint64_t n);

  /// The bytes at `data`, in the arena, are read by a process on the host
  /// (one call per reader) until `unpin`: the object they belong to is
  /// never spilled meanwhile.
  void pin(const char* data);
  void unpin(const char* data);

  // -- observers --------------------------------------------------------------

  /// The arena values are kept in; nullptr if none.
  const std::shared_ptr<internal::object_arena>& arena() const noexcept {
    return settings_.arena;
  }

  /// Where the payload of `value` lies in the arena; nullopt if it lies
  /// elsewhere (or is empty).
  std::optional<std::uint64_t> arena_offset(const detail::value& value) const;

  /// Calls `f(id, object)` for every object the store keeps.
  template <class F>
  void for_each(F&& f) const {
    for (const auto& [id, o] : objects_)
      f(id, o);
  }

  /// How many objects the store keeps.
  std::size_t size() const noexcept {
    return objects_.size();
  }

  /// The payload bytes of every object the store keeps, in memory or not.
  std::uint64_t bytes() const noexcept {
    return bytes_;
  }

  /// The payload bytes the store holds in memory.
  std::uint64_t bytes_in_memory() const noexcept {
    return in_memory_;
  }

  /// Objects kept only on disk, and their payload bytes.
  std::uint64_t spilled_now() const noexcept {
    return spilled_now_;
  }
  std::uint64_t spilled_bytes_now() const noexcept {
    return bytes_ - in_memory_;
  }

  const counters& totals() const noexcept {
    return totals_;
  }

  /// Why the last spill failed; empty if none has.
  const std::string& last_spill_error() const noexcept {
    return last_spill_error_;
  }

  /// Where objects spill; nullptr if nowhere.
  const std::shared_ptr<spill_directory>& spill() const noexcept {
    return settings_.spill;
  }

private:
  // -- memory -----------------------------------------------------------------

  /// Whether `n` more bytes fit in memory without an arena.
  bool fits_on_heap(std::uint64_t n) const noexcept;

  /// Moves `value`'s bytes into memory the store may hold (the arena, or
  /// the heap within its bound), spilling others to make room. Returns
  /// false if no room can be made.
  bool place(detail::value& value);

  /// Spills objects in memory, not pinned, in the order they should go,
  /// until at least `n` bytes (and `min_spill_bytes`) are written, or none
  /// is left. Returns how many objects it spilled.
  std::size_t spill_some(std::uint64_t n);

  /// Writes `value` alone to a new spill file; nullptr and `why` on
  /// failure.
  std::shared_ptr<spill_file> spill_alone(const detail::value& value,
                                          std::string& why);

  /// The object's bytes leave memory (they are on disk now).
  void drop_bytes(stored_object& o) noexcept;

  /// The object's bytes are in memory again.
  void take_bytes(stored_object& o, detail::shared_bytes bytes) noexcept;

  void forget(stored_object& o) noexcept;

  bool pinned(const stored_object& o) const noexcept;

  settings settings_;
  std::unordered_map<object_id, stored_object> objects_;
  /// Readers of bytes in the arena, by where the bytes start.
  std::unordered_map<const char*, std::uint32_t> pins_;
  std::uint64_t bytes_ = 0;
  std::uint64_t in_memory_ = 0;
  std::uint64_t spilled_now_ = 0;
  std::uint64_t clock_ = 0;
  counters totals_;
  std::string last_spill_error_;
};

} // namespace prism::actors
