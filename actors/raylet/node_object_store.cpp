#include "raylet/node_object_store.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

namespace prism::actors {

namespace {

// Bytes of their own, not zero-filled first (they are read into at once).
std::pair<std::shared_ptr<char>, detail::shared_bytes>
fresh_bytes(std::uint64_t n) {
  std::shared_ptr<char> buf{new char[n], std::default_delete<char[]>()};
  auto* data = buf.get();
  return {buf, detail::shared_bytes{std::shared_ptr<const void>{buf}, data, n}};
}

} // namespace

// -- keeping and freeing ------------------------------------------------------

std::string node_object_store::keep(const object_id& id, detail::value value,
                                    std::int32_t attempt, copy_kind kind) {
  stored_object fresh;
  fresh.size = value.size();
  fresh.attempt = attempt;
  fresh.kind = kind;
  fresh.used = ++clock_;
  if (fresh.size > 0 && !place(value)) {
    // No room in memory, even with every other object spilled: to disk.
    std::string why;
    fresh.file = spill_alone(value, why);
    if (!fresh.file)
      return why;
    totals_.spilled_objects += 1;
    totals_.spilled_bytes += fresh.size;
    value.bytes = {};
  }
  fresh.value = std::move(value);
  auto [slot, first] = objects_.try_emplace(id);
  if (!first)
    forget(slot->second);
  slot->second = std::move(fresh);
  auto& o = slot->second;
  bytes_ += o.size;
  if (o.in_memory()) {
    in_memory_ += o.size;
  } else {
    spilled_now_ += 1;
  }
  return {};
}

bool node_object_store::free(const object_id& id, std::int32_t attempt) {
  auto i = objects_.find(id);
  if (i == objects_.end() || i->second.attempt != attempt)
    return false;
  forget(i->second);
  objects_.erase(i);
  return true;
}

void node_object_store::clear() noexcept {
  objects_.clear();
  bytes_ = 0;
  in_memory_ = 0;
  spilled_now_ = 0;
}

// -- reading ------------------------------------------------------------------

const node_object_store::stored_object*
node_object_store::find(const object_id& id) const {
  auto i = objects_.find(id);
  return i != objects_.end() ? &i->second : nullptr;
}

detail::shared_bytes node_object_store::read(const object_id& id,
                                             std::uint64_t offset,
                                             std::uint64_t n,
                                             std::string& why) {
  auto i = objects_.find(id);
  if (i == objects_.end()) {
    why = "the store has no copy of object " + id.hex();
    return {};
  }
  auto& o = i->second;
  o.used = ++clock_;
  if (o.in_memory())
    return o.value.bytes.slice(offset, n);
  auto [buf, bytes] = fresh_bytes(n);
  why = o.file->read(o.file_offset + offset, buf.get(), n);
  if (!why.empty())
    return {};
  return bytes;
}

detail::shared_bytes node_object_store::in_arena(const object_id& id) {
  auto i = objects_.find(id);
  if (!settings_.arena || i == objects_.end() || i->second.size == 0)
    return {};
  auto& o = i->second;
  o.used = ++clock_;
  if (o.in_memory())
    return arena_offset(o.value) ? o.value.bytes : detail::shared_bytes{};
  // Spilled: read back into the arena. Making room spills only objects in
  // memory, never this one, and adds none: `o` stays where it is.
  auto block = room(o.size);
  if (!block)
    return {};
  if (!o.file->read(o.file_offset, block.get(), o.size).empty())
    return {};
  auto* data = block.get();
  take_bytes(o,
             detail::shared_bytes{std::shared_ptr<const void>{std::move(block)},
                                  data, o.size});
  totals_.restored_objects += 1;
  totals_.restored_bytes += o.size;
  return o.value.bytes;
}

std::shared_ptr<char> node_object_store::room(std::uint64_t n) {
  const auto& arena = settings_.arena;
  if (!arena || n > arena->capacity() - internal::object_arena::header_bytes)
    return nullptr; // Spilling everything would not make room that large.
  for (;;) {
    if (auto block = settings_.arena->allocate(n))
      return block;
    if (spill_some(n) == 0)
      return nullptr;
  }
}

void node_object_store::pin(const char* data) {
  ++pins_[data];
}

void node_object_store::unpin(const char* data) {
  auto i = pins_.find(data);
  if (i != pins_.end() && --i->second == 0)
    pins_.erase(i);
}

// -- observers ----------------------------------------------------------------

std::optional<std::uint64_t>
node_object_store::arena_offset(const detail::value& value) const {
  const auto& arena = settings_.arena;
  if (!arena || value.bytes.empty() || !arena->holds(value.bytes.data()))
    return std::nullopt;
  return arena->offset_of(value.bytes.data());
}

// -- memory -------------------------------------------------------------------

bool node_object_store::fits_on_heap(std::uint64_t n) const noexcept {
  return settings_.capacity == 0 ||
         (n <= settings_.capacity && in_memory_ <= settings_.capacity - n);
}

bool node_object_store::place(detail::value& value) {
  auto n = value.size();
  if (settings_.arena) {
    if (arena_offset(value))
      return true; // Written into room of this store already.
    auto block = room(n);
    if (!block)
      return false;
    std::memcpy(block.get(), value.bytes.data(), n);
    auto* data = block.get();
    value.bytes = detail::shared_bytes{
        std::shared_ptr<const void>{std::move(block)}, data, n};
    return true;
  }
  if (settings_.capacity > 0 && n > settings_.capacity)
    return false; // Spilling everything would not make room that large.
  while (!fits_on_heap(n))
    if (spill_some(in_memory_ + n - settings_.capacity) == 0)
      return false;
  return true;
}

std::size_t node_object_store::spill_some(std::uint64_t n) {
  if (!settings_.spill)
    return 0;
  // Primary copies first (a secondary one is read again sooner, from here
  // rather than from another node), then the least recently used.
  std::vector<stored_object*> order;
  for (auto& [id, o] : objects_)
    if (o.size > 0 && o.in_memory() && !pinned(o))
      order.push_back(&o);
  std::sort(order.begin(), order.end(), [](auto* x, auto* y) {
    return x->kind != y->kind ? x->kind == copy_kind::primary
                              : x->used < y->used;
  });
  auto goal = std::max(n, settings_.min_spill_bytes);
  std::vector<stored_object*> batch;
  std::vector<spill_directory::part> parts;
  std::uint64_t freed = 0;
  for (auto* o : order) {
    if (freed >= goal)
      break;
    batch.push_back(o);
    freed += o->size;
    if (!o->file) // Read back earlier, it is on disk still.
      parts.push_back({o->value.bytes.data(), o->size});
  }
  std::shared_ptr<spill_file> file;
  if (!parts.empty()) {
    std::string why;
    file = settings_.spill->write(parts, why);
    if (!file) {
      totals_.spill_failures += 1;
      last_spill_error_ = std::move(why);
      return 0;
    }
  }
  std::uint64_t offset = 0;
  for (auto* o : batch) {
    if (!o->file) {
      o->file = file;
      o->file_offset = offset;
      offset += o->size;
      totals_.spilled_objects += 1;
      totals_.spilled_bytes += o->size;
    }
    drop_bytes(*o);
  }
  return batch.size();
}

std::shared_ptr<spill_file>
node_object_store::spill_alone(const detail::value& value, std::string& why) {
  if (!settings_.spill) {
    why = "the store has no room for " + std::to_string(value.size()) +
          " bytes and no spill directory";
    return nullptr;
  }
  auto file = settings_.spill->write({{value.bytes.data(), value.size()}}, why);
  if (!file) {
    totals_.spill_failures += 1;
    last_spill_error_ = why;
  }
  return file;
}

void node_object_store::drop_bytes(stored_object& o) noexcept {
  o.value.bytes = {};
  in_memory_ -= o.size;
  spilled_now_ += 1;
}

void node_object_store::take_bytes(stored_object& o,
                                   detail::shared_bytes bytes) noexcept {
  o.value.bytes = std::move(bytes);
  in_memory_ += o.size;
  spilled_now_ -= 1;
}

void node_object_store::forget(stored_object& o) noexcept {
  bytes_ -= o.size;
  if (o.in_memory()) {
    in_memory_ -= o.size;
  } else {
    spilled_now_ -= 1;
  }
}

bool node_object_store::pinned(const stored_object& o) const noexcept {
  return !o.value.bytes.empty() && pins_.count(o.value.bytes.data()) > 0;
}

} // namespace prism::actors
