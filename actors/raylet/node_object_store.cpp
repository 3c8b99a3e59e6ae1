#include "raylet/node_object_store.hpp"

namespace prism::actors {

void node_object_store::keep(const object_id& id, detail::value value,
                             std::int32_t attempt) {
  auto& slot = objects_[id];
  bytes_ -= slot.value.size();
  bytes_ += value.size();
  slot = stored_object{std::move(value), attempt};
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
