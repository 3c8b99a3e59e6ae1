#include "store_layout.hpp"

#include <cstdio>

namespace prism::persistence::layout {

namespace {

void append_be32(std::string& out, std::uint32_t x) {
  for (int shift = 24; shift >= 0; shift -= 8)
    out.push_back(static_cast<char>((x >> shift) & 0xff));
}

void append_be64(std::string& out, std::uint64_t x) {
  for (int shift = 56; shift >= 0; shift -= 8)
    out.push_back(static_cast<char>((x >> shift) & 0xff));
}

std::uint64_t read_be(std::string_view bytes) noexcept {
  std::uint64_t x = 0;
  for (char c : bytes)
    x = (x << 8) | static_cast<unsigned char>(c);
  return x;
}

} // namespace

const char* name(table t) noexcept {
  switch (t) {
  case table::jobs:
    return "jobs";
  case table::nodes:
    return "nodes";
  case table::actors:
    return "actors";
  case table::named_actors:
    return "named_actors";
  case table::kv:
    return "kv";
  case table::requests:
    return "requests";
  case table::lineage:
    return "lineage";
  }
  return "unknown";
}

std::string job_key(job_id id) {
  std::string out;
  append_be32(out, id.value);
  return out;
}

bool parse_job_key(std::string_view key, job_id& out) noexcept {
  if (key.size() != 4)
    return false;
  out.value = static_cast<std::uint32_t>(read_be(key));
  return true;
}

std::string id_key(const unique_id& id) {
  std::string out;
  out.reserve(16);
  append_be64(out, id.hi);
  append_be64(out, id.lo);
  return out;
}

bool parse_id_key(std::string_view key, unique_id& out) noexcept {
  if (key.size() != 16)
    return false;
  out.hi = read_be(key.substr(0, 8));
  out.lo = read_be(key.substr(8));
  return true;
}

std::string lineage_key(job_id job, const object_id& object) {
  auto out = job_key(job);
  out.reserve(32);
  out += id_key(object.task.submitter);
  append_be64(out, object.task.seq);
  append_be32(out, object.index);
  return out;
}

bool parse_lineage_key(std::string_view key, job_id& job,
                       object_id& object) noexcept {
  if (key.size() != 32)
    return false;
  job.value = static_cast<std::uint32_t>(read_be(key.substr(0, 4)));
  parse_id_key(key.substr(4, 16), object.task.submitter);
  object.task.seq = read_be(key.substr(20, 8));
  object.index = static_cast<std::uint32_t>(read_be(key.substr(28, 4)));
  return true;
}

std::string scoped_key(std::string_view ns, std::string_view rest) {
  std::string out;
  out.reserve(4 + ns.size() + rest.size());
  append_be32(out, static_cast<std::uint32_t>(ns.size()));
  out.append(ns);
  out.append(rest);
  return out;
}

bool parse_scoped_key(std::string_view key, std::string& ns,
                      std::string& rest) {
  if (key.size() < 4)
    return false;
  auto len = read_be(key.substr(0, 4));
  if (len > key.size() - 4)
    return false;
  ns.assign(key.substr(4, len));
  rest.assign(key.substr(4 + len));
  return true;
}

std::string order_key(std::uint64_t order) {
  std::string out;
  append_be64(out, order);
  return out;
}

bool parse_order_key(std::string_view key, std::uint64_t& out) noexcept {
  if (key.size() != 8)
    return false;
  out = read_be(key);
  return true;
}

std::string applied_request_value(const unique_id& client, std::uint64_t seq,
                                  bool result) {
  auto out = id_key(client);
  append_be64(out, seq);
  out.push_back(result ? '\1' : '\0');
  return out;
}

bool parse_applied_request_value(std::string_view value, unique_id& client,
                                 std::uint64_t& seq, bool& result) noexcept {
  if (value.size() != 25 || static_cast<unsigned char>(value[24]) > 1)
    return false;
  parse_id_key(value.substr(0, 16), client);
  seq = read_be(value.substr(16, 8));
  result = value[24] == '\1';
  return true;
}

std::string printable(std::string_view bytes) {
  constexpr std::size_t max_chars = 200;
  std::string out;
  for (unsigned char c : bytes) {
    if (out.size() >= max_chars) {
      out += "...";
      break;
    }
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      char buf[5];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

} // namespace prism::persistence::layout
