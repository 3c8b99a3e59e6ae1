#pragma once

// The repair pass of control_store::recover, apart from RocksDB: from the raw
// bytes of every table to the records that survive and the writes that make
// the store agree with them.

#include <array>
#include <string>
#include <vector>

#include "control_store.hpp"
#include "store_layout.hpp"

namespace prism::persistence {

/// One key and value as read from a table.
struct raw_record {
  std::string key;
  std::string value;
};

/// Every table's raw records, indexed by `layout::table`.
using raw_tables =
    std::array<std::vector<raw_record>, layout::all_tables.size()>;

/// What recovery found and what it must write to repair the store.
struct recovery_plan {
  recovery result;
  std::vector<layout::op> writes;
};

/// Decodes and checks every record of `tables` (see control_store::recover
/// for the rules), logging each repair. Never throws on bad data.
recovery_plan plan_recovery(raw_tables tables);

} // namespace prism::persistence
