// The node's object store as the node's workers and owners use it: large task
// results and puts are kept here, read, freed, and (fault injection) lost.

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
  self->send(msg.reply_to, std::move(done));
  return true;
}

protocol::object_reply read_stored(raylet_actor* self, const object_id& id) {
  auto& st = self->state;
  protocol::object_reply reply;
  reply.id = id;
  if (auto value = st.objects.find(id)) {
    reply.ok = true;
    reply.result = *value;
  } else {
    reply.error.code = errc::object_lost;
    reply.error.message = "the object store of node " + st.cfg.node.hex() +
                          " does not hold object " + id.hex();
  }
  return reply;
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
