#pragma once

// CRC32C (Castagnoli), as RocksDB's logs and MANIFEST checksum their
// records. On x86-64 with SSE4.2 it runs on the processor's crc32
// instruction, eight bytes at a time; elsewhere it takes a table a byte at a
// time, some twenty times slower. The store checks every record of its logs
// before it opens (log_check.hpp), so this is on the path of every restart.

#include <cstdint>
#include <string_view>

namespace prism::persistence {

/// The CRC32C of `bytes`.
std::uint32_t crc32c(std::string_view bytes) noexcept;

/// The CRC32C of `bytes` by the table, whatever the processor: what
/// `crc32c` must agree with.
std::uint32_t crc32c_by_table(std::string_view bytes) noexcept;

} // namespace prism::persistence
