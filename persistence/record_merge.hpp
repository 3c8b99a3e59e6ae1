#pragma once

#include <memory>

namespace rocksdb {
class MergeOperator;
} // namespace rocksdb

namespace prism::persistence {

/// The merge operator of every table: a merge appends its operand to the
/// record. A record is a protobuf message, and protobuf reads two messages
/// one after the other as the first with the second's fields written over it,
/// so an operand that holds only what changed (`codec::encode_actor_started`)
/// updates a record without writing it whole. Every open of a store sets it:
/// one without it cannot read a merged record.
std::shared_ptr<rocksdb::MergeOperator> record_merge_operator();

} // namespace prism::persistence
