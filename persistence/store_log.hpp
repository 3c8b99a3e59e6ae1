#pragma once

#include <memory>

#include <spdlog/spdlog.h>

namespace rocksdb {
class Logger;
} // namespace rocksdb

namespace prism::persistence {

/// The logger "prism.persistence": the one the actors layer configures if it
/// made it first, else a stderr logger at the level of PRISM_LOG_LEVEL
/// ("warn" if unset).
std::shared_ptr<spdlog::logger> store_log();

/// A RocksDB info log that writes to `store_log()`, so that RocksDB keeps no
/// LOG file of its own in the store's directory (opening a store to check it
/// must not change a byte of it). RocksDB's info lines go out at debug level,
/// its warnings and errors at warn and error.
std::shared_ptr<rocksdb::Logger> make_rocksdb_log();

} // namespace prism::persistence
