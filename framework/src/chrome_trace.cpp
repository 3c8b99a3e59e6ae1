#include "prism/internal/chrome_trace.hpp"

#include <algorithm>
#include <cstdio>

namespace prism::internal {

namespace {

/// `text` as a JSON string's contents.
void write_escaped(std::ostream& out, const std::string& text) {
  static const char* hex = "0123456789abcdef";
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\')
      out << '\\' << c;
    else if (u < 0x20)
      out << "\\u00" << hex[u >> 4] << hex[u & 15];
    else
      out << c;
  }
}

/// The first 8 hex digits of an id: enough to tell rows apart, and what
/// `prism list` and `prism get` take as a prefix.
std::string short_hex(const unique_id& id) {
  return id.hex().substr(0, 8);
}

/// The process row of the drivers.
constexpr int drivers_pid = 0;

} // namespace

chrome_trace_writer::chrome_trace_writer(std::ostream& out,
                                         std::int64_t base_us)
    : out_(out), base_us_(base_us) {
  out_ << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[";
}

void chrome_trace_writer::begin_event() {
  out_ << (first_ ? "\n" : ",\n");
  first_ = false;
}

int chrome_trace_writer::node_process(const node_id& n) {
  auto [node, made] =
      nodes_.try_emplace(n, static_cast<int>(nodes_.size()) + 1);
  if (made) {
    begin_event();
    out_ << "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" << node->second
         << ",\"args\":{\"name\":\"node " << short_hex(n) << "\"}}";
  }
  return node->second;
}

chrome_trace_writer::row chrome_trace_writer::new_row(const node_id& n,
                                                      const char* kind,
                                                      const unique_id& id,
                                                      std::int32_t os_pid) {
  row r{node_process(n), next_tid_++};
  begin_event();
  out_ << "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" << r.pid
       << ",\"tid\":" << r.tid << ",\"args\":{\"name\":\"" << kind << ' '
       << short_hex(id);
  if (os_pid != 0)
    out_ << " (pid " << os_pid << ")";
  out_ << "\"}}";
  return r;
}

chrome_trace_writer::row chrome_trace_writer::worker_row(const node_id& n,
                                                         const worker_id& w,
                                                         std::int32_t os_pid) {
  if (auto i = workers_.find(w); i != workers_.end())
    return i->second;
  return workers_.emplace(w, new_row(n, "worker", w, os_pid)).first->second;
}

chrome_trace_writer::row chrome_trace_writer::actor_row(const node_id& n,
                                                        const actor_id& a,
                                                        std::int32_t os_pid) {
  auto key = std::make_tuple(a, n, os_pid);
  if (auto i = actors_.find(key); i != actors_.end())
    return i->second;
  return actors_.emplace(key, new_row(n, "actor", a, os_pid)).first->second;
}

chrome_trace_writer::row
chrome_trace_writer::submitter_row(const worker_id& w) {
  if (auto i = workers_.find(w); i != workers_.end())
    return i->second;
  auto [d, made] = drivers_.try_emplace(w);
  if (made) {
    d->second = row{drivers_pid, next_tid_++};
    if (drivers_.size() == 1) {
      begin_event();
      out_ << "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" << drivers_pid
           << ",\"args\":{\"name\":\"drivers\"}}";
    }
    begin_event();
    out_ << "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" << drivers_pid
         << ",\"tid\":" << d->second.tid << ",\"args\":{\"name\":\"driver "
         << short_hex(w) << "\"}}";
  }
  return d->second;
}

std::uint64_t chrome_trace_writer::submit_slice(const worker_id& w,
                                                std::int64_t submit_us) {
  auto& win = windows_[w];
  if (win.id != 0 && submit_us >= win.start_us &&
      submit_us < win.start_us + submit_window_us)
    return win.id;
  win = window{submit_us, next_flow_++};
  auto r = submitter_row(w);
  begin_event();
  out_ << "{\"ph\":\"X\",\"pid\":" << r.pid << ",\"tid\":" << r.tid
       << ",\"ts\":" << submit_us - base_us_
       << ",\"dur\":1,\"name\":\"submit\",\"bind_id\":" << win.id
       << ",\"flow_out\":true}";
  return win.id;
}

void chrome_trace_writer::add(const timeline_task& t) {
  ++tasks_;
  for (const auto& a : t.attempts) {
    if (a.start_us == 0)
      continue;
    // The arrow leaves the submission's slice, drawn before the attempt's.
    std::uint64_t arrow = 0;
    if (a.attempt == 0 && t.submit_us != 0 && t.submit_us <= a.start_us)
      arrow = submit_slice(t.id.submitter, t.submit_us);
    auto r = a.worker.nil() && !t.actor.nil()
                 ? actor_row(a.node, t.actor, a.pid)
                 : worker_row(a.node, a.worker, a.pid);
    auto end = std::max(a.end_us, a.start_us + 1);
    ++slices_;
    begin_event();
    out_ << "{\"ph\":\"X\",\"pid\":" << r.pid << ",\"tid\":" << r.tid
         << ",\"ts\":" << a.start_us - base_us_
         << ",\"dur\":" << end - a.start_us << ",\"name\":\"";
    write_escaped(out_, t.name);
    out_ << "\",\"args\":{\"attempt\":" << a.attempt << ",\"node\":\""
         << short_hex(a.node) << '"';
    if (!a.error.empty()) {
      out_ << ",\"error\":\"";
      write_escaped(out_, a.error);
      out_ << '"';
    }
    out_ << '}';
    if (arrow != 0) {
      ++arrows_;
      out_ << ",\"bind_id\":" << arrow << ",\"flow_in\":true";
    }
    out_ << '}';
  }
}

void chrome_trace_writer::add(const transfer_event& t) {
  if (t.start_us == 0)
    return;
  auto pid = node_process(t.to);
  auto end = std::max(t.end_us, t.start_us + 1);
  auto id = ++transfers_;
  // Begin and end match by category, name and id.
  auto head = [&](char phase, std::int64_t ts) {
    begin_event();
    out_ << "{\"ph\":\"" << phase
         << "\",\"cat\":\"transfer\",\"name\":\"object transfer\",\"id\":\"0x"
         << std::hex << id << std::dec << "\",\"pid\":" << pid
         << ",\"tid\":0,\"ts\":" << ts - base_us_;
  };
  head('b', t.start_us);
  char rate[32];
  std::snprintf(rate, sizeof rate, "%.1f",
                static_cast<double>(t.bytes) /
                    static_cast<double>(end - t.start_us));
  out_ << ",\"args\":{\"object\":\"" << t.object.hex() << "\",\"from\":\""
       << short_hex(t.from) << "\",\"to\":\"" << short_hex(t.to)
       << "\",\"bytes\":" << t.bytes << ",\"MB_per_s\":" << rate;
  if (!t.error.empty()) {
    out_ << ",\"error\":\"";
    write_escaped(out_, t.error);
    out_ << '"';
  }
  out_ << "}}";
  head('e', end);
  out_ << '}';
}

void chrome_trace_writer::finish() {
  out_ << "\n]}\n";
}

} // namespace prism::internal
