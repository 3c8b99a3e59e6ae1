// `prism timeline`: the tasks the control store's task event store keeps,
// as Chrome trace-event JSON for Perfetto (ui.perfetto.dev) or
// chrome://tracing (internal/chrome_trace.hpp draws them).

#include <chrono>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>

#include <CLI/CLI.hpp>
#include <caf/all.hpp>

#include "commands.hpp"
#include "head_connection.hpp"
#include "prism/error.hpp"
#include "prism/internal/chrome_trace.hpp"
#include "protocol/timeline.hpp"

namespace prism::tools {

namespace {

struct timeline_options {
  std::string address;
  std::uint32_t job = 0;
  std::string since;
  std::string output = "timeline.json";
};

/// "90s", "10m", "2h", "1d" as microseconds.
std::int64_t parse_span(const std::string& text) {
  auto bad = [&] {
    return invalid_argument_error("--since takes a span such as 90s, 10m, "
                                  "2h or 1d, not '" +
                                  text + "'");
  };
  if (text.size() < 2)
    throw bad();
  std::size_t used = 0;
  double n = 0;
  try {
    n = std::stod(text.substr(0, text.size() - 1), &used);
  } catch (const std::exception&) {
    throw bad();
  }
  if (used != text.size() - 1 || n < 0)
    throw bad();
  double unit = 0;
  switch (text.back()) {
  case 's':
    unit = 1;
    break;
  case 'm':
    unit = 60;
    break;
  case 'h':
    unit = 3600;
    break;
  case 'd':
    unit = 86400;
    break;
  default:
    throw bad();
  }
  return static_cast<std::int64_t>(n * unit * 1e6);
}

int timeline_command(const timeline_options& o) {
  head_connection head{o.address, "timeline"};
  protocol::timeline_query q;
  q.job = o.job;
  if (!o.since.empty())
    q.since_us = internal::unix_us_now() - parse_span(o.since);
  std::ofstream out{o.output, std::ios::binary | std::ios::trunc};
  if (!out)
    throw invalid_argument_error("cannot write " + o.output);
  std::unique_ptr<internal::chrome_trace_writer> writer;
  protocol::timeline_page last;
  for (;;) {
    auto page = head.ask<protocol::timeline_page>(q, "reading the timeline");
    if (!writer && (!page.tasks.empty() || !page.transfers.empty())) {
      // Times count from the first task's submission or the first
      // transfer's start, whichever came first.
      auto base = std::numeric_limits<std::int64_t>::max();
      if (!page.tasks.empty() && page.tasks.front().submit_us != 0)
        base = page.tasks.front().submit_us;
      for (const auto& t : page.transfers)
        base = std::min(base, t.start_us);
      if (base == std::numeric_limits<std::int64_t>::max())
        base = q.since_us;
      writer = std::make_unique<internal::chrome_trace_writer>(out, base);
    }
    for (auto& t : page.tasks)
      writer->add(internal::timeline_task{t.id, std::move(t.name), t.submit_us,
                                          std::move(t.attempts), t.actor});
    for (const auto& t : page.transfers)
      writer->add(t);
    last = std::move(page);
    if (last.next == 0)
      break;
    q.cursor = last.next;
  }
  if (!writer)
    writer = std::make_unique<internal::chrome_trace_writer>(out, 0);
  writer->finish();
  out.close();
  if (!out)
    throw error(errc::internal, "writing " + o.output + " failed");
  std::cout << "Wrote " << o.output << ": " << writer->tasks() << " tasks, "
            << writer->slices() << " attempts, " << writer->transfers()
            << " object transfers"
            << " (open it in https://ui.perfetto.dev or chrome://tracing)\n";
  if (last.dropped_events > 0 || last.forgotten_tasks > 0)
    std::cout << "Not every task is in it: " << last.dropped_events
              << " events were dropped before the control store got them, "
                 "and it forgot "
              << last.forgotten_tasks
              << " tasks to stay within its bound (--max-tasks)\n";
  if (last.forgotten_transfers > 0)
    std::cout << "The control store forgot its " << last.forgotten_transfers
              << " oldest object transfers to stay within its bound\n";
  if (writer->tasks() == 0)
    std::cout << "No tasks: drivers record task events with "
                 "config::task_events (or PRISM_TASK_EVENTS=1)\n";
  return 0;
}

} // namespace

void add_timeline_command(CLI::App& app, command_list& commands) {
  auto o = std::make_shared<timeline_options>();
  auto* t = app.add_subcommand(
      "timeline", "Write the tasks the cluster recorded as a Chrome trace "
                  "(Perfetto, chrome://tracing): a row per worker, a slice "
                  "per attempt, an arrow from each submission to its start, "
                  "and the objects each node read from others");
  t->add_option("--address", o->address,
                "The head, HOST:PORT (default: PRISM_ADDRESS, then the head "
                "started on this host)");
  t->add_option("--job", o->job, "Only this job's tasks");
  t->add_option("--since", o->since,
                "Only the tasks of this last span (submitted, started or "
                "ended in it, or running still): "
                "90s, 10m, 2h, 1d");
  t->add_option("-o,--output", o->output, "The file to write")
      ->capture_default_str();
  commands.push_back({t, [o] { return timeline_command(*o); }});
}

} // namespace prism::tools
