#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "prism/detail/runtime.hpp"
#include "prism/ids.hpp"
#include "prism/internal/resource_set.hpp"

namespace prism::internal {

/// Everything needed to run a task once, anywhere: what to call, with what,
/// under which limits, and who owns the result. The result's object id is
/// derived from `id` (index 1).
struct task_spec {
  task_id id;
  job_id job;
  std::string function;
  std::string name;
  std::vector<detail::task_arg> args;
  resource_set resources;
  std::int32_t max_retries = 3;
  bool retry_exceptions = false;
  /// With `retry_exceptions`: the exception types retried (see
  /// `detail::task_options`); empty retries any.
  std::vector<std::string> retry_exception_types;
  /// 0 for the first run; raised by one for each retry.
  std::int32_t attempt = 0;
  /// The owner of the result: the worker (or driver) that submitted it.
  worker_id owner;

  /// The id of the object this task returns.
  object_id return_id() const {
    return object_id{id, 1};
  }

  /// Name for logs and errors: the task's name, or its function's.
  const std::string& display_name() const {
    return name.empty() ? function : name;
  }

  /// The node it must (or, if `affinity_soft`, should) run on; nil for any.
  node_id affinity;
  bool affinity_soft = false;
  /// The control store keeps the task's lineage, and adopts its result if
  /// the owner dies.
  bool durable = false;

  friend bool operator==(const task_spec&, const task_spec&) = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, task_spec& x) {
  return f(x.id, x.job, x.function, x.name, x.args, x.resources, x.max_retries,
           x.retry_exceptions, x.retry_exception_types, x.attempt,
           static_cast<unique_id&>(x.owner),
           static_cast<unique_id&>(x.affinity), x.affinity_soft, x.durable);
}

} // namespace prism::internal
