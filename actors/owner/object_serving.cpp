// Object serving and borrowing: this owner hands its objects to whoever
// waits for them (borrowers, API threads, its own tasks), reads those kept in
// nodes' stores, fetches the objects it borrows from their owners, and keeps
// the registrations of the processes that borrow its objects.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "owner/owner_address.hpp"
#include "owner/owner_state.hpp"

namespace prism::actors::owner_internal {

namespace {

/// How long a read from a live node's object store may take.
constexpr auto pull_timeout = std::chrono::seconds{30};

/// How long an object's owner may take to acknowledge a borrower.
constexpr auto registration_timeout = std::chrono::seconds{30};

protocol::object_reply make_reply(const object_id& id,
                                  const internal::memory_store::result& found) {
  protocol::object_reply reply;
  reply.id = id;
  if (found.st != internal::memory_store::state::ready) {
    // A live owner that never made the object (or freed it, so no ref
    // should still name it) was handed a bad ref: the asker's mistake.
    reply.error.code = errc::invalid_argument;
    reply.error.message =
        "object " + id.hex() + " is unknown to its owner (freed or never made)";
  } else if (found.err) {
    reply.error = *found.err;
  } else {
    reply.ok = true;
    reply.result = found.val;
  }
  return reply;
}

// The answer for a ref that carries no owner address.
protocol::object_reply unaddressed_reply(const object_id& id,
                                         const worker_id& owner) {
  protocol::object_reply reply;
  reply.id = id;
  reply.error.code = errc::invalid_argument;
  reply.error.message = "object " + id.hex() + " (owner " + owner.hex() +
                        ") has a ref that carries no owner address: it was "
                        "made up, or read from bytes outside the value that "
                        "listed it";
  return reply;
}

/// The size of the chunks of a read from a store in another process, and how
/// many of them are on their way at once.
constexpr std::uint64_t chunk_bytes = std::uint64_t{1} << 20;
constexpr int chunks_in_flight = 16;

// The copy of `loc` to read: one in this node's store, else one in this
// process, else the first made.
const object_copy& nearest_copy(owner_actor* self, const located_object& loc) {
  for (auto& c : loc.copies)
    if (c.node == self->state.cfg.node)
      return c;
  for (auto& c : loc.copies)
    if (c.raylet.node() == self->node())
      return c;
  return loc.copies.front();
}

// The read of `id` (serial `serial`) cannot go on from its copy: that copy
// is forgotten, and the read starts again from another one, or the object
// is rebuilt.
void pull_failed(owner_actor* self, const object_id& id, std::uint64_t serial,
                 const std::string& why) {
  auto& st = self->state;
  auto i = st.objects.pulling.find(id);
  if (i == st.objects.pulling.end() || i->second.serial != serial)
    return;
  auto from = i->second.from;
  st.objects.pulling.erase(i);
  st.log->info("object {}: its copy in the store of node {} cannot be read: {}",
               id.hex(), from.node.hex(), why);
  copy_lost(self, id, from.raylet.address());
  need_value(self, id);
}

// A copy read from another node's store for a `get` here is kept in this
// node's store too (a secondary copy): losing the first then does not force
// a rebuild, and later reads here are local. (A value read for a task's
// argument or a borrower goes on to a process on some other node.)
void keep_secondary(owner_actor* self, const object_id& id,
                    const detail::value& value) {
  auto& st = self->state;
  auto l = st.lineage.located.find(id);
  if (l == st.lineage.located.end() || !st.cfg.raylet || st.cfg.node.nil())
    return;
  auto& copies = l->second.copies;
  if (std::any_of(copies.begin(), copies.end(),
                  [&](const object_copy& c) { return c.node == st.cfg.node; }))
    return;
  self->send(st.cfg.raylet,
             protocol::store_object{id, value, l->second.attempt});
  copies.push_back(object_copy{st.cfg.raylet, "", st.cfg.node});
}

void pull_done(owner_actor* self, const object_id& id, detail::value value) {
  auto& st = self->state;
  st.objects.pulling.erase(id);
  if (st.objects.readers.count(id) > 0)
    keep_secondary(self, id, value);
  internal::memory_store::result found;
  found.st = internal::memory_store::state::ready;
  found.val = std::move(value);
  deliver(self, id, found);
}

void ask_chunk(owner_actor* self, const object_id& id, object_pull& p,
               std::uint64_t offset, std::uint64_t max_bytes);

// A chunk of a read arrived: it goes into place, and the next chunks are
// asked for.
void chunk_arrived(owner_actor* self, std::uint64_t serial,
                   protocol::object_chunk& c) {
  auto& st = self->state;
  auto i = st.objects.pulling.find(c.id);
  if (i == st.objects.pulling.end() || i->second.serial != serial)
    return;
  auto& p = i->second;
  --p.in_flight;
  if (!c.ok) {
    pull_failed(self, c.id, serial, c.error.message);
    return;
  }
  auto size = static_cast<std::uint64_t>(c.part.size());
  if (!p.bytes) {
    if (c.offset != 0 || size > c.total || (size == 0 && c.total > 0)) {
      pull_failed(self, c.id, serial, "its first chunk does not fit the value");
      return;
    }
    if (size == c.total) {
      pull_done(self, c.id, std::move(c.part));
      return;
    }
    p.total = c.total;
    p.value.tag = c.part.tag;
    p.value.refs = std::move(c.part.refs);
    p.bytes = std::make_shared<detail::byte_buffer>(p.total);
    p.next = size;
  } else if (c.total != p.total || c.offset >= p.total ||
             size != std::min(chunk_bytes, p.total - c.offset)) {
    pull_failed(self, c.id, serial, "a chunk does not fit the value");
    return;
  }
  if (size > 0)
    std::copy(c.part.bytes->begin(), c.part.bytes->end(),
              p.bytes->begin() + static_cast<std::ptrdiff_t>(c.offset));
  p.received += size;
  if (p.received >= p.total) {
    p.value.bytes = std::move(p.bytes);
    pull_done(self, c.id, std::move(p.value));
    return;
  }
  while (p.in_flight < chunks_in_flight && p.next < p.total) {
    auto offset = p.next;
    p.next += std::min(chunk_bytes, p.total - offset);
    ask_chunk(self, c.id, p, offset, chunk_bytes);
  }
}

void ask_chunk(owner_actor* self, const object_id& id, object_pull& p,
               std::uint64_t offset, std::uint64_t max_bytes) {
  ++p.in_flight;
  self->request(p.from.raylet, pull_timeout,
                protocol::pull_object{id, offset, max_bytes})
      .then([self, serial = p.serial](
                protocol::object_chunk& c) { chunk_arrived(self, serial, c); },
            [self, id, serial = p.serial](caf::error& err) {
              pull_failed(self, id, serial, self->system().render(err));
            });
}

bool has_waiters(owner_actor* self, const object_id& id) {
  auto& st = self->state;
  return st.objects.waiting_borrowers.count(id) > 0 ||
         st.objects.readers.count(id) > 0 ||
         st.tasks.waiting_for_arg.count(id) > 0;
}

} // namespace

// -- objects ------------------------------------------------------------------

void reply_object(owner_actor* self, const caf::actor& to, const object_id& id,
                  const internal::memory_store::result& found) {
  self->send(to, make_reply(id, found));
}

// Gives a value or error of one of this owner's objects to everyone waiting
// for it: borrowers, tasks that take it as an argument, and API threads.
void deliver(owner_actor* self, const object_id& id,
             const internal::memory_store::result& found) {
  auto& objects = self->state.objects;
  if (auto i = objects.waiting_borrowers.find(id);
      i != objects.waiting_borrowers.end()) {
    auto borrowers = std::move(i->second);
    objects.waiting_borrowers.erase(i);
    for (auto& b : borrowers)
      reply_object(self, b, id, found);
  }
  if (auto i = objects.readers.find(id); i != objects.readers.end()) {
    auto readers = std::move(i->second);
    objects.readers.erase(i);
    auto reply = make_reply(id, found);
    for (auto& rp : readers)
      rp.deliver(reply);
  }
  hand_to_waiting_tasks(self, id, found.val, found.err.get());
}

// An object this owner waited for is ready: the borrowers that asked for it
// get it, and the tasks that need it take its value. One kept in a node's
// store is read from there first, if anyone waits for it.
void object_ready(owner_actor* self, const object_id& id) {
  // Most results are awaited by no one here (an API thread's `get` reads
  // the store): reading the entry would copy its value for nothing.
  if (!has_waiters(self, id))
    return;
  auto found = self->state.cfg.store->lookup(id);
  if (found.st == internal::memory_store::state::ready &&
      !found.location.nil()) {
    need_value(self, id);
    return;
  }
  deliver(self, id, found);
}

// A borrowed object arrived from its owner. Tasks waiting for it take it from
// the reply; an API thread waiting in `get` finds it in the local store.
void object_arrived(owner_actor* self, protocol::object_reply& reply) {
  auto& st = self->state;
  st.objects.fetching.erase(reply.id);
  if (reply.ok)
    st.cfg.store->complete(reply.id, reply.result);
  else
    st.cfg.store->fail(reply.id, reply.error);
  hand_to_waiting_tasks(self, reply.id, reply.result,
                        reply.ok ? nullptr : &reply.error);
}

void request_object(owner_actor* self, const object_id& id,
                    const worker_id& owner,
                    const detail::owner_address& address) {
  auto& st = self->state;
  if (!st.objects.fetching.emplace(id, owner).second)
    return;
  // The ref's address, or the one this process's entry for it keeps.
  auto& sys = self->system();
  auto handle = owner_at(sys, address);
  detail::owner_address kept;
  if (!handle) {
    kept = st.cfg.store->owner_of(id).second;
    handle = owner_at(sys, kept);
  }
  if (!handle && !address && !kept) {
    // No address to reach an owner by: the ref was made up, or read from
    // bytes without the value that listed it. Answered as a message, as
    // the adopter's answer would be.
    self->send(self, unaddressed_reply(id, owner));
    return;
  }
  if (!handle) {
    ask_adopter(self, id, owner);
    return;
  }
  // Straight to the owner's process, whose death then shows at once.
  auto contact = kept ? kept.contact : address.contact;
  reach(self, handle.node(), contact, [self, handle, id, owner] {
    if (self->state.objects.watched_owners.emplace(handle.address(), owner)
            .second)
      self->monitor(handle);
    self->send(handle, protocol::object_request{id, self_handle(self)});
  });
}

// An owner this one fetched from is gone: its objects not received yet never
// will be.
void fetched_owner_gone(owner_actor* self, const worker_id& owner) {
  auto& st = self->state;
  std::vector<object_id> lost;
  for (auto& [id, from] : st.objects.fetching)
    if (from == owner)
      lost.push_back(id);
  for (auto& id : lost) {
    if (owner == adopter_id) {
      auto reply = owner_died_reply(id, owner);
      object_arrived(self, reply);
    } else {
      ask_adopter(self, id, owner);
    }
  }
}

// Another process asks for one of this owner's objects: it gets it now, or
// once it is ready (read from a node's store first, if it is kept there).
void object_requested(owner_actor* self, protocol::object_request& msg) {
  auto& st = self->state;
  auto found = st.cfg.store->lookup(msg.id);
  if (found.st == internal::memory_store::state::pending) {
    st.objects.waiting_borrowers[msg.id].push_back(msg.requester);
  } else if (found.st == internal::memory_store::state::ready &&
             !found.location.nil()) {
    st.objects.waiting_borrowers[msg.id].push_back(msg.requester);
    need_value(self, msg.id);
  } else {
    reply_object(self, msg.requester, msg.id, found);
  }
}

// An API thread of this process reads one of this owner's objects that its
// `get` could not find in the memory store: one kept in a node's store, or
// one not ready yet.
caf::result<protocol::object_reply>
read_requested(owner_actor* self, const protocol::read_object& msg) {
  auto& st = self->state;
  auto found = st.cfg.store->lookup(msg.id);
  using state = internal::memory_store::state;
  if (found.st == state::missing ||
      (found.st == state::ready && found.location.nil()))
    return make_reply(msg.id, found);
  auto rp = self->make_response_promise();
  st.objects.readers[msg.id].push_back(rp);
  if (found.st == state::ready)
    need_value(self, msg.id);
  return caf::delegated<protocol::object_reply>{};
}

// Someone needs the value of `id`, kept in a node's store: reads it from
// the nearest copy, or rebuilds it if every copy is lost.
void need_value(owner_actor* self, const object_id& id) {
  auto& st = self->state;
  if (st.objects.pulling.count(id) > 0)
    return;
  auto l = st.lineage.located.find(id);
  if (l == st.lineage.located.end())
    return;
  if (l->second.lost()) {
    // As a message: the caller may be resolving a task that this fails.
    self->send(self, rebuild_atom::value, id);
    return;
  }
  auto& p = st.objects.pulling[id];
  p.serial = st.objects.next_pull++;
  p.from = nearest_copy(self, l->second);
  // Straight to the store's process, whose death then shows at once.
  reach(self, p.from.raylet.node(), p.from.contact,
        [self, id, serial = p.serial] {
          auto i = self->state.objects.pulling.find(id);
          if (i == self->state.objects.pulling.end() ||
              i->second.serial != serial)
            return;
          auto& p = i->second;
          // A store in this process hands over the whole value, sharing its
          // bytes; one in another process sends it in chunks.
          bool here = p.from.raylet.node() == self->node();
          ask_chunk(self, id, p, 0,
                    here ? std::numeric_limits<std::uint64_t>::max()
                         : chunk_bytes);
        });
}

void pulls_lost_with(owner_actor* self, const caf::actor_addr& raylet) {
  std::vector<std::pair<object_id, std::uint64_t>> lost;
  for (auto& [id, p] : self->state.objects.pulling)
    if (p.from.raylet.address() == raylet)
      lost.emplace_back(id, p.serial);
  for (auto& [id, serial] : lost)
    pull_failed(self, id, serial, "its node died");
}

// -- borrowers ----------------------------------------------------------------

// A result that arrived with refs inside it was not kept (nobody references
// it any more, or it came late): the registrations its worker made for this
// process end.
void disown(owner_actor* self, const std::vector<detail::contained_ref>& refs) {
  auto& st = self->state;
  for (const auto& r : refs) {
    if (r.owner == st.cfg.self)
      continue;
    if (auto to = owner_at(self->system(), r.address))
      send_to_peer(
          self->system(), to, r.address.contact,
          caf::make_message(protocol::remove_borrower{r.id, st.cfg.self, 1}));
  }
}

void register_borrowers(owner_actor* self, protocol::register_borrowers& msg) {
  for (const auto& r : msg.refs) {
    auto release = [self, id = r.id] { self->state.cfg.store->release(id); };
    auto owner = owner_at(self->system(), r.address);
    if (!owner) {
      // Gone: no registration can keep the object alive now.
      release();
      continue;
    }
    auto add = protocol::add_borrower{r.id, msg.borrower, msg.handle, 1};
    reach(self, owner.node(), r.address.contact, [self, owner, add, release] {
      self->request(owner, registration_timeout, add)
          .then([release](bool) { release(); },
                [release](caf::error&) { release(); });
    });
  }
}

// A process borrows one of this owner's objects: the object stays until the
// process ends its registrations or dies.
void borrower_added(owner_actor* self, protocol::add_borrower& msg) {
  auto& st = self->state;
  if (msg.n > 0 && !st.cfg.store->add_borrower(msg.id, msg.borrower, msg.n)) {
    st.log->debug("object {} has no entry here (freed or never made); "
                  "borrower {} holds nothing",
                  msg.id.hex(), msg.borrower.hex());
    return;
  }
  if (msg.handle && msg.handle != self_handle(self) &&
      st.objects.watched_borrowers.emplace(msg.handle.address(), msg.borrower)
          .second)
    self->monitor(msg.handle);
}

void borrower_removed(owner_actor* self, const protocol::remove_borrower& msg) {
  self->state.cfg.store->remove_borrower(msg.id, msg.borrower, msg.n);
}

void borrower_gone(owner_actor* self, const caf::actor_addr& source) {
  auto& st = self->state;
  auto b = st.objects.watched_borrowers.find(source);
  if (b == st.objects.watched_borrowers.end())
    return;
  // Its registrations end: it holds nothing any more.
  auto borrower = b->second;
  st.objects.watched_borrowers.erase(b);
  st.cfg.store->drop_borrower(borrower);
}

} // namespace prism::actors::owner_internal
