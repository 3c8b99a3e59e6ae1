#pragma once

// The conversations around a node's object store: large results and puts
// are kept by the raylet of a node; their owners read them from there, free
// them, and rebuild them from lineage when the node is gone.

#include <cstdint>
#include <vector>

#include <caf/actor.hpp>

#include "prism/detail/runtime.hpp"
#include "protocol/owner_worker.hpp"

namespace prism::protocol {

/// worker -> its raylet: keep the large result of a task in the node's
/// object store, then pass the report on to `reply_to` (the task's owner)
/// with the value taken out and this node named as its place. Answered with
/// true once the report is on its way: the worker holds the refs inside the
/// result until then.
struct seal_result {
  task_done done;
  caf::actor reply_to;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, seal_result& x) {
  return f(x.done, x.reply_to);
}

/// owner -> the raylet of its node: keep a large `put` object, or a copy of
/// an object read from another node's store (made by run `attempt` of its
/// task, 0 for a put). Answered with `object_kept` once kept, or once the
/// store gave up making room for it.
struct store_object {
  object_id id;
  detail::value value;
  std::int32_t attempt = 0;
  /// The copy a `put` made, not one read from another node's store: the
  /// node spills such copies first.
  bool primary = false;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, store_object& x) {
  return f(x.id, x.value, x.attempt, x.primary);
}

/// owner -> raylet: at most `max_bytes` (not 0) of the payload of an object
/// in the node's store, from byte `offset` on. Answered with `object_chunk`
/// (an error if the store does not hold it). A read of the whole value
/// shares its bytes instead of copying them. With `bulk`, a read from
/// offset 0 may be answered with the rest of the payload offered on the
/// node's bulk port (see `object_chunk`).
struct pull_object {
  object_id id;
  std::uint64_t offset = 0;
  std::uint64_t max_bytes = 0;
  bool bulk = false;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, pull_object& x) {
  return f(x.id, x.offset, x.max_bytes, x.bulk);
}

/// raylet -> owner: a part of the value of an object in the node's store.
struct object_chunk {
  object_id id;
  bool ok = false;
  detail::error_info error;
  /// The payload size of the whole value.
  std::uint64_t total = 0;
  std::uint64_t offset = 0;
  /// The payload from `offset` on; the chunk at offset 0 also carries the
  /// value's tag and the refs inside it.
  detail::value part;
  /// Set (not 0) for a `bulk` read: the rest of the payload, after `part`,
  /// waits on this port of the node's host for the reader that names
  /// `bulk_ticket` (net/bulk.hpp), for a minute.
  std::uint16_t bulk_port = 0;
  std::string bulk_ticket;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, object_chunk& x) {
  return f(x.id, x.ok, x.error, x.total, x.offset, x.part, x.bulk_port,
           x.bulk_ticket);
}

/// owner -> the raylet of its node, from another process on the node's
/// host: where the value of an object in the node's store lies in the
/// store's shared memory, for the owner to map and read it in place.
/// Answered with `object_mapped`. The raylet keeps those bytes where they
/// are for the asking actor until `unmap_object` names the answer's pin,
/// or the asking actor is gone.
struct map_object {
  object_id id;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, map_object& x) {
  return f(x.id);
}

/// raylet -> owner: where a stored value lies in the node store's shared
/// memory. Not `ok`: the store has no copy (`error` says so), or keeps it
/// outside its shared memory (`error` empty: read it in chunks).
struct object_mapped {
  object_id id;
  bool ok = false;
  detail::error_info error;
  /// Where a process on the host opens the shared memory, its size, and
  /// what marks its header (see `internal::arena_view`).
  std::string arena_path;
  std::uint64_t arena_bytes = 0;
  unique_id arena_mark;
  /// The payload's place in it, and the rest of the value.
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  std::uint64_t tag = 0;
  std::vector<detail::contained_ref> refs;
  /// What `unmap_object` names once the reader is done with the bytes.
  std::uint64_t pin = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, object_mapped& x) {
  return f(x.id, x.ok, x.error, x.arena_path, x.arena_bytes, x.arena_mark,
           x.offset, x.size, x.tag, x.refs, x.pin);
}

/// owner -> the raylet of its node, from another process on the node's
/// host: room for `size` bytes in the store's shared memory, for the owner
/// to write an object's value into (a value it reads from another node)
/// and then keep in the store with `seal_object`, or read in place.
/// Answered with `object_mapped`: its place, pinned for the asking actor
/// (as by `map_object`); not `ok` (no error) if the store has no shared
/// memory or no room that large.
struct create_object {
  object_id id;
  std::uint64_t size = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, create_object& x) {
  return f(x.id, x.size);
}

/// owner -> the raylet of its node: keep the value written into the room
/// pinned as `pin` (see `create_object`), with its tag and refs, as `id`
/// made by run `attempt` of its task, as `store_object` would. Answered with
/// `object_kept`, as `store_object` is; an error if the pin is
/// unknown (the reader is gone, or the room was never handed out).
struct seal_object {
  object_id id;
  std::uint64_t pin = 0;
  std::uint64_t tag = 0;
  std::vector<detail::contained_ref> refs;
  std::int32_t attempt = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, seal_object& x) {
  return f(x.id, x.pin, x.tag, x.refs, x.attempt);
}

/// raylet -> owner: the answer to `store_object` and `seal_object`. Kept
/// (`ok`), with where the raylet's process takes connections, for others to
/// read the copy; or not, with the error: `object_store_full` if the store
/// found no room in memory or on disk before its deadline.
struct object_kept {
  bool ok = false;
  std::string contact;
  detail::error_info error;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, object_kept& x) {
  return f(x.ok, x.contact, x.error);
}

/// owner process -> raylet: the bytes pinned by `object_mapped::pin` are
/// read no more. It is not an error if the pin is unknown.
struct unmap_object {
  std::uint64_t pin = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, unmap_object& x) {
  return f(x.pin);
}

/// owner -> raylet: nobody references the object any more. `attempt` is the
/// run of the task whose copy this is, so that the free of a stale run does
/// not drop the copy of a later one.
struct free_object {
  object_id id;
  std::int32_t attempt = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, free_object& x) {
  return f(x.id, x.attempt);
}

/// API thread -> its own owner: the value of one of the owner's objects kept
/// in a node's store, rebuilt first if that copy was lost. Answered with
/// `object_reply`.
struct read_object {
  object_id id;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, read_object& x) {
  return f(x.id);
}

/// API thread -> its own owner: keep a large `put` object in the store of
/// the owner's node. Answered once the node kept it, with an `error_info`
/// whose code is `ok`, or with why it did not (`object_store_full`).
struct put_object {
  object_id id;
  detail::value value;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, put_object& x) {
  return f(x.id, x.value);
}

/// memory store -> its owner: an object kept in a node's store is no longer
/// referenced.
struct object_freed {
  object_id id;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, object_freed& x) {
  return f(x.id);
}

} // namespace prism::protocol
