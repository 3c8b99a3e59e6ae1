#pragma once

// Records to and from their protobuf encoding (records.proto). The protobuf
// types stay in record_codec.cpp; callers see plain records and bytes.

#include <cstdint>
#include <string>
#include <string_view>

#include "records.hpp"

namespace prism::persistence::codec {

/// Every encoded record ends with this value in its `seal` field.
inline constexpr std::uint32_t record_seal = 0x50524d31; // "PRM1"

/// How decoding went.
enum class decoded : std::uint8_t {
  /// The record is whole and sound.
  ok,
  /// The record was readable but had to be changed (the reason says how).
  repaired,
  /// The bytes are no record: unparsable, or cut short.
  malformed,
};

std::string encode(const job_record& r);
std::string encode(const node_record& r);
std::string encode(const actor_record& r);
std::string encode(const lineage_record& r);
std::string encode_named_actor(actor_id id);

/// The change of an actor record to alive on `node`, to append to the record
/// (`record_merge_operator`): its state and its node, both ids of which are
/// written even when zero, so that they replace the record's whole node.
std::string encode_actor_started(node_id node);

/// Each decode fills `out` and returns `ok`, or says in `why` what was wrong.
/// Never throws on bad bytes.
decoded decode(std::string_view bytes, job_record& out, std::string& why);
decoded decode(std::string_view bytes, node_record& out, std::string& why);

/// An actor in no known state comes back `repaired`: dead, with the reason as
/// its death cause.
decoded decode(std::string_view bytes, actor_record& out, std::string& why);

decoded decode(std::string_view bytes, lineage_record& out, std::string& why);

decoded decode_named_actor(std::string_view bytes, actor_id& out,
                           std::string& why);

} // namespace prism::persistence::codec
