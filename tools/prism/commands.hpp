#pragma once

// The subcommands of `prism`. Each file that runs one also adds it to the
// command line, with its options, so that a subcommand reads in one place;
// main() only adds them all and runs the one given.

#include <functional>
#include <vector>

namespace CLI {
class App;
} // namespace CLI

namespace prism::tools {

/// A subcommand that does something (not a group such as `store`), and what
/// it does once the command line chose it.
struct command {
  CLI::App* app = nullptr;
  /// Runs it with the options parsed; returns the exit status.
  std::function<int()> run;
};

using command_list = std::vector<command>;

/// Each adds its subcommand of `prism` and appends to `commands` what runs
/// it. `prism --help` lists them in the order they are added.

/// `prism store check|repair` (store_command.cpp).
void add_store_command(CLI::App& app, command_list& commands);

/// `prism start` (start_command.cpp).
void add_start_command(CLI::App& app, command_list& commands);

/// `prism stop` (stop_command.cpp).
void add_stop_command(CLI::App& app, command_list& commands);

/// `prism status` (status_command.cpp).
void add_status_command(CLI::App& app, command_list& commands);

/// `prism logs` (logs_command.cpp).
void add_logs_command(CLI::App& app, command_list& commands);

/// `prism list`, `prism get` and `prism summary` (state_commands.cpp).
void add_state_commands(CLI::App& app, command_list& commands);

/// `prism job submit|status|logs|stop|list` (job_command.cpp).
void add_job_command(CLI::App& app, command_list& commands);

/// `prism timeline` (timeline_command.cpp).
void add_timeline_command(CLI::App& app, command_list& commands);
/// `prism cert init|issue` (cert_command.cpp).
void add_cert_command(CLI::App& app, command_list& commands);

} // namespace prism::tools
