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

} // namespace prism::protocol
