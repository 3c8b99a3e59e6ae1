// Object serving and borrowing: this owner hands its objects to whoever
// waits for them (borrowers, API threads, its own tasks), reads those kept in
// nodes' stores, fetches the objects it borrows from their owners, and keeps
// the registrations of the processes that borrow its objects.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "net/network.hpp"
#include "owner/owner_address.hpp"
#include "owner/owner_client.hpp"
#include "owner/owner_state.hpp"
#include "owner/task_events.hpp"

namespace prism::actors {

namespace {

/// Reads finished over a node's bulk port by the owners of this process.
std::atomic<std::uint64_t> bulk_reads_finished{0};

} // namespace

std::uint64_t bulk_reads() {
  return bulk_reads_finished.load(std::memory_order_relaxed);
}

} // namespace prism::actors

namespace prism::actors::owner_internal {

mapped_bytes::~mapped_bytes() {
  // From whichever thread drops the last copy; nothing once the node's
  // handle is gone (it forgets a gone reader's pins by itself).
  if (auto r = raylet.lock())
    caf::anon_send(caf::actor_cast<caf::actor>(r), protocol::unmap_object{pin});
}

namespace {

/// How long a read from a live node's object store may take.
constexpr auto pull_timeout = std::chrono::seconds{30};

/// How long this node's raylet may take to keep a copy of an object: a
/// full store makes it wait for room (`config::object_store_full_timeout_ms`)
/// before it answers.
constexpr auto store_timeout = std::chrono::seconds{60};

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

/// How long a read from a node's bulk port may wait for the connection.
constexpr auto bulk_connect_timeout = std::chrono::seconds{5};

// The copy to read of `copies` (not empty): one in this node's store, else
// one in this process, else the first made.
const object_copy& nearest_copy(owner_actor* self,
                                const std::vector<object_copy>& copies) {
  for (auto& c : copies)
    if (c.node == self->state.cfg.node)
      return c;
  for (auto& c : copies)
    if (c.raylet && c.raylet.node() == self->node())
      return c;
  for (auto& c : copies)
    if (c.raylet)
      return c;
  return copies.front();
}

// A read of the borrowed object `id` from a store its owner named cannot go
// on: the owner is asked for the value itself.
void borrowed_read_failed(owner_actor* self, const object_id& id,
                          const object_pull& p, const std::string& why) {
  self->state.log->info("borrowed object {}: its copy in the store of node {} "
                        "cannot be read ({}); asking its owner for the value",
                        id.hex(), p.from.node.hex(), why);
  self->send(p.owner, protocol::object_request{id, self_handle(self), true});
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
  auto p = std::move(i->second);
  st.objects.pulling.erase(i);
  note_transfer(self, id, p, p.received, why);
  if (p.owner) {
    borrowed_read_failed(self, id, p, why);
    return;
  }
  st.log->info("object {}: its copy in the store of node {} cannot be read: {}",
               id.hex(), p.from.node.hex(), why);
  copy_lost(self, id, p.from.raylet.address());
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
  auto attempt = l->second.attempt;
  if (add_copy(self, id, object_copy{st.cfg.raylet, "", st.cfg.node}, attempt))
    keep_in_node(
        self, id, value, attempt, [](const std::string&) {},
        [self, id](detail::error_info) {
          // Not kept after all (the store was full): no copy to read here.
          copy_lost(self, id, self->state.cfg.raylet.address());
        });
}

// A borrowed object read from a store on another node is kept in the store
// of this one too, and its owner counts the copy (or frees it, if it is not
// needed any more): another copy to read, and to rebuild nothing from.
void keep_borrowed_copy(owner_actor* self, const object_id& id,
                        const detail::value& value, const object_pull& p) {
  auto& st = self->state;
  if (!st.cfg.raylet || st.cfg.node.nil() || p.from.node == st.cfg.node)
    return;
  keep_in_node(self, id, value, p.attempt,
               [self, id, owner = p.owner,
                attempt = p.attempt](const std::string& contact) {
                 auto& st = self->state;
                 self->send(owner, protocol::copy_kept{
                                       id, attempt,
                                       object_copy{st.cfg.raylet, contact,
                                                   st.cfg.node}});
               });
}

/// Asks the owner at `address` to count `add`, and runs `done` with whether
/// it did: false if it cannot be reached or did not answer in time.
template <class F>
void ask_owner_to_count(owner_actor* self, const detail::owner_address& address,
                        const protocol::add_borrower& add, F done) {
  auto owner = owner_at(self->system(), address);
  if (!owner) {
    done(false);
    return;
  }
  reach(self, owner.node(), address.contact, [self, owner, add, done] {
    self->request(owner, registration_timeout, add)
        .then([done](bool) mutable { done(true); },
              [done](caf::error&) mutable { done(false); });
  });
}

/// Stores a borrowed object that arrived (`store` does), and registers this
/// process with the owners of the refs inside it that it did not hold yet.
/// The object is held until each of them has counted this process (or
/// cannot be reached): until then, letting go of it could let its owner,
/// which holds those refs for it, end its own registrations first.
template <class Store>
void store_arrived(owner_actor* self, const object_id& id, Store store) {
  auto& st = self->state;
  // Held before it is stored: a thread waiting for it may take it and let
  // go of it as soon as it is.
  bool held = st.cfg.store->add_ref(id);
  std::vector<detail::contained_ref> inner;
  {
    borrows_gathered gathered;
    store();
    inner = std::move(gathered.refs);
  }
  if (inner.empty()) {
    if (held)
      st.cfg.store->release(id);
    return;
  }
  auto left = std::make_shared<std::size_t>(inner.size());
  for (const auto& r : inner)
    ask_owner_to_count(
        self, r.address,
        protocol::add_borrower{r.id, st.cfg.self, self_handle(self), 1},
        [self, id, held, left](bool) {
          if (--*left == 0 && held)
            self->state.cfg.store->release(id);
        });
}

// A borrowed object was read from a store its owner named: it is here now.
void borrowed_read(owner_actor* self, const object_id& id,
                   const detail::value& value, const object_pull& p) {
  auto& st = self->state;
  st.objects.fetching.erase(id);
  store_arrived(self, id, [&] { st.cfg.store->complete(id, value); });
  hand_to_waiting_tasks(self, id, value, nullptr);
  keep_borrowed_copy(self, id, value, p);
}

void pull_done(owner_actor* self, const object_id& id, detail::value value) {
  auto& st = self->state;
  auto i = st.objects.pulling.find(id);
  if (i != st.objects.pulling.end()) {
    auto p = std::move(i->second);
    st.objects.pulling.erase(i);
    note_transfer(self, id, p, value.size());
    if (p.owner) {
      borrowed_read(self, id, value, p);
      st.objects.sealable.erase(id);
      return;
    }
  }
  if (st.objects.readers.count(id) > 0)
    keep_secondary(self, id, value);
  st.objects.sealable.erase(id);
  internal::memory_store::result found;
  found.st = internal::memory_store::state::ready;
  found.val = std::move(value);
  deliver(self, id, found);
}

void ask_chunk(owner_actor* self, const object_id& id, object_pull& p,
               std::uint64_t offset, std::uint64_t max_bytes,
               bool bulk = false);

// Puts `chunk` at `offset` of `bytes`. Chunks come in the order asked for,
// one after the other at the end; one that overtook another leaves a gap,
// filled when the other comes.
void place_chunk(detail::byte_buffer& bytes, std::uint64_t offset,
                 const detail::shared_bytes& chunk) {
  if (offset > bytes.size())
    bytes.resize(offset);
  auto at = static_cast<std::size_t>(offset);
  auto over = std::min(chunk.size(), bytes.size() - at);
  auto split = chunk.begin() + static_cast<std::ptrdiff_t>(over);
  std::copy(chunk.begin(), split,
            bytes.begin() + static_cast<std::ptrdiff_t>(at));
  bytes.insert(bytes.end(), split, chunk.end());
}

// This node's store's shared memory as `m` names it, mapped once (again if
// the node is a new one); nullptr if it cannot be mapped here.
std::shared_ptr<const internal::arena_view>
arena_of(owner_actor* self, const protocol::object_mapped& m) {
  auto& objects = self->state.objects;
  if (m.arena_mark == objects.arena_refused)
    return nullptr;
  if (!objects.arena || objects.arena->mark() != m.arena_mark) {
    std::string why;
    objects.arena = internal::arena_view::open(m.arena_path, m.arena_bytes,
                                               m.arena_mark, why, true);
    if (!objects.arena) {
      objects.arena_refused = m.arena_mark;
      self->state.log->info("reads objects of this node's store in chunks: "
                            "its shared memory cannot be mapped here ({})",
                            why);
    }
  }
  return objects.arena;
}

// Writes chunk `c` of the read `p` into place: into its room in this node's
// store, or into this process's buffer.
void place(object_pull& p, const protocol::object_chunk& c) {
  if (p.room != nullptr)
    std::memcpy(p.room + c.offset, c.part.bytes.data(), c.part.size());
  else
    place_chunk(*p.bytes, c.offset, c.part.bytes);
  p.received += c.part.size();
}

// Whether the read `p`, from another node, writes its chunks into room in
// this node's store: a process of its own, whose shared memory this one maps.
// The value read then is the node's copy too, kept without sending it.
bool reads_into_node(owner_actor* self, const object_pull& p) {
  auto& st = self->state;
  return st.cfg.raylet && !st.cfg.node.nil() && p.from.node != st.cfg.node &&
         st.cfg.raylet.node() != self->node();
}

// Reads the rest of the payload of `p` from the node's bulk port straight
// into its room, on a thread of its own, which tells this owner when it is
// done (`bulk_read_done`).
void start_bulk_read(owner_actor* self, const object_id& id, object_pull& p) {
  char* into = p.room;
  if (into == nullptr) {
    // Room in this process, reserved for the whole payload: the rest is
    // written in place.
    p.bytes->resize(p.total);
    into = p.bytes->data();
  }
  p.fetch = std::make_unique<bulk_fetch>(
      p.bulk_host, p.bulk_port, p.bulk_ticket, into + p.bulk_offset,
      p.total - p.bulk_offset, bulk_connect_timeout,
      std::chrono::duration_cast<std::chrono::milliseconds>(pull_timeout),
      [me = self->address(), id, serial = p.serial](std::string why) {
        if (auto owner = caf::actor_cast<caf::actor>(me))
          caf::anon_send(owner, bulk_done_atom::value, id, serial,
                         std::move(why));
      });
}

// The read `p` of `id` is whole, or asks for its next chunks.
void go_on(owner_actor* self, const object_id& id, object_pull& p) {
  if (p.received >= p.total) {
    auto value = std::move(p.value);
    if (p.room != nullptr) {
      self->state.objects.sealable[id] = p.room_keeper->pin;
      value.bytes =
          detail::shared_bytes{std::move(p.room_keeper), p.room, p.total};
    } else {
      value.bytes = std::move(p.bytes);
    }
    pull_done(self, id, std::move(value));
    return;
  }
  if (!p.bulk_ticket.empty()) {
    // The rest comes from the bulk port, once there is room for it.
    if (!p.fetch && (p.room != nullptr || p.bytes))
      start_bulk_read(self, id, p);
    return;
  }
  while (p.in_flight < chunks_in_flight && p.next < p.total) {
    auto offset = p.next;
    p.next += std::min(chunk_bytes, p.total - offset);
    ask_chunk(self, id, p, offset, chunk_bytes);
  }
}

// Room for the whole payload in this process: written by the chunks alone,
// since a buffer filled with zeros first would write every page twice.
void room_here(object_pull& p) {
  p.bytes = std::make_shared<detail::byte_buffer>();
  p.bytes->reserve(p.total);
  detail::advise_huge_pages(p.bytes->data(), p.bytes->capacity());
}

// The read of `id` numbered `serial`, if it still goes on; else nullptr.
object_pull* current_pull(owner_actor* self, const object_id& id,
                          std::uint64_t serial) {
  auto& pulling = self->state.objects.pulling;
  auto i = pulling.find(id);
  return i != pulling.end() && i->second.serial == serial ? &i->second
                                                          : nullptr;
}

// Where the bytes that `m`, the node `raylet`'s answer, names lie in this
// process's mapping of the node's store (`writable` to fill them), and what
// keeps them pinned there; nothing if they are not `wanted` any more or
// cannot be mapped here, and the node lets go of them then.
std::pair<char*, std::shared_ptr<mapped_bytes>>
take_mapped(owner_actor* self, const caf::actor& raylet,
            const protocol::object_mapped& m, bool wanted, bool writable) {
  if (!m.ok)
    return {};
  char* at = nullptr;
  std::shared_ptr<const internal::arena_view> arena;
  if (wanted)
    arena = arena_of(self, m);
  if (arena)
    at = writable ? arena->writable_at(m.offset, m.size)
                  : const_cast<char*>(arena->at(m.offset, m.size));
  if (at == nullptr) {
    self->send(raylet, protocol::unmap_object{m.pin});
    return {};
  }
  auto keeper = std::make_shared<mapped_bytes>();
  keeper->arena = std::move(arena);
  keeper->raylet = caf::actor_cast<caf::weak_actor_ptr>(raylet);
  keeper->pin = m.pin;
  return {at, std::move(keeper)};
}

// This node (`raylet`) answered where the read of `m.id` may write its
// payload: there, or, without room, in this process. The chunks that came
// meanwhile go into place.
void room_given(owner_actor* self, const caf::actor& raylet,
                std::uint64_t serial, protocol::object_mapped& m) {
  auto* p = current_pull(self, m.id, serial);
  auto [at, keeper] =
      take_mapped(self, raylet, m, p != nullptr && m.size == p->total, true);
  if (p == nullptr)
    return;
  if (at != nullptr) {
    p->room = at;
    p->room_keeper = std::move(keeper);
  } else {
    room_here(*p);
  }
  for (auto& c : p->early)
    place(*p, c);
  p->early.clear();
  go_on(self, m.id, *p);
}

// Asks this node for room for the payload of the read `p` of `id`.
void ask_room(owner_actor* self, const object_id& id, const object_pull& p) {
  auto raylet = self->state.cfg.raylet;
  self->request(raylet, store_timeout, protocol::create_object{id, p.total})
      .then(
          [self, raylet, serial = p.serial](protocol::object_mapped& m) {
            room_given(self, raylet, serial, m);
          },
          [self, raylet, id, serial = p.serial](caf::error&) {
            protocol::object_mapped none;
            none.id = id;
            room_given(self, raylet, serial, none);
          });
}

// The node offers the rest of the payload of `p` after `first`, its first
// chunk, on its bulk port: no more chunks are asked for.
void take_bulk_offer(owner_actor* self, object_pull& p,
                     protocol::object_chunk& first) {
  try {
    p.bulk_host = parse_host_port(p.from.contact, "a node's contact").host;
  } catch (const std::exception& e) {
    self->state.log->info("reads from node {} go in chunks: {}",
                          p.from.node.hex(), e.what());
    return;
  }
  p.bulk_port = first.bulk_port;
  p.bulk_ticket = std::move(first.bulk_ticket);
  p.bulk_offset = first.part.size();
  p.next = p.total;
}

// A chunk of a read arrived: it goes into place, and the next chunks are
// asked for. The first says how large the value is: room is made for it,
// in this node's store where it can be.
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
  if (p.next == 0) {
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
    p.next = size;
    if (c.bulk_port != 0 && !c.bulk_ticket.empty())
      take_bulk_offer(self, p, c);
    if (reads_into_node(self, p))
      ask_room(self, c.id, p);
    else
      room_here(p);
  } else if (c.total != p.total || c.offset >= p.total ||
             size != std::min(chunk_bytes, p.total - c.offset)) {
    pull_failed(self, c.id, serial, "a chunk does not fit the value");
    return;
  }
  if (p.room == nullptr && !p.bytes)
    p.early.push_back(std::move(c)); // Until the node says where it goes.
  else
    place(p, c);
  go_on(self, c.id, p);
}

void ask_chunk(owner_actor* self, const object_id& id, object_pull& p,
               std::uint64_t offset, std::uint64_t max_bytes, bool bulk) {
  ++p.in_flight;
  self->request(p.from.raylet, pull_timeout,
                protocol::pull_object{id, offset, max_bytes, bulk})
      .then([self, serial = p.serial](
                protocol::object_chunk& c) { chunk_arrived(self, serial, c); },
            [self, id, serial = p.serial](caf::error& err) {
              pull_failed(self, id, serial, self->system().render(err));
            });
}

// The node (`from`) said where a value lies in its store's shared memory:
// the value is read in place, or in chunks if it is not there or cannot be
// mapped.
void mapped_arrived(owner_actor* self, const caf::actor& from,
                    std::uint64_t serial, protocol::object_mapped& m) {
  auto* p = current_pull(self, m.id, serial);
  auto [at, keeper] = take_mapped(self, from, m, p != nullptr, false);
  if (p == nullptr)
    return;
  if (!m.ok && !m.error.message.empty()) {
    pull_failed(self, m.id, serial, m.error.message);
    return;
  }
  if (at == nullptr) {
    ask_chunk(self, m.id, *p, 0, chunk_bytes);
    return;
  }
  detail::value v;
  v.tag = m.tag;
  v.refs = std::move(m.refs);
  v.bytes = detail::shared_bytes{std::move(keeper), at, m.size};
  pull_done(self, m.id, std::move(v));
}

// Whether `p` reads from this node's store in another process on this
// host, whose shared memory this process can map.
bool maps_from(owner_actor* self, const object_pull& p) {
  auto& st = self->state;
  return p.from.raylet && p.from.node == st.cfg.node &&
         p.from.raylet.node() != self->node();
}

// Starts the read `p` of `id`: straight from the store's process, whose
// death then shows at once. A store in this process hands over the whole
// value, sharing its bytes; one in another process on this node maps it in
// place where it can; any other sends it in chunks.
void start_pull(owner_actor* self, const object_id& id, object_pull& p) {
  if (task_event_recording())
    p.start_us = internal::unix_us_now();
  if (maps_from(self, p)) {
    self->request(p.from.raylet, pull_timeout, protocol::map_object{id})
        .then(
            [self, from = p.from.raylet,
             serial = p.serial](protocol::object_mapped& m) {
              mapped_arrived(self, from, serial, m);
            },
            [self, id, serial = p.serial](caf::error& err) {
              pull_failed(self, id, serial, self->system().render(err));
            });
    return;
  }
  reach(self, p.from.raylet.node(), p.from.contact,
        [self, id, serial = p.serial] {
          auto i = self->state.objects.pulling.find(id);
          if (i == self->state.objects.pulling.end() ||
              i->second.serial != serial)
            return;
          auto& p = i->second;
          bool here = p.from.raylet.node() == self->node();
          // From another process: the rest of a large value may come on
          // the node's bulk port, unless that failed before.
          bool bulk = !here && !p.from.contact.empty() &&
                      self->state.objects.no_bulk.count(p.from.node) == 0;
          ask_chunk(self, id, p, 0,
                    here ? std::numeric_limits<std::uint64_t>::max()
                         : chunk_bytes,
                    bulk);
        });
}

// The owner of a borrowed object answered with where it is kept: it is
// read from the nearest copy (the raylet watched, so that a read from a
// node that dies goes on at once).
void pull_borrowed(owner_actor* self, const protocol::object_reply& reply,
                   caf::actor owner) {
  auto& st = self->state;
  auto& p = st.objects.pulling[reply.id];
  p = object_pull{};
  p.serial = st.objects.next_pull++;
  p.from = nearest_copy(self, reply.copies);
  p.owner = std::move(owner);
  p.attempt = reply.attempt;
  if (!p.from.raylet) {
    auto failed = std::move(p);
    st.objects.pulling.erase(reply.id);
    borrowed_read_failed(self, reply.id, failed, "no store of it is reachable");
    return;
  }
  watch_raylet(self, p.from.raylet);
  start_pull(self, reply.id, p);
}

// Tells `to` where the copies of `id`, kept in nodes' stores, are, for it
// to read one itself; false if no copy is left (or `id` is kept in none).
bool send_copies(owner_actor* self, const caf::actor& to, const object_id& id) {
  auto& located = self->state.lineage.located;
  auto l = located.find(id);
  if (l == located.end() || l->second.lost())
    return false;
  protocol::object_reply reply;
  reply.id = id;
  reply.ok = true;
  reply.copies = l->second.copies;
  reply.attempt = l->second.attempt;
  self->send(to, std::move(reply));
  return true;
}

// The borrowers that asked for `id` before it was ready learn where it is
// kept; if it is kept nowhere (a small value, an error, every copy lost),
// they wait for its value with the others.
void answer_early_borrowers(owner_actor* self, const object_id& id) {
  auto& objects = self->state.objects;
  auto i = objects.waiting_for_copies.find(id);
  if (i == objects.waiting_for_copies.end())
    return;
  auto borrowers = std::move(i->second);
  objects.waiting_for_copies.erase(i);
  for (auto& b : borrowers)
    if (!send_copies(self, b, id))
      objects.waiting_borrowers[id].push_back(b);
}

bool has_waiters(owner_actor* self, const object_id& id) {
  auto& st = self->state;
  return st.objects.waiting_borrowers.count(id) > 0 ||
         st.objects.readers.count(id) > 0 ||
         st.tasks.waiting_for_arg.count(id) > 0;
}

} // namespace

// -- objects ------------------------------------------------------------------

void bulk_read_done(owner_actor* self, const object_id& id,
                    std::uint64_t serial, const std::string& why) {
  auto* p = current_pull(self, id, serial);
  if (p == nullptr || !p->fetch)
    return;
  p->fetch.reset(); // Its thread is done, or about to end.
  p->bulk_ticket.clear();
  if (why.empty()) {
    p->received = p->total;
    bulk_reads_finished.fetch_add(1, std::memory_order_relaxed);
  } else {
    self->state.log->info("object {}: its bulk read from node {} failed ({}); "
                          "the rest comes in chunks, as later reads from "
                          "that node do",
                          id.hex(), p->from.node.hex(), why);
    self->state.objects.no_bulk.insert(p->from.node);
    p->next = p->bulk_offset;
  }
  go_on(self, id, *p);
}

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
  answer_early_borrowers(self, id);
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
  if (reply.ok && !reply.copies.empty()) {
    // Where it is kept, not its value: read from there, if still wanted.
    auto owner = caf::actor_cast<caf::actor>(self->current_sender());
    if (owner && st.objects.fetching.count(reply.id) > 0)
      pull_borrowed(self, reply, std::move(owner));
    return;
  }
  // A read from a store the owner named is given up: this answer ends it.
  if (auto p = st.objects.pulling.find(reply.id);
      p != st.objects.pulling.end() && p->second.owner)
    st.objects.pulling.erase(p);
  st.objects.fetching.erase(reply.id);
  if (reply.ok)
    store_arrived(self, reply.id,
                  [&] { st.cfg.store->complete(reply.id, reply.result); });
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
    (msg.whole ? st.objects.waiting_borrowers
               : st.objects.waiting_for_copies)[msg.id]
        .push_back(msg.requester);
  } else if (found.st == internal::memory_store::state::ready &&
             !found.location.nil()) {
    // The borrower reads it from a store itself, and keeps a copy; one
    // that could not, or asks while every copy is lost, gets the value.
    if (!msg.whole && send_copies(self, msg.requester, msg.id))
      return;
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
  p.from = nearest_copy(self, l->second.copies);
  start_pull(self, id, p);
}

void pulls_lost_with(owner_actor* self, const caf::actor_addr& raylet) {
  std::vector<std::pair<object_id, std::uint64_t>> lost;
  for (auto& [id, p] : self->state.objects.pulling)
    if (p.from.raylet.address() == raylet)
      lost.emplace_back(id, p.serial);
  for (auto& [id, serial] : lost)
    pull_failed(self, id, serial, "its node died");
}

void keep_in_node(owner_actor* self, const object_id& id, detail::value value,
                  std::int32_t attempt,
                  std::function<void(const std::string&)> kept,
                  std::function<void(detail::error_info)> refused,
                  bool primary) {
  auto& st = self->state;
  auto keep = [&](auto msg) {
    auto fail = [self, id, refused](detail::error_info e) {
      self->state.log->warn("object {}: a copy was not kept in this node's "
                            "store: {}",
                            id.hex(), e.message);
      if (refused)
        refused(std::move(e));
    };
    self->request(st.cfg.raylet, store_timeout, std::move(msg))
        .then(
            [kept = std::move(kept), fail](protocol::object_kept& r) {
              if (r.ok)
                kept(r.contact);
              else
                fail(std::move(r.error));
            },
            [self, fail](caf::error& err) {
              detail::error_info e;
              e.code = err == caf::sec::request_timeout
                           ? errc::object_store_full
                           : errc::internal;
              e.message = "this node's object store did not keep it: " +
                          self->system().render(err);
              fail(std::move(e));
            });
  };
  // A value read into room in the node's store is kept where it lies.
  if (auto s = st.objects.sealable.find(id); s != st.objects.sealable.end())
    keep(protocol::seal_object{id, s->second, value.tag, value.refs, attempt});
  else
    keep(protocol::store_object{id, std::move(value), attempt, primary});
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
  for (const auto& r : msg.refs)
    ask_owner_to_count(
        self, r.address,
        protocol::add_borrower{r.id, msg.borrower, msg.handle, 1},
        [self, id = r.id](bool) { self->state.cfg.store->release(id); });
}

caf::result<bool> register_own_borrow(owner_actor* self,
                                      const protocol::register_borrow& msg) {
  auto rp = self->make_response_promise<bool>();
  ask_owner_to_count(self, msg.address,
                     protocol::add_borrower{msg.id, self->state.cfg.self,
                                            self_handle(self), 1},
                     [rp](bool counted) mutable { rp.deliver(counted); });
  return rp;
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
