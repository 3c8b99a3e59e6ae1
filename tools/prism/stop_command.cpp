// `prism stop`: every process `prism start` started on this host.

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <iostream>
#include <memory>
#include <thread>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "session.hpp"

namespace prism::tools {

namespace {

/// Waits until `pid` is gone, for at most `grace`.
bool await_exit(pid_t pid, std::chrono::milliseconds grace) {
  auto deadline = std::chrono::steady_clock::now() + grace;
  while (is_prism_start(pid)) {
    if (std::chrono::steady_clock::now() >= deadline)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds{20});
  }
  return true;
}

/// Stops every process `prism start` started on this host: SIGTERM, then
/// SIGKILL after `grace_ms`. Returns the exit status.
int stop_command(std::uint32_t grace_ms, std::ostream& out) {
  auto s = session::open();
  auto procs = s.running();
  // Nodes first: a node whose head stops first only dials it again.
  std::stable_partition(procs.begin(), procs.end(),
                        [](const auto& p) { return p.name != "head"; });
  int killed = 0;
  for (const auto& p : procs)
    ::kill(p.pid, SIGTERM);
  for (const auto& p : procs) {
    if (!await_exit(p.pid, std::chrono::milliseconds{grace_ms})) {
      ::kill(p.pid, SIGKILL);
      ++killed;
      await_exit(p.pid, std::chrono::milliseconds{2000});
    }
    s.remove(p.name);
    out << "stopped " << p.name << " (pid " << p.pid << ")\n";
  }
  if (procs.empty())
    out << "nothing to stop in " << s.dir() << "\n";
  else if (killed > 0)
    out << killed << " did not stop within " << grace_ms
        << " ms and were killed\n";
  return 0;
}

} // namespace

void add_stop_command(CLI::App& app, command_list& commands) {
  auto grace_ms = std::make_shared<std::uint32_t>(10000);
  auto* stop = app.add_subcommand(
      "stop", "Stop every process `prism start` started on this host");
  stop->add_option("--grace-ms", *grace_ms,
                   "How long each may take to stop before it is killed")
      ->capture_default_str();
  commands.push_back(
      {stop, [grace_ms] { return stop_command(*grace_ms, std::cout); }});
}

} // namespace prism::tools
