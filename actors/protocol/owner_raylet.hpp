#pragma once

// The conversation between an owner and a raylet: owners lease workers for a
// resource shape, push tasks to them directly, and return the lease when
// their queue for that shape is empty. The raylet tells the lease holder
// when a leased worker is lost.

#include <cstdint>
#include <string>

#include <caf/actor.hpp>

#include "prism/detail/runtime.hpp"
#include "prism/ids.hpp"
#include "prism/internal/resource_set.hpp"

namespace prism::protocol {

/// owner -> raylet: lease one worker of `job` holding `resources`. Answered
/// by a `lease_grant` once resources and a worker are free.
struct lease_request {
  std::uint64_t request_id = 0;
  job_id job;
  internal::resource_set resources;
  caf::actor owner;
  /// The node the work must (or, if `affinity_soft`, should) run on; nil
  /// for any.
  node_id affinity;
  bool affinity_soft = false;
  /// Where `owner`'s process takes connections (see net/peers.hpp).
  std::string owner_contact;
  /// Whether the work runs again if the worker is killed (its tasks have
  /// retries left): the memory monitor kills such work first.
  bool retriable = true;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, lease_request& x) {
  return f(x.request_id, x.job, x.resources, x.owner,
           static_cast<unique_id&>(x.affinity), x.affinity_soft,
           x.owner_contact, x.retriable);
}

/// raylet -> owner: no node can ever grant this request (its hard affinity
/// names a dead node, or one that can never fit it); `error` says why.
struct lease_refused {
  std::uint64_t request_id = 0;
  detail::error_info error;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, lease_refused& x) {
  return f(x.request_id, x.error);
}

/// raylet -> owner: `worker` is leased to the owner until returned.
struct lease_grant {
  std::uint64_t request_id = 0;
  std::uint64_t lease_id = 0;
  worker_id worker;
  caf::actor worker_handle;
  node_id node;
  /// The raylet that granted the lease, which gets it back.
  caf::actor raylet;
  /// Where the worker's and the raylet's processes take connections.
  std::string worker_contact;
  std::string raylet_contact;
  /// The worker's process (the raylet's, for a worker thread).
  std::int32_t worker_pid = 0;
  /// The owner actor of the worker, which takes its cancellations while the
  /// worker runs a task (`cancel_run`).
  caf::actor worker_control{};
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, lease_grant& x) {
  return f(x.request_id, x.lease_id, static_cast<unique_id&>(x.worker),
           x.worker_handle, static_cast<unique_id&>(x.node), x.raylet,
           x.worker_contact, x.raylet_contact, x.worker_pid, x.worker_control);
}

/// raylet -> owner: this node cannot run the request; ask `raylet`, whose
/// node can.
struct lease_spillback {
  std::uint64_t request_id = 0;
  caf::actor raylet;
  node_id node;
  /// Where `raylet`'s process takes connections.
  std::string raylet_contact;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, lease_spillback& x) {
  return f(x.request_id, x.raylet, static_cast<unique_id&>(x.node),
           x.raylet_contact);
}

/// owner -> raylet: the owner is done with a lease; its worker goes back to
/// the pool and its resources are free again.
struct lease_return {
  std::uint64_t lease_id = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, lease_return& x) {
  return f(x.lease_id);
}

/// owner -> raylet: kill the worker of lease `lease_id`, which runs a task
/// cancelled with `force`. The owner hears `worker_lost` as for any death.
struct cancel_kill {
  std::uint64_t lease_id = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, cancel_kill& x) {
  return f(x.lease_id);
}

/// raylet -> owner: the worker of a lease died; every task pushed to it and
/// not answered is lost. `cause` is `out_of_memory` if the node's memory
/// monitor killed it, else `worker_crashed`.
struct worker_lost {
  std::uint64_t lease_id = 0;
  worker_id worker;
  std::string reason;
  errc cause = errc::worker_crashed;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, worker_lost& x) {
  return f(x.lease_id, static_cast<unique_id&>(x.worker), x.reason, x.cause);
}

} // namespace prism::protocol
