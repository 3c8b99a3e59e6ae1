// The node's object store as the node's workers and owners use it: large task
// results and puts are kept here, read, freed, and (fault injection) lost.

#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>

#include "raylet/raylet_state.hpp"

namespace prism::actors::raylet_internal {

namespace {

using copy_kind = node_object_store::copy_kind;

/// How often waiting keeps are tried again, whatever else happens.
constexpr auto room_check_interval = std::chrono::milliseconds{100};

// Says in the log what the store spilled or read back while doing something.
struct spill_logger {
  raylet_actor* self;
  node_object_store::counters before;

  explicit spill_logger(raylet_actor* self)
      : self(self), before(self->state.objects.totals()) {}

  ~spill_logger() {
    const auto& st = self->state;
    const auto& now = st.objects.totals();
    if (now.spilled_objects != before.spilled_objects)
      st.log->info("object store: spilled {} object(s), {} bytes, to {}",
                   now.spilled_objects - before.spilled_objects,
                   now.spilled_bytes - before.spilled_bytes,
                   st.objects.spill()->path());
    if (now.restored_objects != before.restored_objects)
      st.log->debug("object store: read back {} object(s), {} bytes",
                    now.restored_objects - before.restored_objects,
                    now.restored_bytes - before.restored_bytes);
  }
};

detail::error_info store_full(raylet_actor* self,
                              const raylet_state::waiting_keep& w) {
  const auto& st = self->state;
  const auto& objects = st.objects;
  auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - w.since);
  detail::error_info e;
  e.code = errc::object_store_full;
  e.message = "object " + w.id.hex() + " (" + std::to_string(w.value.size()) +
              " bytes) found the object store of node " + st.cfg.node.hex() +
              " full for " + std::to_string(waited.count()) +
              " ms: " + std::to_string(objects.bytes_in_memory()) +
              " bytes in memory, " +
              std::to_string(objects.spilled_bytes_now()) + " spilled";
  if (!objects.spill())
    e.message += ", and it has no spill directory";
  else if (!objects.last_spill_error().empty())
    e.message += "; spilling failed: " + objects.last_spill_error();
  return e;
}

void check_room_later(raylet_actor* self) {
  auto& st = self->state;
  if (st.room_check_due || st.waiting_keeps.empty())
    return;
  st.room_check_due = true;
  self->delayed_send(self, room_check_interval, room_atom::value);
}

// Keeps `value` now if nothing waits before it and there is room, else has
// it wait for room; `done` takes the outcome.
void keep_or_wait(raylet_actor* self, const object_id& id, detail::value value,
                  std::int32_t attempt, copy_kind kind,
                  std::function<void(detail::error_info)> done) {
  auto& st = self->state;
  if (st.waiting_keeps.empty()) {
    spill_logger logged{self};
    auto why = st.objects.keep(id, value, attempt, kind);
    if (why.empty()) {
      done(detail::error_info{});
      return;
    }
    st.log->warn("object store full: object {} ({} bytes) waits for room: {}",
                 id.hex(), value.size(), why);
  }
  st.full_waits += 1;
  st.waiting_keeps.push_back(raylet_state::waiting_keep{
      id, std::move(value), attempt, kind, std::chrono::steady_clock::now(),
      std::move(done)});
  check_room_later(self);
}

} // namespace

bool keep_result(raylet_actor* self, protocol::seal_result& msg) {
  auto& done = msg.done;
  auto refs = done.result.refs;
  auto value = std::move(done.result);
  // The owner keeps the refs inside the value alive while it lives.
  done.result = detail::value{};
  done.result.refs = std::move(refs);
  auto id = object_id{done.task, 1};
  auto attempt = done.attempt;
  keep_or_wait(self, id, std::move(value), attempt, copy_kind::primary,
               [self, msg = std::move(msg)](detail::error_info e) mutable {
                 auto& done = msg.done;
                 if (e.code == errc::ok) {
                   done.stored_at = self->state.cfg.node;
                   done.store = self_handle(self);
                   done.store_contact = self->state.contact;
                 } else {
                   done.ok = false;
                   done.error = std::move(e);
                 }
                 self->send(msg.reply_to, std::move(done));
               });
  return true;
}

caf::result<protocol::object_kept> store_sent(raylet_actor* self,
                                              protocol::store_object& msg) {
  auto rp = self->make_response_promise<protocol::object_kept>();
  keep_or_wait(
      self, msg.id, std::move(msg.value), msg.attempt,
      msg.primary ? copy_kind::primary : copy_kind::secondary,
      [self, rp](detail::error_info e) mutable {
        bool ok = e.code == errc::ok;
        rp.deliver(protocol::object_kept{
            ok, ok ? self->state.contact : std::string{}, std::move(e)});
      });
  return rp;
}

void try_waiting_keeps(raylet_actor* self) {
  auto& st = self->state;
  st.room_check_due = false;
  spill_logger logged{self};
  // In order, while there is room.
  while (!st.waiting_keeps.empty()) {
    auto& w = st.waiting_keeps.front();
    if (!st.objects.keep(w.id, w.value, w.attempt, w.kind).empty())
      break;
    auto done = std::move(w.done);
    st.waiting_keeps.pop_front();
    done(detail::error_info{});
  }
  // Whatever waited past its deadline gives up.
  auto deadline = std::chrono::steady_clock::now() - st.cfg.store_full_timeout;
  for (auto i = st.waiting_keeps.begin(); i != st.waiting_keeps.end();) {
    if (i->since > deadline) {
      ++i;
      continue;
    }
    auto e = store_full(self, *i);
    st.log->warn("{}", e.message);
    st.full_errors += 1;
    auto done = std::move(i->done);
    i = st.waiting_keeps.erase(i);
    done(std::move(e));
  }
  check_room_later(self);
}

void free_stored(raylet_actor* self, const protocol::free_object& msg) {
  if (self->state.objects.free(msg.id, msg.attempt) &&
      !self->state.waiting_keeps.empty())
    try_waiting_keeps(self);
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
  st.objects.pin(bytes.data());
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

// Lets go of the pin in `m`; room may come free.
void let_go(
    raylet_actor* self,
    std::unordered_map<std::uint64_t, raylet_state::mapped_read>::iterator m) {
  auto& st = self->state;
  st.objects.unpin(m->second.bytes.data());
  st.mapped.erase(m);
}

// Offers the payload of `id` after `chunk`, its first, on the bulk port;
// without it (the store cannot read it now), the reader reads on in chunks.
void offer_rest(raylet_actor* self, const object_id& id,
                protocol::object_chunk& chunk) {
  auto& st = self->state;
  auto from = chunk.part.size();
  std::string why;
  auto rest = st.objects.read(id, from, chunk.total - from, why);
  if (rest.empty())
    return;
  auto kept = std::make_shared<detail::shared_bytes>(std::move(rest));
  try {
    chunk.bulk_ticket = st.bulk->offer(kept, kept->data(), kept->size());
  } catch (const std::exception& e) {
    // No ticket could be made (the random generator failed).
    st.log->warn("object store: object {} goes in chunks: {}", id.hex(),
                 e.what());
    return;
  }
  chunk.bulk_port = st.bulk->port();
}

} // namespace

protocol::object_chunk read_stored(raylet_actor* self,
                                   const protocol::pull_object& msg) {
  auto& st = self->state;
  protocol::object_chunk chunk;
  chunk.id = msg.id;
  chunk.offset = msg.offset;
  const auto* stored = st.objects.find(msg.id);
  if (stored == nullptr) {
    chunk.error = no_copy(self, msg.id);
    return chunk;
  }
  chunk.total = stored->size;
  if (msg.max_bytes == 0 || msg.offset > chunk.total) {
    chunk.error.code = errc::invalid_argument;
    chunk.error.message = "a read of object " + msg.id.hex() + " asked for " +
                          std::to_string(msg.max_bytes) + " bytes at " +
                          std::to_string(msg.offset) + " of its " +
                          std::to_string(chunk.total);
    return chunk;
  }
  auto n = std::min(msg.max_bytes, chunk.total - msg.offset);
  if (msg.offset == 0) {
    chunk.part.tag = stored->value.tag;
    chunk.part.refs = stored->value.refs;
  }
  if (n > 0) {
    // From memory, shared; from disk if it was spilled.
    std::string why;
    chunk.part.bytes = st.objects.read(msg.id, msg.offset, n, why);
    if (chunk.part.bytes.empty()) {
      st.log->error("object store: object {} cannot be read: {}", msg.id.hex(),
                    why);
      chunk.part = {};
      chunk.error = no_copy(self, msg.id);
      chunk.error.message += " it can read (" + why + ")";
      return chunk;
    }
  }
  chunk.ok = true;
  if (msg.bulk && st.bulk && msg.offset == 0 && n < chunk.total)
    offer_rest(self, msg.id, chunk);
  return chunk;
}

protocol::object_mapped map_stored(raylet_actor* self,
                                   const protocol::map_object& msg) {
  auto& st = self->state;
  protocol::object_mapped out;
  out.id = msg.id;
  const auto* stored = st.objects.find(msg.id);
  if (stored == nullptr) {
    out.error = no_copy(self, msg.id);
    return out;
  }
  auto sender = self->current_sender();
  if (sender == nullptr)
    return out;
  // Read back into the shared memory if it was spilled.
  spill_logger logged{self};
  auto bytes = st.objects.in_arena(msg.id);
  if (bytes.empty())
    return out; // Outside the shared memory: read in chunks.
  out.tag = stored->value.tag;
  out.refs = stored->value.refs;
  pin_for(self, sender->address(), std::move(bytes), out);
  return out;
}

protocol::object_mapped create_stored(raylet_actor* self,
                                      const protocol::create_object& msg) {
  auto& st = self->state;
  protocol::object_mapped out;
  out.id = msg.id;
  auto sender = self->current_sender();
  if (sender == nullptr || msg.size == 0 || !st.waiting_keeps.empty())
    return out;
  spill_logger logged{self};
  auto block = st.objects.room(msg.size);
  if (!block)
    return out; // No room: the owner assembles the value in its memory.
  auto* data = block.get();
  pin_for(self, sender->address(),
          detail::shared_bytes{std::shared_ptr<const void>{std::move(block)},
                               data, msg.size},
          out);
  return out;
}

caf::result<protocol::object_kept> seal_stored(raylet_actor* self,
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
  // It lies in the store's memory already: keeping it takes no room.
  auto why = st.objects.keep(msg.id, std::move(value), msg.attempt,
                             copy_kind::secondary);
  protocol::object_kept kept;
  kept.ok = why.empty();
  if (kept.ok) {
    kept.contact = st.contact;
  } else {
    kept.error.code = errc::internal;
    kept.error.message = why;
  }
  return kept;
}

void unmap(raylet_actor* self, std::uint64_t pin) {
  auto& st = self->state;
  auto m = st.mapped.find(pin);
  if (m == st.mapped.end())
    return;
  if (auto r = st.mapped_by_reader.find(m->second.reader);
      r != st.mapped_by_reader.end())
    r->second.erase(pin);
  let_go(self, m);
  if (!st.waiting_keeps.empty())
    try_waiting_keeps(self);
}

void unmap_all(raylet_actor* self, const caf::actor_addr& reader) {
  auto& st = self->state;
  auto r = st.mapped_by_reader.find(reader);
  if (r == st.mapped_by_reader.end())
    return;
  for (auto pin : r->second)
    if (auto m = st.mapped.find(pin); m != st.mapped.end())
      let_go(self, m);
  st.mapped_by_reader.erase(r);
  if (!st.waiting_keeps.empty())
    try_waiting_keeps(self);
}

std::uint64_t drop_objects(raylet_actor* self) {
  auto& st = self->state;
  auto dropped = static_cast<std::uint64_t>(st.objects.size());
  st.log->warn("object store: dropping {} object(s), {} bytes (fault "
               "injection)",
               dropped, st.objects.bytes());
  st.objects.clear();
  if (!st.waiting_keeps.empty())
    try_waiting_keeps(self);
  return dropped;
}

protocol::object_store_usage object_usage(raylet_actor* self) {
  const auto& st = self->state;
  const auto& objects = st.objects;
  protocol::object_store_usage u;
  u.objects = objects.size();
  u.bytes = objects.bytes();
  u.shared_bytes = objects.arena() ? objects.arena()->used() : 0;
  u.mapped_reads = st.mapped.size();
  u.spilled_objects = objects.spilled_now();
  u.spilled_bytes = objects.spilled_bytes_now();
  u.spill_files = objects.spill() ? objects.spill()->files() : 0;
  u.spills = objects.totals().spilled_objects;
  u.restores = objects.totals().restored_objects;
  u.full_waits = st.full_waits;
  u.full_errors = st.full_errors;
  return u;
}

} // namespace prism::actors::raylet_internal
