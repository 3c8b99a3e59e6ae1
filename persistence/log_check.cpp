#include "log_check.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <utility>

#include <rocksdb/write_batch.h>

#include "crc32c.hpp"
#include "store_error.hpp"
#include "store_layout.hpp"

namespace prism::persistence {

namespace {

namespace fs = std::filesystem;

constexpr std::size_t block_size = 32768;
constexpr std::size_t header_size = 7;
constexpr std::size_t recyclable_header_size = 11;
/// A write batch starts with its sequence number and its count.
constexpr std::size_t batch_header_size = 12;

enum record_type : std::uint8_t {
  zero_type = 0,
  full_type = 1,
  first_type = 2,
  middle_type = 3,
  last_type = 4,
  recyclable_full_type = 5,
  recyclable_last_type = 8,
  set_compression_type = 9,
  timestamp_size_type = 10,
  recyclable_timestamp_size_type = 11,
};

/// The header size of a record of type `t`; 0 for an unknown type.
std::size_t header_of(std::uint8_t t) noexcept {
  if (t >= full_type && t <= last_type)
    return header_size;
  if (t == set_compression_type || t == timestamp_size_type)
    return header_size;
  if ((t >= recyclable_full_type && t <= recyclable_last_type) ||
      t == recyclable_timestamp_size_type)
    return recyclable_header_size;
  return 0;
}

/// The kind of a fragment, recyclable or not: full, first, middle or last.
std::uint8_t fragment_kind(std::uint8_t t) noexcept {
  if (t >= recyclable_full_type && t <= recyclable_last_type)
    return static_cast<std::uint8_t>(t - recyclable_full_type + full_type);
  return t;
}

std::uint32_t read_le32(const char* p) noexcept {
  std::uint32_t x = 0;
  for (int i = 3; i >= 0; --i)
    x = (x << 8) | static_cast<unsigned char>(p[i]);
  return x;
}

std::uint64_t read_le64(const char* p) noexcept {
  std::uint64_t x = 0;
  for (int i = 7; i >= 0; --i)
    x = (x << 8) | static_cast<unsigned char>(p[i]);
  return x;
}

/// The masked CRC a header stores for a record whose checksummed bytes (its
/// type, for recyclable records its log number, then its payload) are
/// `bytes`.
std::uint32_t masked_crc(std::string_view bytes) {
  auto c = crc32c(bytes);
  return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

/// Lists a batch's writes by table.
class write_lister : public rocksdb::WriteBatch::Handler {
public:
  write_lister(const table_names& names, std::vector<logged_write>& out)
      : names_(names), out_(out) {}

  rocksdb::Status PutCF(std::uint32_t cf, const rocksdb::Slice& key,
                        const rocksdb::Slice&) override {
    return add(cf, "put", key);
  }
  rocksdb::Status DeleteCF(std::uint32_t cf,
                           const rocksdb::Slice& key) override {
    return add(cf, "delete", key);
  }
  rocksdb::Status SingleDeleteCF(std::uint32_t cf,
                                 const rocksdb::Slice& key) override {
    return add(cf, "delete", key);
  }
  rocksdb::Status DeleteRangeCF(std::uint32_t cf, const rocksdb::Slice& begin,
                                const rocksdb::Slice&) override {
    return add(cf, "delete range from", begin);
  }
  rocksdb::Status MergeCF(std::uint32_t cf, const rocksdb::Slice& key,
                          const rocksdb::Slice&) override {
    return add(cf, "merge", key);
  }
  void LogData(const rocksdb::Slice&) override {}

private:
  rocksdb::Status add(std::uint32_t cf, const char* op,
                      const rocksdb::Slice& key) {
    auto i = names_.find(cf);
    out_.push_back(
        {i != names_.end() ? i->second : "column family " + std::to_string(cf),
         op, key.ToString()});
    return rocksdb::Status::OK();
  }

  const table_names& names_;
  std::vector<logged_write>& out_;
};

/// Reads one log file after another, record by record. Up to the first
/// damage it counts whole records; from there on it looks for intact
/// records, which are what recovery past the damage would drop.
class log_scanner {
public:
  /// `write_batches`: whether each record is a write batch (a log) or not
  /// (a MANIFEST).
  log_scanner(const table_names& names, log_report& report,
              bool write_batches = true, batch_visitor visit = {})
      : names_(names), report_(report), write_batches_(write_batches),
        visit_(std::move(visit)) {}

  /// Scans `bytes`, the contents of `file`; keeps no view of them.
  void scan(std::string file, std::string_view bytes) {
    file_ = std::move(file);
    bytes_ = bytes;
    pending_.clear();
    in_record_ = false;
    std::size_t pos = 0;
    while (pos < bytes_.size())
      pos = step(pos);
    if (in_record_)
      note(pending_offset_, "a record's last fragment is missing");
  }

private:
  // -- reading ----------------------------------------------------------------

  /// Reads the physical record at `pos`; returns where the next one starts.
  std::size_t step(std::size_t pos) {
    auto block_end = (pos / block_size + 1) * block_size;
    if (block_end - pos < header_size)
      return block_end; // the block's trailer
    auto left = bytes_.size() - pos;
    if (left < header_size) {
      if (!all_zero(pos, bytes_.size()))
        return damaged(pos, "the file ends inside a record header");
      return bytes_.size();
    }
    const char* h = bytes_.data() + pos;
    auto length =
        static_cast<std::size_t>(static_cast<unsigned char>(h[4]) |
                                 (static_cast<unsigned char>(h[5]) << 8));
    auto type = static_cast<std::uint8_t>(h[6]);
    if (type == zero_type && length == 0)
      return block_end; // space a writer set aside and never used
    auto hsize = header_of(type);
    if (hsize == 0)
      return damaged(pos, "unknown record type " + std::to_string(type));
    if (pos + hsize + length > bytes_.size())
      return damaged(pos, "the file ends inside a record");
    if (pos + hsize + length > block_end)
      return damaged(pos, "a record's length runs past its block");
    if (masked_crc({h + 6, hsize - 6 + length}) != read_le32(h))
      return damaged(pos, "checksum mismatch");
    fragment(pos, type, {h + hsize, length});
    return pos + hsize + length;
  }

  /// Puts an intact physical record together with the others of its batch.
  void fragment(std::size_t pos, std::uint8_t type, std::string_view payload) {
    if (type == set_compression_type || type == timestamp_size_type ||
        type == recyclable_timestamp_size_type)
      return; // a note for the reader, not a write
    switch (fragment_kind(type)) {
    case full_type:
      if (in_record_)
        note(pending_offset_, "a record's last fragment is missing");
      whole(pos, payload);
      break;
    case first_type:
      if (in_record_)
        note(pending_offset_, "a record's last fragment is missing");
      in_record_ = true;
      pending_offset_ = pos;
      pending_.assign(payload);
      break;
    case middle_type:
    case last_type:
      if (!in_record_) {
        // Its first fragment was in damaged bytes; the batch is lost with
        // it, and was counted there.
        if (!report_.damage)
          note(pos, "a record's first fragment is missing");
        break;
      }
      pending_.append(payload);
      if (fragment_kind(type) == last_type) {
        in_record_ = false;
        whole(pending_offset_, pending_);
        pending_.clear();
      }
      break;
    }
  }

  /// Counts a whole record, or lists it if it follows damage.
  void whole(std::size_t offset, std::string_view batch) {
    if (write_batches_ && batch.size() < batch_header_size) {
      note(offset, "a record too short for a write batch");
      return;
    }
    auto sequence = write_batches_ ? read_le64(batch.data()) : 0;
    auto count = write_batches_ ? read_le32(batch.data() + 8) : 0;
    if (report_.damage && report_.after_damage.empty() && next_sequence_ != 0 &&
        sequence == next_sequence_) {
      // The writes go on where they stopped before the damage: nothing
      // that was applied is lost there.
      report_.harmless.push_back(*report_.damage);
      report_.damage.reset();
    }
    if (!report_.damage) {
      ++report_.batches;
      if (write_batches_)
        next_sequence_ = sequence + count;
      if (visit_)
        visit_(batch);
      return;
    }
    logged_batch b;
    b.file = file_;
    b.offset = offset;
    if (!write_batches_) {
      report_.after_damage.push_back(std::move(b));
      return;
    }
    b.sequence = read_le64(batch.data());
    b.count = read_le32(batch.data() + 8);
    write_lister lister{names_, b.writes};
    rocksdb::WriteBatch wb{std::string{batch}};
    if (!wb.Iterate(&lister).ok())
      b.writes.clear();
    report_.after_damage.push_back(std::move(b));
  }

  // -- damage -----------------------------------------------------------------

  /// Notes damage at `pos`; only the first damage is reported.
  void note(std::size_t pos, std::string what) {
    if (in_record_)
      pos = std::min(pos, pending_offset_); // the batch's start
    if (!report_.damage)
      report_.damage =
          log_damage{file_, pos, std::move(what), bytes_.size() - pos};
    in_record_ = false;
    pending_.clear();
  }

  /// Notes damage at `pos` and returns where the next intact record starts,
  /// or the end of the file.
  std::size_t damaged(std::size_t pos, std::string what) {
    note(pos, std::move(what));
    for (auto q = pos + 1; q < bytes_.size(); ++q)
      if (intact_at(q))
        return q;
    return bytes_.size();
  }

  /// Whether an intact physical record starts at `q`.
  bool intact_at(std::size_t q) const {
    auto block_end = (q / block_size + 1) * block_size;
    if (block_end - q < header_size || bytes_.size() - q < header_size)
      return false;
    const char* h = bytes_.data() + q;
    auto type = static_cast<std::uint8_t>(h[6]);
    auto hsize = header_of(type);
    if (hsize == 0)
      return false;
    auto length =
        static_cast<std::size_t>(static_cast<unsigned char>(h[4]) |
                                 (static_cast<unsigned char>(h[5]) << 8));
    auto end = q + hsize + length;
    if (end > block_end || end > bytes_.size())
      return false;
    return masked_crc({h + 6, hsize - 6 + length}) == read_le32(h);
  }

  bool all_zero(std::size_t from, std::size_t to) const {
    return std::all_of(bytes_.begin() + static_cast<std::ptrdiff_t>(from),
                       bytes_.begin() + static_cast<std::ptrdiff_t>(to),
                       [](char c) { return c == 0; });
  }

  const table_names& names_;
  log_report& report_;
  bool write_batches_;
  batch_visitor visit_;
  /// The sequence number of the write after the last intact batch before
  /// any damage; 0 while unknown.
  std::uint64_t next_sequence_ = 0;
  std::string file_;
  std::string_view bytes_;
  /// The fragments read so far of a record cut into several.
  std::string pending_;
  std::size_t pending_offset_ = 0;
  bool in_record_ = false;
};

/// The number of a log file named "<number>.log", if `name` is one.
std::optional<std::uint64_t> log_number(const std::string& name) {
  constexpr std::string_view suffix = ".log";
  if (name.size() <= suffix.size() ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return std::nullopt;
  std::uint64_t n = 0;
  auto digits = name.size() - suffix.size();
  auto [end, ec] = std::from_chars(name.data(), name.data() + digits, n);
  if (ec != std::errc{} || end != name.data() + digits)
    return std::nullopt;
  return n;
}

/// Reads the file at `p` into `bytes`, whose memory is reused: a store's
/// logs are tens of megabytes, and fresh pages for each cost a restart more
/// than reading them.
void read_file(const fs::path& p, std::string& bytes) {
  std::ifstream in{p, std::ios::binary};
  std::error_code ec;
  auto size = fs::file_size(p, ec);
  if (!ec && in) {
    bytes.resize(size);
    in.read(bytes.data(), static_cast<std::streamsize>(size));
  }
  if (ec || !in)
    throw store_error(store_error::kind_t::io,
                      "cannot read " + p.string() + ": " +
                          (ec ? ec.message() : std::strerror(errno)));
}

} // namespace

log_report check_logs(const std::string& dir, const table_names& names,
                      const batch_visitor& visit) {
  std::vector<std::pair<std::uint64_t, std::string>> logs;
  std::error_code ec;
  for (fs::directory_iterator it{dir, ec}, end; !ec && it != end;
       it.increment(ec)) {
    auto name = it->path().filename().string();
    std::error_code type_ec;
    if (auto n = log_number(name); n && it->is_regular_file(type_ec))
      logs.emplace_back(*n, name);
  }
  if (ec)
    throw store_error(store_error::kind_t::io,
                      "cannot list " + dir + ": " + ec.message());
  std::sort(logs.begin(), logs.end());
  log_report report;
  log_scanner scanner{names, report, true, visit};
  std::string bytes;
  for (auto& [n, name] : logs) {
    report.files.push_back(name);
    read_file(fs::path{dir} / name, bytes);
    scanner.scan(name, bytes);
  }
  return report;
}

log_report check_manifest(const std::string& dir) {
  log_report report;
  report.kind = "MANIFEST";
  std::ifstream current{fs::path{dir} / "CURRENT"};
  std::string name;
  std::getline(current, name);
  std::error_code ec;
  if (name.empty() || name.find('/') != std::string::npos ||
      !fs::is_regular_file(fs::path{dir} / name, ec))
    return report; // RocksDB refuses the store itself
  table_names none;
  log_scanner scanner{none, report, false};
  report.files.push_back(name);
  std::string bytes;
  read_file(fs::path{dir} / name, bytes);
  scanner.scan(name, bytes);
  return report;
}

std::string describe(const log_report& r) {
  if (!r.damage)
    return {};
  const auto& d = *r.damage;
  auto where = r.kind + " " + d.file + " at offset " +
               std::to_string(d.offset) + " (" + d.what + ")";
  if (r.torn_tail())
    return "the last record of " + where +
           " is cut short: a write that a crash interrupted, never "
           "acknowledged; opening the store drops its " +
           std::to_string(d.bytes) + " bytes";
  auto records = std::to_string(r.after_damage.size()) + " intact records";
  if (r.kind != "write-ahead log")
    return where + " is damaged, and " + records + " follow it";
  std::uint64_t writes = 0;
  for (const auto& b : r.after_damage)
    writes += b.count;
  return where + " is damaged, and " + std::to_string(r.after_damage.size()) +
         " intact records holding " + std::to_string(writes) +
         " acknowledged writes (sequence " +
         std::to_string(r.after_damage.front().sequence) + " on) follow it";
}

} // namespace prism::persistence
