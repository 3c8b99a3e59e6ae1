// The node's object store as the node's workers and owners use it: large task
// results and puts are kept here, read, freed, and (fault injection) lost.

#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>

#include "raylet/raylet_state.hpp"

namespace prism::actors::raylet_internal {

bool keep_result(raylet_actor* self, protocol::seal_result& msg) {
  auto& done = msg.done;
  auto refs = done.result.refs;
  self->state.objects.keep(object_id{done.task, 1}, std::move(done.result),
                           done.attempt);
  // The owner keeps the refs inside the value alive while it lives.
  done.result = detail::value{};
  done.result.refs = std::move(refs);
  done.stored_at = self->state.cfg.node;
  done.store = self_handle(self);
  done.store_contact = self->state.contact;
  self->send(msg.reply_to, std::move(done));
  return true;
}

namespace {

// Pins `bytes`, which lie in the store's shared memory, for `reader` until
// it unmaps them or is gone, and says in `out` where they lie.
void pin_for(raylet_actor* self, const caf::actor_addr& reader,
             detail::shared_bytes bytes, protocol::object_mapped& out) {
  auto& st = self->state;
  const auto& arena = *st.objects.arena();
  out.ok = true;
  out.arena_path = arena.path();
  out.arena_bytes = arena.capacity();
  out.arena_mark = arena.mark();
  out.offset = arena.offset_of(bytes.data());
  out.size = bytes.size();
  do
    out.pin = unique_id::random().lo;
  while (out.pin == 0 || st.mapped.count(out.pin) > 0);
  auto [pins, first] = st.mapped_by_reader.try_emplace(reader);
  if (first)
    self->monitor(reader);
  pins->second.insert(out.pin);
  st.mapped.emplace(out.pin,
                    raylet_state::mapped_read{reader, std::move(bytes)});
}

// What a read of `id` gets when the store has no copy of it.
detail::error_info no_copy(raylet_actor* self, const object_id& id) {
  detail::error_info e;
  e.code = errc::object_lost;
  e.message = "the object store of node " + self->state.cfg.node.hex() +
              " has no copy of object " + id.hex();
  return e;
}

} // namespace

protocol::object_chunk read_stored(raylet_actor* self,
                                   const protocol::pull_object& msg) {
  auto& st = self->state;
  protocol::object_chunk chunk;
  chunk.id = msg.id;
  chunk.offset = msg.offset;
  auto value = st.objects.find(msg.id);
  if (value == nullptr) {
    chunk.error = no_copy(self, msg.id);
    return chunk;
  }
  chunk.total = value->size();
  if (msg.max_bytes == 0 || msg.offset > chunk.total) {
    chunk.error.code = errc::invalid_argument;
    chunk.error.message = "a read of object " + msg.id.hex() + " asked for " +
                          std::to_string(msg.max_bytes) + " bytes at " +
                          std::to_string(msg.offset) + " of its " +
                          std::to_string(chunk.total);
    return chunk;
  }
  chunk.ok = true;
  if (msg.offset == 0 && msg.max_bytes >= chunk.total) {
    chunk.part = *value;
    return chunk;
  }
  auto n = std::min(msg.max_bytes, chunk.total - msg.offset);
  chunk.part.bytes = value->bytes.slice(msg.offset, n);
  if (msg.offset == 0) {
    chunk.part.tag = value->tag;
    chunk.part.refs = value->refs;
  }
  return chunk;
}

protocol::object_mapped map_stored(raylet_actor* self,
                                   const protocol::map_object& msg) {
  auto& st = self->state;
  protocol::object_mapped out;
  out.id = msg.id;
  auto value = st.objects.find(msg.id);
  if (value == nullptr) {
    out.error = no_copy(self, msg.id);
    return out;
  }
  auto sender = self->current_sender();
  if (!st.objects.arena_offset(*value) || sender == nullptr)
    return out; // Kept outside the shared memory: read in chunks.
  out.tag = value->tag;
  out.refs = value->refs;
  pin_for(self, sender->address(), value->bytes, out);
  return out;
}

protocol::object_mapped create_stored(raylet_actor* self,
                                      const protocol::create_object& msg) {
  auto& st = self->state;
  protocol::object_mapped out;
  out.id = msg.id;
  auto sender = self->current_sender();
  const auto& arena = st.objects.arena();
  if (!arena || sender == nullptr || msg.size == 0)
    return out;
  auto block = arena->allocate(msg.size);
  if (!block)
    return out; // No room: the owner assembles the value in its memory.
  auto* data = block.get();
  pin_for(self, sender->address(),
          detail::shared_bytes{std::shared_ptr<const void>{std::move(block)},
                               data, msg.size},
          out);
  return out;
}

caf::result<std::string> seal_stored(raylet_actor* self,
                                     protocol::seal_object& msg) {
  auto& st = self->state;
  auto m = st.mapped.find(msg.pin);
  if (m == st.mapped.end())
    return caf::make_error(caf::sec::invalid_argument,
                           "object " + msg.id.hex() +
                               ": no room of this node's store is pinned as " +
                               std::to_string(msg.pin));
  detail::value value;
  value.tag = msg.tag;
  value.bytes = m->second.bytes;
  value.refs = std::move(msg.refs);
  st.objects.keep(msg.id, std::move(value), msg.attempt);
  return st.contact;
}

void unmap(raylet_actor* self, std::uint64_t pin) {
  auto& st = self->state;
  auto m = st.mapped.find(pin);
  if (m == st.mapped.end())
    return;
  if (auto r = st.mapped_by_reader.find(m->second.reader);
      r != st.mapped_by_reader.end())
    r->second.erase(pin);
  st.mapped.erase(m);
}

void unmap_all(raylet_actor* self, const caf::actor_addr& reader) {
  auto& st = self->state;
  auto r = st.mapped_by_reader.find(reader);
  if (r == st.mapped_by_reader.end())
    return;
  for (auto pin : r->second)
    st.mapped.erase(pin);
  st.mapped_by_reader.erase(r);
}

std::uint64_t drop_objects(raylet_actor* self) {
  auto& st = self->state;
  auto dropped = static_cast<std::uint64_t>(st.objects.size());
  st.log->warn("object store: dropping {} object(s), {} bytes (fault "
               "injection)",
               dropped, st.objects.bytes());
  st.objects.clear();
  return dropped;
}

protocol::object_store_usage object_usage(raylet_actor* self) {
  auto& objects = self->state.objects;
  return protocol::object_store_usage{
      static_cast<std::uint64_t>(objects.size()), objects.bytes(),
      objects.arena() ? objects.arena()->used() : 0,
      static_cast<std::uint64_t>(self->state.mapped.size())};
}

} // namespace prism::actors::raylet_internal
