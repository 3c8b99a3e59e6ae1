#pragma once

// The conversation between two owners, and between an owner and the API
// threads of its own process: borrowers ask an object's owner for its value.

#include <cstdint>
#include <string>
#include <vector>

#include <caf/actor.hpp>

#include "prism/detail/runtime.hpp"
#include "prism/internal/task_spec.hpp"

namespace prism::protocol {

/// API thread -> its own owner: run this task.
struct submit_task {
  internal::task_spec spec;
  /// The objects the task holds until it ends (its ref arguments and the
  /// refs inside its argument values), each already counted once.
  std::vector<object_id> held;
  /// The task that submitted it, nil on a driver: a recursive cancellation
  /// of that task reaches this one.
  task_id parent{};
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, submit_task& x) {
  return f(x.spec, x.held, x.parent);
}

/// anyone -> the owner of a task's result: cancel the task (or actor call)
/// `task` (`prism::cancel`).
struct cancel_task {
  task_id task;
  bool force = false;
  bool recursive = true;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, cancel_task& x) {
  return f(x.task, x.force, x.recursive);
}

/// API thread -> its own owner: fetch a borrowed object from `owner`, at
/// `address`, into the local memory store.
struct fetch_object {
  object_id id;
  worker_id owner;
  detail::owner_address address;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, fetch_object& x) {
  return f(x.id, static_cast<unique_id&>(x.owner), x.address);
}

/// API thread -> its own owner: resolve the ref arguments of an actor call,
/// then release the call (see `actor_routes::resolved`).
struct resolve_actor_call {
  actor_id actor;
  task_id task;
  std::vector<detail::task_arg> args;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, resolve_actor_call& x) {
  return f(static_cast<unique_id&>(x.actor), x.task, x.args);
}

/// borrower's owner -> object's owner: send me the object once it is ready.
/// One kept in nodes' stores is answered with where its copies are, for the
/// borrower to read it from there, unless `whole` (the borrower could not).
struct object_request {
  object_id id;
  caf::actor requester;
  bool whole = false;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, object_request& x) {
  return f(x.id, x.requester, x.whole);
}

/// One copy of an object in a node's object store.
struct stored_copy {
  caf::actor raylet;
  /// Where the raylet's process takes connections ("" in this process).
  std::string contact;
  node_id node;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, stored_copy& x) {
  return f(x.raylet, x.contact, static_cast<unique_id&>(x.node));
}

/// borrower's owner -> object's owner: a copy of the object, which the
/// borrower read from `attempt`'s copies, is kept in `copy`'s store now.
/// The owner counts it among the object's copies (and frees it with them),
/// or frees it at once if the object is gone or made again meanwhile.
struct copy_kept {
  object_id id;
  std::int32_t attempt = 0;
  stored_copy copy;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, copy_kept& x) {
  return f(x.id, x.attempt, x.copy);
}

/// borrower's owner -> the control store's owner, after the object's owner
/// died: adopt the object if its lineage is durable, and send it once it is
/// made again. Answered, like `object_request`, with `object_reply`: the
/// value, or `owner_died` if the object was not durable.
struct adopt_object {
  object_id id;
  worker_id owner;
  caf::actor requester;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, adopt_object& x) {
  return f(x.id, static_cast<unique_id&>(x.owner), x.requester);
}

/// borrower (or the worker that hands it a ref) -> object's owner: `borrower`,
/// whose owner actor is `handle`, holds `n` more registrations for `id`. The
/// object stays alive until they all end (`remove_borrower`) or the borrower
/// dies. `n` 0 only asks the owner to watch the borrower. Answered with
/// true once counted (a sender that asks can let go of the ref then).
struct add_borrower {
  object_id id;
  worker_id borrower;
  caf::actor handle;
  std::int32_t n = 1;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, add_borrower& x) {
  return f(x.id, static_cast<unique_id&>(x.borrower), x.handle, x.n);
}

/// API thread -> its own owner: register `borrower`, whose owner actor is
/// `handle`, with the owners of `refs` (objects owned elsewhere, that a
/// result handed to `borrower` contains). The API thread holds each of them
/// once more for this; the owner lets go of each hold once the object's
/// owner has acknowledged the registration, or cannot be reached.
struct register_borrowers {
  std::vector<detail::contained_ref> refs;
  worker_id borrower;
  caf::actor handle;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, register_borrowers& x) {
  return f(x.refs, static_cast<unique_id&>(x.borrower), x.handle);
}

/// API thread -> its own owner: this process has come to borrow `id`, whose
/// owner is at `address`, while it runs a call (see `answer_after_borrows`).
/// The owner actor registers it there (`add_borrower`) and answers true once
/// the object's owner has counted it, false if that owner did not answer in
/// time or cannot be reached.
struct register_borrow {
  object_id id;
  detail::owner_address address;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, register_borrow& x) {
  return f(x.id, x.address);
}

/// borrower -> object's owner: `n` registrations of `borrower` for `id` end
/// (its entry for the object was freed).
struct remove_borrower {
  object_id id;
  worker_id borrower;
  std::int32_t n = 1;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, remove_borrower& x) {
  return f(x.id, static_cast<unique_id&>(x.borrower), x.n);
}

/// object's owner -> borrower's owner: the object's value or error.
struct object_reply {
  object_id id;
  bool ok = false;
  detail::value result;
  detail::error_info error;
  /// Not empty: the value is not in `result` but kept in these stores
  /// (made by run `attempt` of its task), to be read from there.
  std::vector<stored_copy> copies;
  std::int32_t attempt = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, object_reply& x) {
  return f(x.id, x.ok, x.result, x.error, x.copies, x.attempt);
}

} // namespace prism::protocol
