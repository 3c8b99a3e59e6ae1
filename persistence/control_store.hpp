#pragma once

// The control store's durable tables: jobs, nodes, actors (with their creation
// specs), the named-actor index and the user key-value table, each a column
// family of one RocksDB database. Internal to Prism: the gcs uses it, users
// never see it.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "records.hpp"
#include "store_error.hpp"
#include "write_batch.hpp"

namespace rocksdb {
class Env;
class FileSystem;
} // namespace rocksdb

namespace prism::persistence {

/// How `control_store::open` opens a store.
struct store_options {
  /// The store's directory.
  std::string path;

  /// Whether every write waits until its write-ahead-log record is on disk
  /// (fsync) before it returns. With `true` (the default) an acknowledged
  /// write survives a crash of the machine. With `false` it survives a crash
  /// of the process, not of the operating system.
  bool sync = true;

  /// Whether `open` creates the store when the directory holds none.
  bool create_if_missing = true;

  /// Whether `open` reads every table file and checks its checksums before it
  /// changes anything, so that a damaged file is refused up front.
  bool verify_checksums = true;

  /// The RocksDB environment to use; null for the default. Not owned: it must
  /// outlive the store. For fault injection in tests.
  rocksdb::Env* env = nullptr;

  /// A RocksDB file system to use instead of `env`'s. For fault injection in
  /// tests.
  std::shared_ptr<rocksdb::FileSystem> file_system;
};

/// One record that `control_store::recover` dropped or changed.
struct repair {
  enum class action : std::uint8_t {
    /// The record was removed from the store.
    dropped,
    /// The record was rewritten (or, for the name index, re-added).
    fixed,
    /// An inconsistency was found and left for the gcs to settle.
    kept,
  };

  /// The table, e.g. "actors".
  std::string table;
  /// The record's key in printable form, e.g. an actor id in hex.
  std::string key;
  action what = action::dropped;
  /// Why, in a sentence.
  std::string reason;
};

/// Returns "dropped", "fixed" or "kept".
const char* to_string(repair::action a) noexcept;

/// What `control_store::recover` repaired.
struct repair_report {
  std::vector<repair> repairs;

  /// Returns how many repairs took `what` action.
  std::size_t count(repair::action what) const noexcept;

  bool empty() const noexcept {
    return repairs.empty();
  }
};

/// Every table of a store, as recovered.
struct snapshot {
  std::vector<job_record> jobs;
  std::vector<node_record> nodes;
  std::vector<actor_record> actors;
  std::vector<named_actor_entry> named_actors;
  std::vector<kv_entry> kv;
  std::vector<lineage_record> lineage;
  /// In the order they were applied, oldest first.
  std::vector<applied_request> requests;
};

/// The result of `control_store::recover`: the tables after repair, and the
/// repairs.
struct recovery {
  snapshot tables;
  repair_report report;
};

/// The control store's storage. Every method that writes returns only once
/// the write is durable as `store_options::sync` says: a write that returned
/// is acknowledged and is never lost. Every failure throws `store_error`; a
/// write that threw may or may not be in the store.
///
/// Thread-safe: any thread may call any method but `close`; writes are
/// serialized. Move-only.
class control_store {
public:
  /// The schema version this build writes and reads.
  static constexpr std::uint32_t schema_version = 1;

  // -- constructors -----------------------------------------------------------

  /// Opens the store at `opts.path`, creating it if it is missing and
  /// `opts.create_if_missing`. Throws `store_error` of kind
  /// - `not_found` if there is no store and `create_if_missing` is false;
  /// - `wrong_schema_version` if the store has a schema version other than
  ///   `schema_version`;
  /// - `corrupt` if its files are damaged, or the directory holds files but
  ///   no store;
  /// - `io` if the disk fails.
  /// A store refused as `wrong_schema_version` or `corrupt` is left exactly
  /// as it was: not a byte of it is written.
  [[nodiscard]] static control_store open(const store_options& opts);

  /// Runs every check `open` runs on an existing store, without opening it
  /// for writing: not a byte of the store changes. Returns normally if
  /// `open` would accept it; throws the `store_error` that `open` would.
  /// With `logs` false it skips the check of the write-ahead logs, for a
  /// repair that reads them itself and needs to know what else is wrong.
  static void verify(const store_options& opts, bool logs = true);

  control_store(control_store&&) noexcept;
  control_store& operator=(control_store&&) noexcept;
  ~control_store();

  /// Closes the store; a moved-from or closed store may only be destroyed.
  /// Throws `store_error` if closing failed. The destructor closes too,
  /// logging instead of throwing.
  /// REQUIRES: no other call on this store is running.
  void close();

  // -- recovery ---------------------------------------------------------------

  /// Reads every table, repairs what is inconsistent and returns the tables
  /// and what was repaired. Never aborts on bad data: an undecodable or cut
  /// short record is dropped; an index entry whose actor is missing, dead or
  /// named otherwise is dropped; a live named actor missing from the index
  /// is re-added; a live actor without a creation spec, or in no known state,
  /// is marked dead. Each repair is logged (logger "prism.persistence") and
  /// written to the store in one atomic, synced write.
  /// REQUIRES: no other thread writes meanwhile (it is meant for startup).
  /// Throws `store_error` (`corrupt`, `io`) if the data cannot be read; then
  /// nothing was repaired.
  [[nodiscard]] recovery recover();

  // -- jobs -------------------------------------------------------------------

  void put_job(const job_record& r);
  [[nodiscard]] std::optional<job_record> get_job(job_id id);
  /// It is not an error if the job is absent.
  void del_job(job_id id);

  // -- nodes ------------------------------------------------------------------

  void put_node(const node_record& r);
  [[nodiscard]] std::optional<node_record> get_node(node_id id);
  /// It is not an error if the node is absent.
  void del_node(node_id id);

  // -- actors -----------------------------------------------------------------

  /// Adds or replaces the actor. Does not touch the name index: to change an
  /// actor and its name together, use a `write_batch`.
  void put_actor(const actor_record& r);
  [[nodiscard]] std::optional<actor_record> get_actor(actor_id id);
  /// It is not an error if the actor is absent.
  void del_actor(actor_id id);

  // -- named actors -----------------------------------------------------------

  void put_named_actor(const std::string& ns, const std::string& name,
                       actor_id actor);
  /// Returns the actor holding `name` in `ns`, if any.
  [[nodiscard]] std::optional<actor_id>
  get_named_actor(const std::string& ns, const std::string& name);
  /// It is not an error if the name is free.
  void del_named_actor(const std::string& ns, const std::string& name);

  // -- key-value table --------------------------------------------------------

  /// Sets `key` in namespace `ns` to `value`, unless the key exists and
  /// `overwrite` is false. Returns whether the key existed before.
  bool kv_put(const std::string& ns, const std::string& key,
              const std::string& value, bool overwrite = true);
  [[nodiscard]] std::optional<std::string> kv_get(const std::string& ns,
                                                  const std::string& key);
  /// Removes `key` from `ns`. Returns whether it existed.
  bool kv_del(const std::string& ns, const std::string& key);
  /// Returns the keys of `ns` that start with `prefix`, in byte order.
  [[nodiscard]] std::vector<std::string> kv_keys(const std::string& ns,
                                                 const std::string& prefix);

  // -- batches ----------------------------------------------------------------

  /// Applies every operation of `b` atomically. An empty batch writes
  /// nothing.
  void write(const write_batch& b);

  // -- properties -------------------------------------------------------------

  /// The directory of the store.
  const std::string& path() const noexcept;

private:
  struct state;

  explicit control_store(std::unique_ptr<state> st);

  std::unique_ptr<state> st_;
};

} // namespace prism::persistence
