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
/// task, 0 for a put). Answered, once kept, with where the raylet's process
/// takes connections (its contact), for others to read the copy.
struct store_object {
  object_id id;
  detail::value value;
  std::int32_t attempt = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, store_object& x) {
  return f(x.id, x.value, x.attempt);
}

/// owner -> raylet: at most `max_bytes` (not 0) of the payload of an object
/// in the node's store, from byte `offset` on. Answered with `object_chunk`
/// (an error if the store does not hold it). A read of the whole value
/// shares its bytes instead of copying them.
struct pull_object {
  object_id id;
  std::uint64_t offset = 0;
  std::uint64_t max_bytes = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, pull_object& x) {
  return f(x.id, x.offset, x.max_bytes);
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
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, object_chunk& x) {
  return f(x.id, x.ok, x.error, x.total, x.offset, x.part);
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
/// the owner's node. Answered with `true` once the object is on its way
/// there (later reads from the owner find it).
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
