#pragma once

#include <cstdint>
#include <unordered_map>

#include "prism/detail/value.hpp"
#include "prism/ids.hpp"

namespace prism::actors {

/// The object store of one node: the values of large task results and `put`
/// objects, too large to pass inline, kept until their owner frees them.
/// Each copy remembers the run of the task that made it (0 for a put), so
/// that the free of a stale run does not drop the copy of a later one.
class node_object_store {
public:
  /// Keeps `value` as `id`, made by run `attempt` of its task; replaces any
  /// copy kept before.
  void keep(const object_id& id, detail::value value, std::int32_t attempt);

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

  std::unordered_map<object_id, stored_object> objects_;
  std::uint64_t bytes_ = 0;
};

} // namespace prism::actors
