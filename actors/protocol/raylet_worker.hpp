#pragma once

// The conversation between a raylet and the workers of its pool.

#include <cstdint>
#include <vector>

#include "prism/ids.hpp"
#include "prism/internal/resource_set.hpp"

namespace prism::protocol {

/// worker -> raylet: the running task waits in `get`; its CPU may be lent
/// to other work until `worker_unblocked`.
struct worker_blocked {
  worker_id worker;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, worker_blocked& x) {
  return f(static_cast<unique_id&>(x.worker));
}

/// worker -> raylet: the task runs again and takes its CPU back.
struct worker_unblocked {
  worker_id worker;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, worker_unblocked& x) {
  return f(static_cast<unique_id&>(x.worker));
}

/// anyone -> raylet: kill a worker as a crash would (fault injection).
/// Answered with `true` if the worker was alive.
struct kill_worker {
  worker_id worker;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, kill_worker& x) {
  return f(static_cast<unique_id&>(x.worker));
}

/// anyone -> raylet: how many workers are alive. Answered with a count.
struct count_workers {
  std::uint32_t unused = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, count_workers& x) {
  return f(x.unused);
}

/// anyone -> raylet: what the node has and what is free now. Answered with
/// `node_resources`.
struct query_resources {
  std::uint32_t unused = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, query_resources& x) {
  return f(x.unused);
}

struct node_resources {
  node_id node;
  internal::resource_set total;
  internal::resource_set available;
  /// Requests waiting at this node that no live node can ever fit.
  std::vector<internal::resource_set> infeasible;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, node_resources& x) {
  return f(static_cast<unique_id&>(x.node), x.total, x.available, x.infeasible);
}

} // namespace prism::protocol
