#pragma once

// The actor table's stored form: an entry as a record of the storage, and
// back.

#include <optional>
#include <string>

#include "control_store.hpp"
#include "gcs/actor_table.hpp"
#include "prism/internal/actor_spec.hpp"

namespace prism::actors::gcs_detail {

persistence::actor_state to_record(actor_state s);

actor_state from_record(persistence::actor_state s);

persistence::death_kind to_record(internal::death_kind k);

internal::death_kind from_record(persistence::death_kind k);

/// The creation spec as stored.
std::string encode_spec(const internal::actor_spec& spec);

/// Decodes a stored creation spec; nullopt if the bytes are not one.
std::optional<internal::actor_spec> decode_spec(const std::string& bytes);

/// The record of `a`.
persistence::actor_record record_of(const actor_entry& a);

} // namespace prism::actors::gcs_detail
