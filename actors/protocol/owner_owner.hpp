#pragma once

// The conversation between two owners, and between an owner and the API
// threads of its own process: borrowers ask an object's owner for its value.

#include <caf/actor.hpp>

#include "prism/detail/runtime.hpp"
#include "prism/internal/task_spec.hpp"

namespace prism::protocol {

/// API thread -> its own owner: run this task.
struct submit_task {
  internal::task_spec spec;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, submit_task& x) {
  return f(x.spec);
}

/// API thread -> its own owner: fetch a borrowed object from `owner` into
/// the local memory store.
struct fetch_object {
  object_id id;
  worker_id owner;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, fetch_object& x) {
  return f(x.id, static_cast<unique_id&>(x.owner));
}

/// borrower's owner -> object's owner: send me the object once it is ready.
struct object_request {
  object_id id;
  caf::actor requester;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, object_request& x) {
  return f(x.id, x.requester);
}

/// object's owner -> borrower's owner: the object's value or error.
struct object_reply {
  object_id id;
  bool ok = false;
  detail::value result;
  detail::error_info error;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, object_reply& x) {
  return f(x.id, x.ok, x.result, x.error);
}

} // namespace prism::protocol
