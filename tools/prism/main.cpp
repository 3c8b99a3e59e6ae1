// The `prism` command line.
//
//   prism start --head [--port N] [--storage DIR] [--num-cpus N]
//               [--resources JSON] [--block]   the head of a cluster
//   prism start --address HOST:PORT [...]      a node that joins it
//   prism stop                                 stop what `start` started here
//   prism status [--address HOST:PORT]         nodes, jobs, actors, demands
//   prism list nodes|jobs|actors [--filter K=V] [--limit N] [--cursor C]
//              [--format table|json]           the cluster's state, exact
//   prism get node|job|actor ID                one in full, with its history
//   prism summary actors [--by KEY]            counts by class and state
//   prism cert init DIR                        a cluster CA for mutual TLS
//   prism cert issue DIR NAME [--days N]       a certificate it signs
//   prism store check DIR                      is the control store sound?
//   prism store repair DIR [--apply] [--backup B]
//                                              drop log damage and the writes
//                                              after it, after a backup
//
// Each subcommand's options and what it runs are in its own file
// (commands.hpp); this one only puts them together.

#include <CLI/CLI.hpp>

#include "commands.hpp"

namespace {

/// Runs the subcommand the command line chose.
int run_chosen(const prism::tools::command_list& commands) {
  for (const auto& c : commands)
    if (c.app->parsed())
      return c.run();
  // Never: `prism`, `store` and `cert` each require exactly one subcommand.
  return 1;
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"prism: the Prism runtime's command line"};
  app.require_subcommand(1);
  prism::tools::command_list commands;
  prism::tools::add_store_command(app, commands);
  prism::tools::add_start_command(app, commands);
  prism::tools::add_stop_command(app, commands);
  prism::tools::add_status_command(app, commands);
  prism::tools::add_logs_command(app, commands);
  prism::tools::add_state_commands(app, commands);
  prism::tools::add_job_command(app, commands);
  prism::tools::add_timeline_command(app, commands);
  prism::tools::add_cert_command(app, commands);
  CLI11_PARSE(app, argc, argv);
  return run_chosen(commands);
}
