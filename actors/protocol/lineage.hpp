#pragma once

// Durable lineage: an owner -> gcs. The lineage of a `.durable()` task's
// result lives in a table of its own in the control store (persistence's
// `lineage`), apart from the user's key-value table, which cannot reach it.
// A job's records go when the job ends.

#include <cstdint>
#include <string>

#include "prism/ids.hpp"

namespace prism::protocol {

/// Keeps how to make `object` again: the task as its owner ran it, encoded
/// (common/lineage_record.hpp). Answered with `bool` (true) once durable.
/// Sent again, it replaces the record.
struct lineage_put {
  object_id object;
  job_id job;
  std::string task_spec;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, lineage_put& x) {
  return f(x.object, x.job, x.task_spec);
}

/// Drops the lineage of `object`; answered with `bool`: whether there was
/// one.
struct lineage_del {
  object_id object;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, lineage_del& x) {
  return f(x.object);
}

/// Reads the lineage of `object`; answered with `lineage_value`.
struct lineage_get {
  object_id object;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, lineage_get& x) {
  return f(x.object);
}

struct lineage_value {
  bool found = false;
  std::string task_spec;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, lineage_value& x) {
  return f(x.found, x.task_spec);
}

} // namespace prism::protocol
