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

/// owner -> the raylet of its node: keep a large `put` object.
struct store_object {
  object_id id;
  detail::value value;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, store_object& x) {
  return f(x.id, x.value);
}

/// owner -> raylet: the value of an object in the node's store. Answered with
/// `object_reply` (an error if the store does not hold it).
struct pull_object {
  object_id id;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, pull_object& x) {
  return f(x.id);
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
