#pragma once

// What `prism store check` and `prism store repair` do: tell whether a
// control store opens as it is and, when damage in a write-ahead log stops
// it, what a repair would drop, before anything is dropped.

#include <optional>
#include <string>
#include <vector>

#include "control_store.hpp"
#include "log_check.hpp"

namespace prism::persistence {

/// What `check_store` found.
struct store_check {
  /// The store's write-ahead logs, record by record.
  log_report logs;
  /// Its MANIFEST, record by record.
  log_report manifest;
  /// Why `control_store::open` would refuse the store, if it would.
  std::optional<store_error> refusal;
  /// With log damage: what else is wrong with the store, if anything.
  std::optional<store_error> beyond_logs;

  /// Whether the store opens as it is.
  bool sound() const noexcept {
    return !refusal.has_value();
  }

  /// Whether `repair_store` can make the store open: the only damage is in
  /// a write-ahead log, with intact records after it.
  bool repairable() const noexcept {
    return logs.damaged_in_the_middle() && !manifest.damaged_in_the_middle() &&
           !beyond_logs;
  }
};

/// Checks the store at `path` as `control_store::open` would, and reads its
/// logs record by record, naming the tables of the writes after any damage.
/// Never writes. Throws `store_error` (`not_found`) if `path` holds no
/// store, or (`io`) if it cannot be read.
[[nodiscard]] store_check check_store(const std::string& path);

/// What `repair_store` did.
struct store_repair {
  /// Where the store's files were copied before anything changed.
  std::string backup;
  /// The intact records after the damage, which the repair dropped.
  std::vector<logged_batch> dropped;
  /// What the recovery run after the repair fixed in the tables, which may
  /// no longer agree (say, an actor whose name's write was dropped).
  repair_report tables;
};

/// Makes the store at `path` open again by dropping its log damage and
/// every write after it, as point-in-time recovery does: the store then
/// holds every write before the damage. First copies every file of the
/// store to `backup` (a new directory; table files are hard-linked when it
/// is on the same file system), so that nothing is lost for good.
/// REQUIRES: no process has the store open (the store's lock is taken).
/// Throws `store_error`: `corrupt` if the store has damage that this repair
/// cannot drop (see `store_check::repairable`), `invalid_argument` if
/// `backup` exists, `io` on a failing disk. Does nothing, and returns an
/// empty `backup`, if the store opens as it is.
store_repair repair_store(const std::string& path, const std::string& backup);

/// A table's key in readable form: "ns/key" for scoped keys, an id in hex,
/// a job number, or the bytes as printable text.
std::string show_key(const std::string& table, const std::string& key);

} // namespace prism::persistence
