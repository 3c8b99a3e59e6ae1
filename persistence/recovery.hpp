#pragma once

// The repair pass of control_store::recover, apart from RocksDB: from the raw
// bytes of every table to the records that survive and the writes that make
// the store agree with them.

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "control_store.hpp"
#include "store_layout.hpp"

namespace prism::persistence {

/// Called with each key and value of a table, in key order. The views are
/// valid during the call only.
using row_visitor = std::function<void(std::string_view, std::string_view)>;

/// Reads one table's rows into a visitor: each record is decoded straight
/// from what the store reads, with no copy of the table's raw bytes.
using table_reader = std::function<void(layout::table, const row_visitor&)>;

/// What recovery found and what it must write to repair the store.
struct recovery_plan {
  recovery result;
  std::vector<layout::op> writes;
};

/// Decodes and checks every record that `read` gives (see
/// control_store::recover for the rules), logging each repair. Reads each
/// table once, actors before the name index. `actors` is about how many
/// actors the store holds (0 when unknown): the room made for them up front.
/// Never throws on bad data.
recovery_plan plan_recovery(const table_reader& read, std::size_t actors = 0);

} // namespace prism::persistence
