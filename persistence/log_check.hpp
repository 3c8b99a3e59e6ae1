#pragma once

// A read-only check of a store's write-ahead logs (RocksDB's `*.log` files),
// record by record, apart from RocksDB: RocksDB's own recovery cannot tell a
// torn last record, which a crash leaves and which was never acknowledged,
// from damage in the middle of a log, after which acknowledged writes follow.
// Its point-in-time recovery drops both, and with the second, acknowledged
// writes. This check tells them apart, so that the control store opens the
// first and refuses the second.
//
// The log format: 32 KiB blocks of physical records, each a 7-byte header
// (masked CRC32C of type and payload, 2-byte length, 1-byte type) and its
// payload; a record that does not fit a block is cut into first, middle and
// last fragments. A block's last bytes, too few for a header, are zeros. A
// whole record is one RocksDB write batch: its first sequence number (8
// bytes), its count of writes (4 bytes), then the writes. The MANIFEST has
// the same format, with a version edit in each record; RocksDB stops reading
// it, without a word, at a record whose length was damaged in its last
// block, and so forgets the edits after it. It is checked the same way.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace prism::persistence {

/// One write of a batch in a log, for a report of what a repair drops.
struct logged_write {
  /// The table (column family) name, or "column family <id>" when the check
  /// was given no name for its id.
  std::string table;
  /// "put", "delete", ...
  std::string op;
  /// The key's bytes.
  std::string key;
};

/// One whole record (a write batch) found in a log.
struct logged_batch {
  /// The log file's name, e.g. "000012.log".
  std::string file;
  /// The byte offset of its first fragment in the file.
  std::uint64_t offset = 0;
  /// The sequence number of its first write.
  std::uint64_t sequence = 0;
  /// Its writes; empty if the batch does not decode.
  std::vector<logged_write> writes;
  /// How many writes the batch says it holds.
  std::uint32_t count = 0;
};

/// Where a log stops being readable.
struct log_damage {
  /// The log file's name, e.g. "000012.log".
  std::string file;
  /// The byte offset of the first record that does not read.
  std::uint64_t offset = 0;
  /// What is wrong there, e.g. "checksum mismatch".
  std::string what;
  /// The bytes from `offset` to the end of that file.
  std::uint64_t bytes = 0;
};

/// What `check_logs` or `check_manifest` found.
struct log_report {
  /// "write-ahead log" or "MANIFEST".
  std::string kind = "write-ahead log";
  /// The logs checked, oldest first.
  std::vector<std::string> files;
  /// How many whole records read before the first damage (or in all).
  std::uint64_t batches = 0;
  /// The first damage, if any. Damage with nothing intact after it in any
  /// log is a torn tail: the last write of a crashed process, which was
  /// never acknowledged, and which opening the store drops.
  std::optional<log_damage> damage;
  /// The intact records after the damage, in this log and later ones: the
  /// acknowledged writes that recovery past the damage would drop.
  std::vector<logged_batch> after_damage;
  /// Damage after which the writes go on with the very next sequence
  /// number: it held no write that was ever applied (say, the torn tail of
  /// an older log, followed by the log written after the crash).
  std::vector<log_damage> harmless;

  /// Whether damage is followed by intact records: the store must not be
  /// opened as it is.
  bool damaged_in_the_middle() const noexcept {
    return damage.has_value() && !after_damage.empty();
  }

  /// Whether the only damage is a torn last record.
  bool torn_tail() const noexcept {
    return damage.has_value() && after_damage.empty();
  }
};

/// Column family names by id, for naming the tables of logged writes.
using table_names = std::map<std::uint32_t, std::string>;

/// Called with each write batch that opening the store would apply, in
/// order: the intact ones up to damage, and those after damage that is
/// harmless.
using batch_visitor = std::function<void(std::string_view batch)>;

/// Reads every `*.log` file in `dir`, oldest first, and checks every record.
/// Never writes. Throws `store_error` (`io`) if a file cannot be read.
[[nodiscard]] log_report check_logs(const std::string& dir,
                                    const table_names& names = {},
                                    const batch_visitor& visit = {});

/// Reads the MANIFEST that the store's CURRENT file names, record by record.
/// Never writes. The records after damage are listed without writes (they
/// are version edits). Returns an empty report if CURRENT names no file;
/// throws `store_error` (`io`) if the MANIFEST cannot be read.
[[nodiscard]] log_report check_manifest(const std::string& dir);

/// Returns a one-paragraph account of `r`'s damage for an error or a log
/// line: the file, the offset, what is wrong and what follows it. Empty if
/// `r` has no damage.
std::string describe(const log_report& r);

} // namespace prism::persistence
