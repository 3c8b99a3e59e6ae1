#include "test_support.hpp"

#include <boost/test/unit_test.hpp>

#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include <unistd.h>

#include <rocksdb/options.h>

namespace prism::persistence::testing {

namespace {

void check(const rocksdb::Status& s, const char* what) {
  if (!s.ok())
    throw std::runtime_error(std::string{what} + ": " + s.ToString());
}

} // namespace

// -- temp_dir -----------------------------------------------------------------

temp_dir::temp_dir() {
  static std::atomic<int> counter{0};
  std::random_device rd;
  root_ = std::filesystem::temp_directory_path() /
          ("prism_persistence_" + std::to_string(::getpid()) + "_" +
           std::to_string(counter++) + "_" + std::to_string(rd()));
  std::filesystem::create_directories(root_);
}

temp_dir::~temp_dir() {
  std::error_code ec;
  std::filesystem::remove_all(root_, ec);
}

store_options options_for(const std::string& path) {
  store_options opts;
  opts.path = path;
  return opts;
}

void write_file(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream out{p, std::ios::binary | std::ios::trunc};
  out << bytes;
}

std::filesystem::path file_matching(const std::string& dir,
                                    const std::string& prefix,
                                    const std::string& suffix) {
  std::filesystem::path best;
  std::uintmax_t best_size = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    auto name = e.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && name.size() >= suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0 &&
        e.file_size() >= best_size) {
      best = e.path();
      best_size = e.file_size();
    }
  }
  BOOST_REQUIRE_MESSAGE(!best.empty(), "no " << prefix << "*" << suffix);
  return best;
}

// -- sample records -----------------------------------------------------------

job_record sample_job(std::uint32_t i) {
  job_record r;
  r.job.value = i;
  r.driver.hi = 0x1000 + i;
  r.driver.lo = 0x2000 + i;
  r.ns = "ns-" + std::to_string(i % 3);
  r.finished = i % 2 == 1;
  r.start_ms = 1'700'000'000'000 + i;
  return r;
}

node_record sample_node(std::uint64_t i) {
  node_record r;
  r.node.hi = 0xa000 + i;
  r.node.lo = 0xb000 + i;
  r.resources = {{"CPU", 4.0 + static_cast<double>(i)}, {"GPU", 0.5}};
  r.alive = i % 2 == 0;
  return r;
}

actor_id sample_actor_id(std::uint64_t i) {
  actor_id id;
  id.hi = 0xac70'0000'0000'0000ULL + i;
  id.lo = i * 0x9e3779b97f4a7c15ULL + 1;
  return id;
}

actor_record sample_actor(std::uint64_t i) {
  actor_record r;
  r.actor = sample_actor_id(i);
  r.job.value = static_cast<std::uint32_t>(i % 7 + 1);
  if (i % 2 == 0) {
    r.name = "actor-" + std::to_string(i);
    r.ns = "ns-" + std::to_string(i % 3);
  }
  r.detached = i % 4 == 0;
  r.max_restarts = static_cast<std::int32_t>(i % 5) - 1;
  r.num_restarts = static_cast<std::int32_t>(i % 3);
  r.state = static_cast<actor_state>(i % 3); // pending, alive, restarting
  r.node.hi = i + 11;
  r.node.lo = i + 12;
  r.owner.hi = i + 13;
  r.owner.lo = i + 14;
  r.creation_spec = "spec-" + std::to_string(i) + '\0';
  for (int b = 0; b < 256; ++b)
    r.creation_spec.push_back(static_cast<char>(b ^ (i & 0xff)));
  for (std::int32_t k = 1; k <= r.num_restarts; ++k)
    r.restarts.push_back(restart_record{
        k, static_cast<std::int64_t>(1'700'000'000'000 + i * 10 + k), r.node,
        "its worker died (signal " + std::to_string(k + 8) + ")"});
  return r;
}

void register_actor(control_store& store, const actor_record& a) {
  write_batch b;
  b.put_actor(a);
  if (!a.name.empty())
    b.put_named_actor(a.ns, a.name, a.actor);
  store.write(b);
}

// -- fingerprint --------------------------------------------------------------

fingerprint fingerprint_of(const std::string& dir) {
  fingerprint out;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file())
      continue;
    std::ifstream in{entry.path(), std::ios::binary};
    std::ostringstream bytes;
    bytes << in.rdbuf();
    out[std::filesystem::relative(entry.path(), dir).string()] = bytes.str();
  }
  return out;
}

// -- raw_store ----------------------------------------------------------------

raw_store::raw_store(const std::string& path) {
  rocksdb::Options opts;
  check(rocksdb::DB::ListColumnFamilies(opts, path, &names_),
        "list column families");
  std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
  for (const auto& n : names_)
    cfs.emplace_back(n, rocksdb::ColumnFamilyOptions{});
  check(rocksdb::DB::Open(opts, path, cfs, &handles_, &db_), "open raw store");
}

raw_store::~raw_store() {
  for (auto* h : handles_)
    db_->DestroyColumnFamilyHandle(h);
  db_->Close();
  delete db_;
}

rocksdb::ColumnFamilyHandle* raw_store::handle(const std::string& cf) {
  for (std::size_t i = 0; i < names_.size(); ++i)
    if (names_[i] == cf)
      return handles_[i];
  throw std::runtime_error("no column family " + cf);
}

void raw_store::put(const std::string& cf, const std::string& key,
                    const std::string& value) {
  rocksdb::WriteOptions wo;
  wo.sync = true;
  check(db_->Put(wo, handle(cf), key, value), "raw put");
}

std::string raw_store::get(const std::string& cf, const std::string& key) {
  std::string value;
  check(db_->Get(rocksdb::ReadOptions{}, handle(cf), key, &value), "raw get");
  return value;
}

void raw_store::del(const std::string& cf, const std::string& key) {
  rocksdb::WriteOptions wo;
  wo.sync = true;
  check(db_->Delete(wo, handle(cf), key), "raw delete");
}

void raw_store::flush() {
  rocksdb::FlushOptions fo;
  fo.wait = true;
  check(db_->Flush(fo, handles_), "flush");
}

// -- failing_fs ---------------------------------------------------------------

namespace {

class failing_file : public rocksdb::FSWritableFileOwnerWrapper {
public:
  failing_file(std::unique_ptr<rocksdb::FSWritableFile> target, failing_fs* fs)
      : rocksdb::FSWritableFileOwnerWrapper(std::move(target)), fs_(fs) {}

  rocksdb::IOStatus Append(const rocksdb::Slice& data,
                           const rocksdb::IOOptions& opts,
                           rocksdb::IODebugContext* dbg) override {
    if (auto s = fs_->on_append(); !s.ok())
      return s;
    return target()->Append(data, opts, dbg);
  }

  rocksdb::IOStatus Append(const rocksdb::Slice& data,
                           const rocksdb::IOOptions& opts,
                           const rocksdb::DataVerificationInfo& info,
                           rocksdb::IODebugContext* dbg) override {
    if (auto s = fs_->on_append(); !s.ok())
      return s;
    return target()->Append(data, opts, info, dbg);
  }

  rocksdb::IOStatus PositionedAppend(const rocksdb::Slice& data,
                                     uint64_t offset,
                                     const rocksdb::IOOptions& opts,
                                     rocksdb::IODebugContext* dbg) override {
    if (auto s = fs_->on_append(); !s.ok())
      return s;
    return target()->PositionedAppend(data, offset, opts, dbg);
  }

  rocksdb::IOStatus PositionedAppend(const rocksdb::Slice& data,
                                     uint64_t offset,
                                     const rocksdb::IOOptions& opts,
                                     const rocksdb::DataVerificationInfo& info,
                                     rocksdb::IODebugContext* dbg) override {
    if (auto s = fs_->on_append(); !s.ok())
      return s;
    return target()->PositionedAppend(data, offset, opts, info, dbg);
  }

  rocksdb::IOStatus Sync(const rocksdb::IOOptions& opts,
                         rocksdb::IODebugContext* dbg) override {
    if (auto s = fs_->on_sync(); !s.ok())
      return s;
    return target()->Sync(opts, dbg);
  }

  rocksdb::IOStatus Fsync(const rocksdb::IOOptions& opts,
                          rocksdb::IODebugContext* dbg) override {
    if (auto s = fs_->on_sync(); !s.ok())
      return s;
    return target()->Fsync(opts, dbg);
  }

  rocksdb::IOStatus RangeSync(uint64_t offset, uint64_t nbytes,
                              const rocksdb::IOOptions& opts,
                              rocksdb::IODebugContext* dbg) override {
    if (auto s = fs_->on_sync(); !s.ok())
      return s;
    return target()->RangeSync(offset, nbytes, opts, dbg);
  }

private:
  failing_fs* fs_;
};

rocksdb::IOStatus injected_error() {
  return rocksdb::IOStatus::IOError("injected fault");
}

} // namespace

failing_fs::failing_fs() : FileSystemWrapper(rocksdb::FileSystem::Default()) {}

rocksdb::IOStatus failing_fs::NewWritableFile(
    const std::string& fname, const rocksdb::FileOptions& opts,
    std::unique_ptr<rocksdb::FSWritableFile>* r, rocksdb::IODebugContext* dbg) {
  std::unique_ptr<rocksdb::FSWritableFile> file;
  auto s = target()->NewWritableFile(fname, opts, &file, dbg);
  if (s.ok())
    *r = std::make_unique<failing_file>(std::move(file), this);
  return s;
}

rocksdb::IOStatus failing_fs::ReopenWritableFile(
    const std::string& fname, const rocksdb::FileOptions& opts,
    std::unique_ptr<rocksdb::FSWritableFile>* r, rocksdb::IODebugContext* dbg) {
  std::unique_ptr<rocksdb::FSWritableFile> file;
  auto s = target()->ReopenWritableFile(fname, opts, &file, dbg);
  if (s.ok())
    *r = std::make_unique<failing_file>(std::move(file), this);
  return s;
}

rocksdb::IOStatus failing_fs::on_append() {
  if (fail_appends.load()) {
    ++injected;
    return injected_error();
  }
  auto left = appends_left.load();
  while (left >= 0) {
    if (left == 0) {
      ++injected;
      return injected_error();
    }
    if (appends_left.compare_exchange_weak(left, left - 1))
      break;
  }
  return rocksdb::IOStatus::OK();
}

rocksdb::IOStatus failing_fs::on_sync() {
  if (fail_syncs.load()) {
    ++injected;
    return injected_error();
  }
  return rocksdb::IOStatus::OK();
}

} // namespace prism::persistence::testing
