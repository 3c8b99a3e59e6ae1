#include "store_check.hpp"

#include <filesystem>
#include <memory>

#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/options.h>

#include "record_merge.hpp"
#include "store_layout.hpp"
#include "store_log.hpp"

namespace prism::persistence {

namespace {

namespace fs = std::filesystem;
using kind = store_error::kind_t;

/// The column family names of the store at `path` by id, read without
/// changing it; empty if the store does not open read-only.
table_names names_of(const std::string& path) {
  rocksdb::Options o;
  o.info_log = make_rocksdb_log();
  o.merge_operator = record_merge_operator();
  o.wal_recovery_mode = rocksdb::WALRecoveryMode::kPointInTimeRecovery;
  std::vector<std::string> names;
  if (!rocksdb::DB::ListColumnFamilies(o, path, &names).ok())
    return {};
  std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
  for (const auto& n : names)
    cfs.emplace_back(n, rocksdb::ColumnFamilyOptions{o});
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* db = nullptr;
  if (!rocksdb::DB::OpenForReadOnly(o, path, cfs, &handles, &db).ok())
    return {};
  table_names out;
  for (auto* h : handles) {
    out.emplace(h->GetID(), h->GetName());
    db->DestroyColumnFamilyHandle(h);
  }
  delete db;
  return out;
}

/// The store's lock, held while a repair changes its files.
class store_lock {
public:
  explicit store_lock(const std::string& path) : env_(rocksdb::Env::Default()) {
    auto s = env_->LockFile(path + "/LOCK", &lock_);
    if (!s.ok())
      throw store_error(kind::io, "cannot lock the control store at " + path +
                                      " (is it open?): " + s.ToString());
  }
  store_lock(const store_lock&) = delete;
  store_lock& operator=(const store_lock&) = delete;
  ~store_lock() {
    env_->UnlockFile(lock_);
  }

private:
  rocksdb::Env* env_;
  rocksdb::FileLock* lock_ = nullptr;
};

/// Copies every file of `from` into the new directory `to`; table files,
/// which never change, are hard-linked when they can be.
void back_up(const std::string& from, const std::string& to) {
  std::error_code ec;
  if (fs::exists(to, ec))
    throw store_error(kind::invalid_argument,
                      "the backup directory " + to + " exists already");
  fs::create_directories(to, ec);
  if (ec)
    throw store_error(kind::io, "cannot create " + to + ": " + ec.message());
  fs::directory_iterator files{from, ec};
  if (ec)
    throw store_error(kind::io, "cannot list " + from + ": " + ec.message());
  for (const auto& e : files) {
    std::error_code type_ec;
    if (!e.is_regular_file(type_ec))
      continue;
    auto target = fs::path{to} / e.path().filename();
    if (e.path().extension() == ".sst") {
      fs::create_hard_link(e.path(), target, ec);
      if (!ec)
        continue;
    }
    fs::copy_file(e.path(), target, ec);
    if (ec)
      throw store_error(kind::io, "cannot copy " + e.path().string() + " to " +
                                      to + ": " + ec.message());
  }
}

/// Cuts the damaged log at its damage and moves the logs after it out of
/// the store (they are in the backup).
void drop_log_damage(const std::string& path, const log_report& logs) {
  const auto& d = *logs.damage;
  std::error_code ec;
  fs::resize_file(fs::path{path} / d.file, d.offset, ec);
  if (ec)
    throw store_error(kind::io, "cannot cut " + d.file + " at offset " +
                                    std::to_string(d.offset) + ": " +
                                    ec.message());
  bool later = false;
  for (const auto& f : logs.files) {
    if (later) {
      fs::remove(fs::path{path} / f, ec);
      if (ec)
        throw store_error(kind::io, "cannot remove " + f + ": " + ec.message());
    }
    later = later || f == d.file;
  }
}

} // namespace

store_check check_store(const std::string& path) {
  store_check out;
  store_options opts;
  opts.path = path;
  try {
    control_store::verify(opts);
  } catch (const store_error& e) {
    if (e.kind() == kind::not_found || e.kind() == kind::io)
      throw;
    out.refusal = e;
  }
  out.manifest = check_manifest(path);
  out.logs = check_logs(path, names_of(path));
  if (out.logs.damaged_in_the_middle()) {
    try {
      control_store::verify(opts, false);
    } catch (const store_error& e) {
      out.beyond_logs = e;
    }
  }
  return out;
}

store_repair repair_store(const std::string& path, const std::string& backup) {
  auto found = check_store(path);
  store_repair out;
  if (found.sound())
    return out;
  if (!found.repairable())
    throw store_error(kind::corrupt,
                      "control store at " + path +
                          " is damaged outside its write-ahead logs, and no "
                          "repair drops that: " +
                          (found.beyond_logs ? found.beyond_logs->what()
                                             : found.refusal->what()) +
                          ". Restore the store from a backup.");
  {
    store_lock lock{path};
    // Read again under the lock: nobody changes the logs from here on.
    found.logs = check_logs(path, names_of(path));
    if (!found.logs.damaged_in_the_middle())
      throw store_error(kind::io, "control store at " + path +
                                      " changed while it was checked; "
                                      "nothing was changed: check it again");
    back_up(path, backup);
    drop_log_damage(path, found.logs);
  }
  out.backup = backup;
  out.dropped = std::move(found.logs.after_damage);
  store_options opts;
  opts.path = path;
  auto store = control_store::open(opts);
  out.tables = store.recover().report;
  store.close();
  store_log()->warn("repaired control store at {}: dropped {} records after "
                    "the damage; the files before are in {}",
                    path, out.dropped.size(), backup);
  return out;
}

std::string show_key(const std::string& table, const std::string& key) {
  if (table == layout::name(layout::table::kv) ||
      table == layout::name(layout::table::named_actors)) {
    std::string ns;
    std::string rest;
    if (layout::parse_scoped_key(key, ns, rest))
      return layout::printable(ns) + "/" + layout::printable(rest);
  } else if (table == layout::name(layout::table::jobs)) {
    job_id id;
    if (layout::parse_job_key(key, id))
      return "job " + std::to_string(id.value);
  } else if (table == layout::name(layout::table::nodes) ||
             table == layout::name(layout::table::actors)) {
    unique_id id;
    if (layout::parse_id_key(key, id))
      return id.hex();
  }
  return layout::printable(key);
}

} // namespace prism::persistence
