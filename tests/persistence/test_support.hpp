#pragma once

// What the persistence tests share: scratch directories, sample records, a
// byte-exact fingerprint of a store's directory, direct RocksDB access for
// damaging a store on purpose, and a failing RocksDB file system.

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <rocksdb/db.h>
#include <rocksdb/file_system.h>

#include "control_store.hpp"
#include "store_layout.hpp"

namespace prism::persistence::testing {

/// A fresh directory under the system's temp directory, removed with all it
/// holds when the object dies. `path()` itself does not exist yet: the store
/// creates it.
class temp_dir {
public:
  temp_dir();
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  ~temp_dir();

  /// Where a store can go.
  std::string path() const {
    return (root_ / "store").string();
  }

private:
  std::filesystem::path root_;
};

/// Options for a store at `path` with everything else at its default.
store_options options_for(const std::string& path);

/// Records whose every field depends on `i`, so that one can be checked
/// against what was written. Actors with `i % 2 == 0` are named ("ns-<i%3>",
/// "actor-<i>"); their creation specs hold bytes of every value.
job_record sample_job(std::uint32_t i);
node_record sample_node(std::uint64_t i);
actor_record sample_actor(std::uint64_t i);
actor_id sample_actor_id(std::uint64_t i);

/// Writes `a` and, if it is named, its index entry, in one batch: as the gcs
/// registers an actor.
void register_actor(control_store& store, const actor_record& a);

/// Every file under `dir` and its bytes.
using fingerprint = std::map<std::string, std::string>;
fingerprint fingerprint_of(const std::string& dir);

/// Writes `bytes` to `p`, replacing what it held.
void write_file(const std::filesystem::path& p, const std::string& bytes);

/// The largest file in `dir` whose name starts with `prefix` and ends with
/// `suffix` (the newest log, the table file with the most records). Fails
/// the test if there is none.
std::filesystem::path file_matching(const std::string& dir,
                                    const std::string& prefix,
                                    const std::string& suffix = "");

/// A store opened with RocksDB directly, every column family included, to
/// read and damage what the control store wrote.
class raw_store {
public:
  explicit raw_store(const std::string& path);
  raw_store(const raw_store&) = delete;
  raw_store& operator=(const raw_store&) = delete;
  ~raw_store();

  void put(const std::string& cf, const std::string& key,
           const std::string& value);
  void put(layout::table t, const std::string& key, const std::string& value) {
    put(layout::name(t), key, value);
  }
  std::string get(const std::string& cf, const std::string& key);
  std::string get(layout::table t, const std::string& key) {
    return get(layout::name(t), key);
  }
  void del(const std::string& cf, const std::string& key);
  void del(layout::table t, const std::string& key) {
    del(layout::name(t), key);
  }

  /// Writes every memtable to table files.
  void flush();

private:
  rocksdb::ColumnFamilyHandle* handle(const std::string& cf);

  rocksdb::DB* db_ = nullptr;
  std::vector<std::string> names_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
};

/// A file system whose writable files fail on demand: every Append once
/// `fail_appends` is set, every Sync once `fail_syncs` is set, and every
/// Append after `appends_left` more have succeeded (negative: never).
class failing_fs : public rocksdb::FileSystemWrapper {
public:
  failing_fs();

  const char* Name() const override {
    return "failing_fs";
  }

  rocksdb::IOStatus NewWritableFile(const std::string& fname,
                                    const rocksdb::FileOptions& opts,
                                    std::unique_ptr<rocksdb::FSWritableFile>* r,
                                    rocksdb::IODebugContext* dbg) override;

  rocksdb::IOStatus
  ReopenWritableFile(const std::string& fname, const rocksdb::FileOptions& opts,
                     std::unique_ptr<rocksdb::FSWritableFile>* r,
                     rocksdb::IODebugContext* dbg) override;

  /// Returns an injected error if an Append should fail now, else OK (and
  /// counts the append).
  rocksdb::IOStatus on_append();

  /// Returns an injected error if a Sync should fail now, else OK.
  rocksdb::IOStatus on_sync();

  std::atomic<bool> fail_appends{false};
  std::atomic<bool> fail_syncs{false};
  std::atomic<std::int64_t> appends_left{-1};
  /// How many errors were injected.
  std::atomic<std::int64_t> injected{0};
};

/// The crash test's writer process: `argv` is {exe, crash_writer_flag, path,
/// first, sync}. Writes records from `first` on, forever, and after each write
/// returns reports its number on stdout as 8 raw bytes. Returns only on
/// error.
int run_crash_writer(int argc, char** argv);

inline constexpr const char* crash_writer_flag = "--prism-crash-writer";

} // namespace prism::persistence::testing
