#pragma once

// The record of a durable task's lineage in the control store's `lineage`
// table: the task as its owner ran it (arguments resolved to values), so
// that the control store's owner can make the result again after the owner
// died.

#include <optional>
#include <string>

#include "prism/internal/task_spec.hpp"

namespace prism::actors {

/// The record of `spec`: the serialized spec.
std::string encode_lineage(const internal::task_spec& spec);

/// The spec in a record; nothing if the record is malformed.
std::optional<internal::task_spec> decode_lineage(const std::string& record);

} // namespace prism::actors
