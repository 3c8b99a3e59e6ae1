#include "control_store.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>
#include <utility>

#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/file_system.h>
#include <rocksdb/memtablerep.h>
#include <rocksdb/options.h>
#include <rocksdb/wal_filter.h>
#include <rocksdb/write_batch.h>

#include <prism/internal/thread_annotations.hpp>

#include "log_check.hpp"
#include "record_codec.hpp"
#include "record_merge.hpp"
#include "recovery.hpp"
#include "store_layout.hpp"
#include "store_log.hpp"
#include "write_batch_rep.hpp"

namespace prism::persistence {

namespace {

using kind = store_error::kind_t;
using std::chrono::steady_clock;

/// Milliseconds since `start`, for log lines.
long long ms_since(steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             steady_clock::now() - start)
      .count();
}
using layout::table;

constexpr std::size_t num_tables = layout::all_tables.size();

/// Throws the store_error that `s` (not ok) stands for. A file missing from
/// a store that exists is damage, not an I/O failure.
[[noreturn]] void fail(const rocksdb::Status& s, const std::string& what,
                       bool missing_is_corrupt = false) {
  auto k = kind::io;
  if (s.IsCorruption())
    k = kind::corrupt;
  else if (missing_is_corrupt && (s.IsNotFound() || s.IsPathNotFound()))
    k = kind::corrupt;
  throw store_error(k, what + ": " + s.ToString());
}

void check(const rocksdb::Status& s, const std::string& what) {
  if (!s.ok())
    fail(s, what);
}

/// Options shared by every open of a store: the environment and a log that
/// writes no file into the store's directory.
rocksdb::Options base_options(rocksdb::Env* env) {
  rocksdb::Options o;
  o.env = env;
  o.info_log = make_rocksdb_log();
  o.paranoid_checks = true;
  o.create_if_missing = false;
  o.create_missing_column_families = false;
  // A crash may leave a torn last WAL record, which was never acknowledged;
  // replay stops there.
  o.wal_recovery_mode = rocksdb::WALRecoveryMode::kPointInTimeRecovery;
  // The control store writes all the time and reads at recovery only: a
  // memtable that appends (and sorts when read or flushed) instead of a
  // skip list, whose every insert into a large memtable is a chain of cache
  // misses. It takes one writer at a time, which the store has anyway.
  o.memtable_factory = std::make_shared<rocksdb::VectorRepFactory>();
  o.allow_concurrent_memtable_write = false;
  // A restart replays the logs into memtables of up to 64 MB and keeps
  // them (and the logs) instead of writing them to table files before the
  // store opens: that flush cost a restart of 100,000 actors a fifth of its
  // recovery. Once open, memtables of 8 MB (`state::shrink_memtables`):
  // a table's first write after that flushes a replay of more.
  o.write_buffer_size = std::size_t{64} << 20;
  o.avoid_flush_during_recovery = true;
  // Records are small and read back only at recovery: compressing each
  // flushed block, and uncompressing it at recovery, costs more time than
  // the disk it saves.
  o.compression = rocksdb::kNoCompression;
  o.merge_operator = record_merge_operator();
  return o;
}

std::vector<rocksdb::ColumnFamilyDescriptor>
descriptors(const std::vector<std::string>& names,
            const rocksdb::Options& opts) {
  std::vector<rocksdb::ColumnFamilyDescriptor> out;
  for (const auto& n : names)
    out.emplace_back(n, rocksdb::ColumnFamilyOptions{opts});
  return out;
}

/// Closes `db` and its handles. Returns the status of closing.
rocksdb::Status close_db(rocksdb::DB*& db,
                         std::vector<rocksdb::ColumnFamilyHandle*>& handles) {
  if (db == nullptr)
    return rocksdb::Status::OK();
  for (auto* h : handles)
    db->DestroyColumnFamilyHandle(h);
  handles.clear();
  auto s = db->Close();
  delete db;
  db = nullptr;
  return s;
}

/// A read-only database, closed when it goes out of scope.
struct read_only_db {
  rocksdb::DB* db = nullptr;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;

  ~read_only_db() {
    close_db(db, handles);
  }
};

enum class found_version { ok, absent };

std::uint32_t parse_version(const std::string& text, const std::string& path) {
  std::uint32_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size())
    throw store_error(kind::corrupt, "control store at " + path +
                                         " has an unreadable schema version '" +
                                         layout::printable(text) + "'");
  return v;
}

/// What the store's write-ahead logs say of its schema version, read from
/// every batch that opening the store would apply, and whether they put any
/// other key. The logs that are kept are the newest ones (RocksDB deletes
/// the oldest first), so their last write of the version, if any, is its
/// last write of all, and newer than what the table files hold.
class logged_writes : public rocksdb::WriteBatch::Handler {
public:
  /// Whether the logs wrote (or deleted) the schema version: then
  /// `version` is its last value, or empty if it was deleted last.
  bool version_logged = false;
  std::optional<std::string> version;
  /// Whether the logs put any other key.
  bool records = false;
  /// Whether a batch did not decode, which RocksDB's replay refuses.
  bool undecodable = false;

  void read(std::string_view batch) {
    rocksdb::WriteBatch wb{std::string{batch}};
    if (!wb.Iterate(this).ok())
      undecodable = true;
  }

  rocksdb::Status PutCF(std::uint32_t cf, const rocksdb::Slice& key,
                        const rocksdb::Slice& value) override {
    if (is_version(cf, key)) {
      version_logged = true;
      version = value.ToString();
    } else {
      records = true;
    }
    return rocksdb::Status::OK();
  }
  rocksdb::Status DeleteCF(std::uint32_t cf,
                           const rocksdb::Slice& key) override {
    if (is_version(cf, key)) {
      version_logged = true;
      version.reset();
    }
    return rocksdb::Status::OK();
  }
  rocksdb::Status SingleDeleteCF(std::uint32_t cf,
                                 const rocksdb::Slice& key) override {
    return DeleteCF(cf, key);
  }
  rocksdb::Status DeleteRangeCF(std::uint32_t, const rocksdb::Slice&,
                                const rocksdb::Slice&) override {
    return rocksdb::Status::OK();
  }
  rocksdb::Status MergeCF(std::uint32_t, const rocksdb::Slice&,
                          const rocksdb::Slice&) override {
    records = true;
    return rocksdb::Status::OK();
  }
  void LogData(const rocksdb::Slice&) override {}

private:
  static bool is_version(std::uint32_t cf, const rocksdb::Slice& key) {
    return cf == 0 && key.ToStringView() == layout::schema_version_key;
  }
};

/// Reads one table on a thread of its own, about a megabyte of rows at a
/// time, while the caller decodes the rows read before: a restart sorts the
/// memtables and walks the table files about as long as it decodes what
/// they hold, and on 2 cores the two halves run side by side. Four buffers
/// go back and forth, so that after the first few rows no fresh memory is
/// touched.
class read_ahead {
public:
  read_ahead(rocksdb::DB* db, const rocksdb::ReadOptions& ro,
             rocksdb::ColumnFamilyHandle* cf)
      : it_(db->NewIterator(ro, cf)) {
    for (auto& c : chunks_)
      free_.push_back(&c);
    thread_ = std::thread{[this] { produce(); }};
  }

  read_ahead(const read_ahead&) = delete;
  read_ahead& operator=(const read_ahead&) = delete;

  ~read_ahead() {
    {
      std::lock_guard<std::mutex> guard{mu_};
      stopped_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  /// Calls `row(key, value)` with each row, in key order. Returns the
  /// iterator's status.
  rocksdb::Status each(const row_visitor& row) {
    for (;;) {
      chunk* c = nullptr;
      {
        std::unique_lock<std::mutex> lock{mu_};
        cv_.wait(lock, [this] { return !full_.empty() || done_; });
        if (full_.empty())
          return status_;
        c = full_.front();
        full_.pop_front();
      }
      std::size_t pos = 0;
      for (std::size_t i = 0; i + 1 < c->sizes.size(); i += 2) {
        std::string_view key{c->bytes.data() + pos, c->sizes[i]};
        pos += c->sizes[i];
        std::string_view value{c->bytes.data() + pos, c->sizes[i + 1]};
        pos += c->sizes[i + 1];
        row(key, value);
      }
      c->bytes.clear();
      c->sizes.clear();
      {
        std::lock_guard<std::mutex> guard{mu_};
        free_.push_back(c);
      }
      cv_.notify_all();
    }
  }

private:
  static constexpr std::size_t chunk_bytes = std::size_t{1} << 20;

  /// Rows one after the other: `sizes` holds each key's size, then its
  /// value's.
  struct chunk {
    std::string bytes;
    std::vector<std::size_t> sizes;
  };

  /// A buffer to fill, or null once the reader stopped.
  chunk* take_free() {
    std::unique_lock<std::mutex> lock{mu_};
    cv_.wait(lock, [this] { return !free_.empty() || stopped_; });
    if (stopped_)
      return nullptr;
    auto* c = free_.back();
    free_.pop_back();
    return c;
  }

  void hand_over(chunk* c) {
    {
      std::lock_guard<std::mutex> guard{mu_};
      full_.push_back(c);
    }
    cv_.notify_all();
  }

  void produce() {
    auto* c = take_free();
    if (c == nullptr)
      return;
    for (it_->SeekToFirst(); it_->Valid(); it_->Next()) {
      auto key = it_->key();
      auto value = it_->value();
      c->bytes.append(key.data(), key.size());
      c->bytes.append(value.data(), value.size());
      c->sizes.push_back(key.size());
      c->sizes.push_back(value.size());
      if (c->bytes.size() >= chunk_bytes) {
        hand_over(c);
        if ((c = take_free()) == nullptr)
          return;
      }
    }
    hand_over(c);
    {
      std::lock_guard<std::mutex> guard{mu_};
      status_ = it_->status();
      done_ = true;
    }
    cv_.notify_all();
  }

  std::unique_ptr<rocksdb::Iterator> it_;
  std::array<chunk, 4> chunks_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<chunk*> free_ GUARDED_BY(mu_);
  std::deque<chunk*> full_ GUARDED_BY(mu_);
  bool done_ GUARDED_BY(mu_) = false;
  bool stopped_ GUARDED_BY(mu_) = false;
  rocksdb::Status status_ GUARDED_BY(mu_);
  std::thread thread_;
};

/// Has a read-only open replay nothing of the logs: their check has read
/// what the probe needs of them (`logged_writes`), and replaying 100,000
/// actors into memory to read one key cost a restart most of its probe.
class replay_nothing : public rocksdb::WalFilter {
public:
  WalProcessingOption LogRecordFound(unsigned long long, const std::string&,
                                     const rocksdb::WriteBatch&,
                                     rocksdb::WriteBatch*, bool*) override {
    return WalProcessingOption::kStopReplay;
  }
  const char* Name() const override {
    return "prism.replay_nothing";
  }
};

/// Reads the store's write-ahead logs and throws if acknowledged writes
/// follow damage in them: RocksDB's recovery would drop those writes with
/// the damage. A torn last record, which a crash leaves, is fine. Each batch
/// that opening the store would apply goes through `logged`.
void check_logs_before_open(const std::string& path,
                            const std::shared_ptr<spdlog::logger>& log,
                            logged_writes& logged) {
  // The MANIFEST first: RocksDB forgets, without a word, the edits after a
  // damaged length in its last block. No repair drops that.
  auto manifest = check_manifest(path);
  if (manifest.damaged_in_the_middle()) {
    const auto& d = *manifest.damage;
    throw store_error("control store at " + path + ": " + describe(manifest) +
                          ". Refusing to open it: nothing was changed. "
                          "Restore the store from a backup.",
                      d.file, d.offset);
  }
  auto logs =
      check_logs(path, {}, [&](std::string_view batch) { logged.read(batch); });
  if (logs.torn_tail())
    log->warn("control store at {}: {}", path, describe(logs));
  for (const auto& d : logs.harmless)
    log->warn("control store at {}: {} at offset {} ({}) is unreadable, but "
              "the writes after it go on with the next sequence number",
              path, d.file, d.offset, d.what);
  if (logs.damaged_in_the_middle()) {
    const auto& d = *logs.damage;
    throw store_error("control store at " + path + ": " + describe(logs) +
                          ". Refusing to open it: nothing was changed. `prism "
                          "store check " +
                          path +
                          "` lists the writes after the damage; `prism store "
                          "repair` drops them.",
                      d.file, d.offset);
  }
  if (logged.undecodable)
    throw store_error(kind::corrupt,
                      "control store at " + path +
                          ": a write batch in its write-ahead log has an "
                          "intact checksum but does not decode. Refusing to "
                          "open it: nothing was changed.");
}

/// Checks the store at `path` without writing to it: its logs must have no
/// damage followed by intact records, it must list its column families,
/// open read-only, have this build's schema version (or no version and no
/// records) and, if asked, pass a full checksum check. Returns whether the
/// version must still be written.
found_version probe(const rocksdb::Options& base, const std::string& path,
                    bool verify_checksums, bool logs = true) {
  logged_writes logged;
  replay_nothing no_replay;
  auto options = base;
  if (logs) {
    check_logs_before_open(path, store_log(), logged);
    options.wal_filter = &no_replay;
  }
  std::vector<std::string> names;
  auto s = rocksdb::DB::ListColumnFamilies(options, path, &names);
  if (!s.ok())
    fail(s, "control store at " + path + " is unreadable", true);
  read_only_db ro;
  s = rocksdb::DB::OpenForReadOnly(options, path, descriptors(names, options),
                                   &ro.handles, &ro.db);
  if (!s.ok())
    fail(s, "control store at " + path + " cannot be opened", true);
  // Without a replay, the table files hold what the logs do not.
  std::string text;
  if (!logged.version_logged)
    s = ro.db->Get(rocksdb::ReadOptions{}, ro.db->DefaultColumnFamily(),
                   layout::schema_version_key, &text);
  else if (logged.version)
    text = *logged.version;
  else
    s = rocksdb::Status::NotFound();
  auto result = found_version::ok;
  if (s.IsNotFound()) {
    // Created, then crashed before the version was written: fine if empty.
    if (logged.records)
      throw store_error(kind::corrupt,
                        "control store at " + path +
                            " holds records but no schema version");
    for (auto* h : ro.handles) {
      std::unique_ptr<rocksdb::Iterator> it{
          ro.db->NewIterator(rocksdb::ReadOptions{}, h)};
      it->SeekToFirst();
      // A version the logs deleted is still in the table files read here.
      if (it->Valid() && h->GetID() == 0 &&
          it->key().ToStringView() == layout::schema_version_key)
        it->Next();
      check(it->status(), "cannot read control store at " + path);
      if (it->Valid())
        throw store_error(kind::corrupt,
                          "control store at " + path +
                              " holds records but no schema version");
    }
    result = found_version::absent;
  } else if (!s.ok()) {
    fail(s, "cannot read the schema version of control store at " + path);
  } else if (auto v = parse_version(text, path);
             v != control_store::schema_version) {
    throw store_error(kind::wrong_schema_version,
                      "control store at " + path + " has schema version " +
                          std::to_string(v) + "; this build reads version " +
                          std::to_string(control_store::schema_version) +
                          ". Nothing was changed.");
  }
  if (verify_checksums) {
    s = ro.db->VerifyChecksum();
    if (!s.ok())
      fail(s, "control store at " + path + " failed its checksum check", true);
  }
  return result;
}

/// Whether `path` holds a store; throws if it holds files but no store.
bool store_exists(rocksdb::Env* env, const std::string& path) {
  auto s = env->FileExists(path + "/CURRENT");
  if (s.ok())
    return true;
  if (!s.IsNotFound())
    fail(s, "cannot look for a control store at " + path);
  std::vector<std::string> children;
  s = env->GetChildren(path, &children);
  if (s.IsNotFound() || s.IsPathNotFound())
    return false;
  check(s, "cannot list " + path);
  for (const auto& c : children)
    if (c != "." && c != "..")
      throw store_error(kind::corrupt,
                        path + " holds files but no control store (no "
                               "CURRENT file); refusing to touch it");
  return false;
}

/// Creates `path` and its missing parents through `env`.
void create_dirs(rocksdb::Env* env, const std::string& path) {
  for (auto pos = path.find('/', 1); pos != std::string::npos;
       pos = path.find('/', pos + 1))
    check(env->CreateDirIfMissing(path.substr(0, pos)),
          "cannot create " + path.substr(0, pos));
  check(env->CreateDirIfMissing(path), "cannot create " + path);
}

} // namespace

// -- state --------------------------------------------------------------------

struct control_store::state {
  std::string path;
  /// Owns the environment made for `store_options::file_system`, if any.
  std::unique_ptr<rocksdb::Env> owned_env;
  rocksdb::DB* db = nullptr;
  /// Every open column family, ours and any other the store holds.
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  std::array<rocksdb::ColumnFamilyHandle*, num_tables> tables{};
  rocksdb::WriteOptions write_options;
  /// Serializes writes, so that read-modify-write calls (`kv_put` without
  /// overwrite, `kv_del`, `recover`) are atomic.
  std::mutex write_mu;
  std::shared_ptr<spdlog::logger> log = store_log();
  /// Gives the column families their running memtable size once the store
  /// is open.
  std::thread shrinker;

  ~state() {
    join_shrinker();
    auto s = close_db(db, handles);
    if (!s.ok())
      log->error("closing control store at {} failed: {}", path, s.ToString());
  }

  rocksdb::ColumnFamilyHandle* cf(table t) const {
    return tables[static_cast<std::size_t>(t)];
  }

  /// Sets every column family's memtables to 8 MB, on a thread of its own:
  /// what the store keeps in memory between flushes stays small next to the
  /// records it holds (a record of each of 100,000 actors, written two or
  /// three times, is about 80 MB). 8 MB rather than 16 took about 10 MB off
  /// a process with 100,000 actors (`actors_100k_rss_mb`), and cost neither
  /// `actor_creation` nor `gcs_write_nosync` anything measurable. Each change
  /// rewrites and reads back the store's OPTIONS file, 5 ms a table, which a
  /// restart need not wait for; until then, memtables may grow to their
  /// recovery size.
  void shrink_memtables() {
    shrinker = std::thread{[this] {
      for (auto* h : handles) {
        auto s = db->SetOptions(h, {{"write_buffer_size", "8388608"}});
        if (!s.ok())
          log->error("control store at {}: cannot set the memtable size of "
                     "table {}: {}; its memtables may grow to 64 MB",
                     path, h->GetName(), s.ToString());
      }
    }};
  }

  void join_shrinker() {
    if (shrinker.joinable())
      shrinker.join();
  }

  void apply(const std::vector<layout::op>& ops,
             const rocksdb::WriteOptions& wo) {
    rocksdb::WriteBatch wb;
    for (const auto& o : ops) {
      auto s = o.del     ? wb.Delete(cf(o.where), o.key)
               : o.merge ? wb.Merge(cf(o.where), o.key, o.value)
                         : wb.Put(cf(o.where), o.key, o.value);
      check(s, "cannot build a write to control store at " + path);
    }
    check(db->Write(wo, &wb), "write to control store at " + path + " failed");
  }

  void put(table t, const std::string& key, const std::string& value) {
    std::lock_guard<std::mutex> guard{write_mu};
    check(db->Put(write_options, cf(t), key, value),
          std::string{"write to table "} + layout::name(t) + " failed");
  }

  void del(table t, const std::string& key) {
    std::lock_guard<std::mutex> guard{write_mu};
    check(db->Delete(write_options, cf(t), key),
          std::string{"delete from table "} + layout::name(t) + " failed");
  }

  /// Reads `key`; nullopt if absent.
  std::optional<std::string> get(table t, const std::string& key) {
    std::string value;
    auto s = db->Get(rocksdb::ReadOptions{}, cf(t), key, &value);
    if (s.IsNotFound())
      return std::nullopt;
    check(s, std::string{"read from table "} + layout::name(t) + " failed");
    return value;
  }

  /// Decodes a record read by `get`; a record that does not decode is damage.
  template <class Record>
  std::optional<Record> get_record(table t, const std::string& key,
                                   const std::string& shown) {
    auto bytes = get(t, key);
    if (!bytes)
      return std::nullopt;
    Record out;
    std::string why;
    switch (codec::decode(*bytes, out, why)) {
    case codec::decoded::ok:
      break;
    case codec::decoded::repaired:
      log->warn("{} {}: {}", layout::name(t), shown, why);
      break;
    case codec::decoded::malformed:
      throw store_error(kind::corrupt, std::string{layout::name(t)} + " " +
                                           shown + ": " + why);
    }
    return out;
  }
};

// -- constructors -------------------------------------------------------------

control_store::control_store(std::unique_ptr<state> st) : st_(std::move(st)) {}

control_store::control_store(control_store&&) noexcept = default;

control_store& control_store::operator=(control_store&&) noexcept = default;

control_store::~control_store() = default;

control_store control_store::open(const store_options& opts) {
  if (opts.path.empty())
    throw store_error(kind::invalid_argument, "control store path is empty");
  auto st = std::make_unique<state>();
  st->path = opts.path;
  while (st->path.size() > 1 && st->path.back() == '/')
    st->path.pop_back();
  const auto& path = st->path;
  rocksdb::Env* env = opts.env != nullptr ? opts.env : rocksdb::Env::Default();
  if (opts.file_system) {
    st->owned_env = rocksdb::NewCompositeEnv(opts.file_system);
    env = st->owned_env.get();
  }
  auto base = base_options(env);
  auto version = found_version::absent;
  std::vector<std::string> names;
  auto start = steady_clock::now();
  if (store_exists(env, path)) {
    version = probe(base, path, opts.verify_checksums);
    st->log->info("checked control store at {} in {} ms", path,
                  ms_since(start));
    check(rocksdb::DB::ListColumnFamilies(base, path, &names),
          "control store at " + path + " is unreadable");
  } else if (!opts.create_if_missing) {
    throw store_error(kind::not_found, "no control store at " + path);
  } else {
    create_dirs(env, path);
    base.create_if_missing = true;
    names.push_back(rocksdb::kDefaultColumnFamilyName);
  }
  for (auto t : layout::all_tables)
    if (std::find(names.begin(), names.end(), layout::name(t)) == names.end())
      names.emplace_back(layout::name(t));
  base.create_missing_column_families = true;
  auto s = rocksdb::DB::Open(base, path, descriptors(names, base), &st->handles,
                             &st->db);
  if (!s.ok())
    fail(s, "cannot open control store at " + path, true);
  for (std::size_t i = 0; i < names.size(); ++i)
    for (auto t : layout::all_tables)
      if (names[i] == layout::name(t))
        st->tables[static_cast<std::size_t>(t)] = st->handles[i];
  st->shrink_memtables();
  st->write_options.sync = opts.sync;
  if (version == found_version::absent) {
    rocksdb::WriteOptions wo;
    wo.sync = true;
    check(st->db->Put(wo, st->db->DefaultColumnFamily(),
                      layout::schema_version_key,
                      std::to_string(schema_version)),
          "cannot write the schema version of control store at " + path);
    st->log->info("created control store at {} (schema version {})", path,
                  schema_version);
  }
  st->log->info("opened control store at {} in {} ms", path, ms_since(start));
  return control_store{std::move(st)};
}

void control_store::verify(const store_options& opts, bool logs) {
  rocksdb::Env* env = opts.env != nullptr ? opts.env : rocksdb::Env::Default();
  std::unique_ptr<rocksdb::Env> owned_env;
  if (opts.file_system) {
    owned_env = rocksdb::NewCompositeEnv(opts.file_system);
    env = owned_env.get();
  }
  if (!store_exists(env, opts.path))
    throw store_error(kind::not_found, "no control store at " + opts.path);
  probe(base_options(env), opts.path, opts.verify_checksums, logs);
}

void control_store::close() {
  if (!st_)
    return;
  st_->join_shrinker();
  auto s = close_db(st_->db, st_->handles);
  auto path = st_->path;
  st_.reset();
  check(s, "closing control store at " + path + " failed");
}

// -- recovery -----------------------------------------------------------------

recovery control_store::recover() {
  std::lock_guard<std::mutex> guard{st_->write_mu};
  auto start = steady_clock::now();
  auto* db = st_->db;
  rocksdb::ReadOptions ro;
  ro.fill_cache = false;
  ro.readahead_size = 2 << 20;
  ro.snapshot = db->GetSnapshot();
  struct release {
    rocksdb::DB* db;
    const rocksdb::Snapshot* snap;
    ~release() {
      db->ReleaseSnapshot(snap);
    }
  } guard_snapshot{db, ro.snapshot};
  // Each record is decoded as soon as its rows are read (`read_ahead`): a
  // copy of every table first (about 40 MB for 100,000 actors) cost a
  // restart a fifth of its recovery, most of it in page faults.
  std::uint64_t actors = 0;
  if (!db->GetIntProperty(st_->cf(table::actors),
                          rocksdb::DB::Properties::kEstimateNumKeys, &actors))
    actors = 0;
  auto plan = plan_recovery(
      [&](table t, const row_visitor& row) {
        read_ahead reader{db, ro, st_->cf(t)};
        auto s = reader.each(row);
        if (!s.ok())
          fail(s, std::string{"cannot read table "} + layout::name(t) +
                      " of control store at " + st_->path);
      },
      static_cast<std::size_t>(actors));
  if (!plan.writes.empty()) {
    rocksdb::WriteOptions wo;
    wo.sync = true;
    st_->apply(plan.writes, wo);
    st_->log->warn("recovery of control store at {}: {} repairs written",
                   st_->path, plan.writes.size());
  }
  const auto& t = plan.result.tables;
  st_->log->info("recovered control store at {} in {} ms: {} jobs, {} nodes, "
                 "{} actors, {} names, {} kv entries, {} lineage records, {} "
                 "repairs",
                 st_->path, ms_since(start), t.jobs.size(), t.nodes.size(),
                 t.actors.size(), t.named_actors.size(), t.kv.size(),
                 t.lineage.size(), plan.result.report.repairs.size());
  return std::move(plan.result);
}

// -- jobs ---------------------------------------------------------------------

void control_store::put_job(const job_record& r) {
  st_->put(table::jobs, layout::job_key(r.job), codec::encode(r));
}

std::optional<job_record> control_store::get_job(job_id id) {
  return st_->get_record<job_record>(table::jobs, layout::job_key(id),
                                     std::to_string(id.value));
}

void control_store::del_job(job_id id) {
  st_->del(table::jobs, layout::job_key(id));
}

// -- nodes --------------------------------------------------------------------

void control_store::put_node(const node_record& r) {
  st_->put(table::nodes, layout::id_key(r.node), codec::encode(r));
}

std::optional<node_record> control_store::get_node(node_id id) {
  return st_->get_record<node_record>(table::nodes, layout::id_key(id),
                                      id.hex());
}

void control_store::del_node(node_id id) {
  st_->del(table::nodes, layout::id_key(id));
}

// -- actors -------------------------------------------------------------------

void control_store::put_actor(const actor_record& r) {
  st_->put(table::actors, layout::id_key(r.actor), codec::encode(r));
}

std::optional<actor_record> control_store::get_actor(actor_id id) {
  return st_->get_record<actor_record>(table::actors, layout::id_key(id),
                                       id.hex());
}

void control_store::del_actor(actor_id id) {
  st_->del(table::actors, layout::id_key(id));
}

// -- named actors -------------------------------------------------------------

void control_store::put_named_actor(const std::string& ns,
                                    const std::string& name, actor_id actor) {
  st_->put(table::named_actors, layout::scoped_key(ns, name),
           codec::encode_named_actor(actor));
}

std::optional<actor_id>
control_store::get_named_actor(const std::string& ns, const std::string& name) {
  auto bytes = st_->get(table::named_actors, layout::scoped_key(ns, name));
  if (!bytes)
    return std::nullopt;
  actor_id out;
  std::string why;
  if (codec::decode_named_actor(*bytes, out, why) != codec::decoded::ok)
    throw store_error(kind::corrupt, "named_actors " + layout::printable(ns) +
                                         "/" + layout::printable(name) + ": " +
                                         why);
  return out;
}

void control_store::del_named_actor(const std::string& ns,
                                    const std::string& name) {
  st_->del(table::named_actors, layout::scoped_key(ns, name));
}

// -- key-value table ----------------------------------------------------------

bool control_store::kv_put(const std::string& ns, const std::string& key,
                           const std::string& value, bool overwrite) {
  auto k = layout::scoped_key(ns, key);
  std::lock_guard<std::mutex> guard{st_->write_mu};
  bool existed = st_->get(table::kv, k).has_value();
  if (existed && !overwrite)
    return true;
  check(st_->db->Put(st_->write_options, st_->cf(table::kv), k, value),
        "write to table kv failed");
  return existed;
}

std::optional<std::string> control_store::kv_get(const std::string& ns,
                                                 const std::string& key) {
  return st_->get(table::kv, layout::scoped_key(ns, key));
}

bool control_store::kv_del(const std::string& ns, const std::string& key) {
  auto k = layout::scoped_key(ns, key);
  std::lock_guard<std::mutex> guard{st_->write_mu};
  if (!st_->get(table::kv, k))
    return false;
  check(st_->db->Delete(st_->write_options, st_->cf(table::kv), k),
        "delete from table kv failed");
  return true;
}

std::vector<std::string> control_store::kv_keys(const std::string& ns,
                                                const std::string& prefix) {
  auto start = layout::scoped_key(ns, prefix);
  std::vector<std::string> out;
  std::unique_ptr<rocksdb::Iterator> it{
      st_->db->NewIterator(rocksdb::ReadOptions{}, st_->cf(table::kv))};
  for (it->Seek(start); it->Valid() && it->key().starts_with(start);
       it->Next()) {
    std::string key_ns;
    std::string key;
    if (layout::parse_scoped_key(
            std::string_view{it->key().data(), it->key().size()}, key_ns, key))
      out.push_back(std::move(key));
  }
  check(it->status(), "cannot list table kv");
  return out;
}

// -- batches ------------------------------------------------------------------

void control_store::write(const write_batch& b) {
  if (b.empty())
    return;
  std::lock_guard<std::mutex> guard{st_->write_mu};
  st_->apply(b.rep_->ops, st_->write_options);
}

// -- properties ---------------------------------------------------------------

const std::string& control_store::path() const noexcept {
  return st_->path;
}

// -- free functions -----------------------------------------------------------

const char* to_string(repair::action a) noexcept {
  switch (a) {
  case repair::action::dropped:
    return "dropped";
  case repair::action::fixed:
    return "fixed";
  case repair::action::kept:
    return "kept";
  }
  return "unknown";
}

std::size_t repair_report::count(repair::action what) const noexcept {
  std::size_t n = 0;
  for (const auto& r : repairs)
    n += r.what == what ? 1 : 0;
  return n;
}

} // namespace prism::persistence
