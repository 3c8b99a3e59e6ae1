#pragma once

// The record of a durable task's lineage in the control store's key-value
// table: the task as its owner ran it (arguments resolved to values), so
// that the control store's owner can make the result again after the owner
// died.

#include <optional>
#include <string>

#include "prism/ids.hpp"
#include "prism/internal/task_spec.hpp"

namespace prism::actors {

/// The reserved namespace of lineage records in the key-value table.
inline const std::string lineage_ns = "prism.lineage";

/// The key of the record of object `id`.
std::string lineage_key(const object_id& id);

/// The record of `spec`: its job, then the serialized spec.
std::string encode_lineage(const internal::task_spec& spec);

/// The spec in a record; nothing if the record is malformed.
std::optional<internal::task_spec> decode_lineage(const std::string& record);

/// The job a record belongs to; nothing if the record is malformed.
std::optional<job_id> lineage_job(const std::string& record);

} // namespace prism::actors
