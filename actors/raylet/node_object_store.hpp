#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>

#include "prism/detail/value.hpp"
#include "prism/ids.hpp"
#include "prism/internal/object_arena.hpp"

namespace prism::actors {

/// The object store of one node: the values of large task results and `put`
/// objects, too large to pass inline, kept until their owner frees them.
/// Each copy remembers the run of the task that made it (0 for a put), so
/// that the free of a stale run does not drop the copy of a later one.
///
/// With an arena, values are kept in it while it has room, where readers on
/// the node's host map them; past its room, and without one, on the heap.
class node_object_store {
public:
  node_object_store() = default;

  explicit node_object_store(std::shared_ptr<internal::object_arena> arena)
      : arena_(std::move(arena)) {}

  /// Keeps `value` as `id`, made by run `attempt` of its task; replaces any
  /// copy kept before.
  void keep(const object_id& id, detail::value value, std::int32_t attempt);

  /// The arena values are kept in; nullptr if none.
  const std::shared_ptr<internal::object_arena>& arena() const noexcept {
    return arena_;
  }

  /// Where the payload of `value`, a value this store keeps, lies in the
  /// arena; nullopt if it lies elsewhere (or is empty).
  std::optional<std::uint64_t> arena_offset(const detail::value& value) const;

  /// Returns the value kept as `id`, or nullptr if the store does not have
  /// it.
  const detail::value* find(const object_id& id) const;

  /// Drops the copy of `id` if run `attempt` made it; returns whether it
  /// did. It is not an error if the store does not have `id`.
  bool free(const object_id& id, std::int32_t attempt);

  /// Drops every object (fault injection: the node's store is lost).
  void clear() noexcept;

  /// Calls `f(id, value, attempt)` for every object the store keeps.
  template <class F>
  void for_each(F&& f) const {
    for (const auto& [id, o] : objects_)
      f(id, o.value, o.attempt);
  }

  /// How many objects the store keeps.
  std::size_t size() const noexcept {
    return objects_.size();
  }

  /// The payload bytes of every value the store keeps.
  std::uint64_t bytes() const noexcept {
    return bytes_;
  }

private:
  /// One object in the store, and the run of the task that made it.
  struct stored_object {
    detail::value value;
    std::int32_t attempt = 0;
  };

  std::shared_ptr<internal::object_arena> arena_;
  std::unordered_map<object_id, stored_object> objects_;
  std::uint64_t bytes_ = 0;
};

} // namespace prism::actors
