#pragma once

// How the control store lays its tables out in RocksDB: one column family per
// table, and how each table's keys are built. Internal to persistence/ (and
// its tests, which write damaged records on purpose).
//
//   column family   key                                  value
//   default         "prism.schema_version"               decimal ASCII, "1"
//   jobs            job id, 4 bytes big-endian           pb::JobRecord
//   nodes           node id, hi then lo, 8+8 bytes BE    pb::NodeRecord
//   actors          actor id, as node ids                pb::ActorRecord, or
//                                                        one followed by
//                                                        merged changes
//   named_actors    scoped(namespace, name)              pb::NamedActorEntry
//   kv              scoped(namespace, key)               the value's bytes
//   lineage         job id, then object id               pb::LineageRecord
//   requests        order applied, 8 bytes BE            client id (8+8 BE),
//                                                        seq (8 BE), result
//                                                        (1 byte, 0 or 1)
//
// An object id is its task's submitter (16 bytes), its task's sequence number
// (8 bytes BE) and its index (4 bytes BE): a job's lineage is one range.
//
// scoped(ns, s) is the length of ns as 4 bytes big-endian, then ns, then s:
// unambiguous for any bytes, and every key of a namespace that starts with a
// prefix p starts with scoped(ns, p). Big-endian ids sort as the ids do.
// `requests` sorts in the order the writes were applied, oldest first.
//
// An actor's start is written as a merge (`record_merge_operator`): RocksDB
// keeps the record and the change apart until it reads or compacts them, and
// then appends the change to the record, which protobuf reads as one record
// with the change's fields written over. A build from before merges cannot
// read such a store.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <prism/ids.hpp>

namespace prism::persistence::layout {

/// The key of the schema version in the default column family.
inline constexpr std::string_view schema_version_key = "prism.schema_version";

/// The tables, each a column family.
enum class table : std::uint8_t {
  jobs,
  nodes,
  actors,
  named_actors,
  kv,
  requests,
  lineage
};

inline constexpr std::array<table, 7> all_tables{
    table::jobs, table::nodes,    table::actors, table::named_actors,
    table::kv,   table::requests, table::lineage};

/// The column family's (and the table's) name, e.g. "named_actors".
const char* name(table t) noexcept;

/// One write to one table: a put of `value` under `key`, a delete, or
/// (`merge`) `value` appended to the record under `key` (see
/// `record_merge_operator`).
struct op {
  table where = table::jobs;
  bool del = false;
  std::string key;
  std::string value;
  bool merge = false;
};

// -- keys ---------------------------------------------------------------------

std::string job_key(job_id id);

/// Returns false if `key` is not 4 bytes.
bool parse_job_key(std::string_view key, job_id& out) noexcept;

std::string id_key(const unique_id& id);

/// Returns false if `key` is not 16 bytes.
bool parse_id_key(std::string_view key, unique_id& out) noexcept;

/// The key of the lineage of object `object` of job `job`.
std::string lineage_key(job_id job, const object_id& object);

/// Returns false if `key` is not 32 bytes.
bool parse_lineage_key(std::string_view key, job_id& job,
                       object_id& object) noexcept;

std::string scoped_key(std::string_view ns, std::string_view rest);

/// Returns false if `key` is too short for the namespace length it declares.
bool parse_scoped_key(std::string_view key, std::string& ns, std::string& rest);

/// The key of the applied request numbered `order`.
std::string order_key(std::uint64_t order);

/// Returns false if `key` is not 8 bytes.
bool parse_order_key(std::string_view key, std::uint64_t& out) noexcept;

/// The value of an applied request: who sent it and what it was answered.
std::string applied_request_value(const unique_id& client, std::uint64_t seq,
                                  bool result);

/// Returns false if `value` is not 25 bytes ending in 0 or 1.
bool parse_applied_request_value(std::string_view value, unique_id& client,
                                 std::uint64_t& seq, bool& result) noexcept;

/// Returns `bytes` fit for a log line: printable ASCII as is, anything else
/// as \xNN, cut after 200 characters.
std::string printable(std::string_view bytes);

} // namespace prism::persistence::layout
