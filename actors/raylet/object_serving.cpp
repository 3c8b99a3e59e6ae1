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

protocol::object_chunk read_stored(raylet_actor* self,
                                   const protocol::pull_object& msg) {
  auto& st = self->state;
  protocol::object_chunk chunk;
  chunk.id = msg.id;
  chunk.offset = msg.offset;
  auto value = st.objects.find(msg.id);
  if (value == nullptr) {
    chunk.error.code = errc::object_lost;
    chunk.error.message = "the object store of node " + st.cfg.node.hex() +
                          " has no copy of object " + msg.id.hex();
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
  auto from = value->bytes->begin() + static_cast<std::ptrdiff_t>(msg.offset);
  chunk.part.bytes = std::make_shared<detail::byte_buffer>(
      from, from + static_cast<std::ptrdiff_t>(n));
  if (msg.offset == 0) {
    chunk.part.tag = value->tag;
    chunk.part.refs = value->refs;
  }
  return chunk;
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
      static_cast<std::uint64_t>(objects.size()), objects.bytes()};
}

} // namespace prism::actors::raylet_internal
