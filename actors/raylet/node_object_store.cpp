#include "raylet/node_object_store.hpp"

#include <cstring>

namespace prism::actors {

void node_object_store::keep(const object_id& id, detail::value value,
                             std::int32_t attempt) {
  // Into the arena, where the node's other processes read it in place.
  if (arena_ && !value.bytes.empty() && !arena_offset(value)) {
    if (auto block = arena_->allocate(value.size())) {
      std::memcpy(block.get(), value.bytes.data(), value.size());
      auto* data = block.get();
      value.bytes = detail::shared_bytes{
          std::shared_ptr<const void>{std::move(block)}, data, value.size()};
    }
  }
  auto& slot = objects_[id];
  bytes_ -= slot.value.size();
  bytes_ += value.size();
  slot = stored_object{std::move(value), attempt};
}

std::optional<std::uint64_t>
node_object_store::arena_offset(const detail::value& value) const {
  if (!arena_ || value.bytes.empty() || !arena_->holds(value.bytes.data()))
    return std::nullopt;
  return arena_->offset_of(value.bytes.data());
}

const detail::value* node_object_store::find(const object_id& id) const {
  auto i = objects_.find(id);
  return i != objects_.end() ? &i->second.value : nullptr;
}

bool node_object_store::free(const object_id& id, std::int32_t attempt) {
  auto i = objects_.find(id);
  if (i == objects_.end() || i->second.attempt != attempt)
    return false;
  bytes_ -= i->second.value.size();
  objects_.erase(i);
  return true;
}

void node_object_store::clear() noexcept {
  objects_.clear();
  bytes_ = 0;
}

} // namespace prism::actors
