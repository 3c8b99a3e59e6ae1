// The `prism` command line.
//
//   prism store check DIR                      is the control store sound?
//   prism store repair DIR [--apply] [--backup B]
//                                              drop log damage and the writes
//                                              after it, after a backup

#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "store_command.hpp"

int main(int argc, char** argv) {
  CLI::App app{"prism: the Prism runtime's command line"};
  app.require_subcommand(1);
  auto* store = app.add_subcommand(
      "store", "Check or repair a control store's tables on disk");
  store->require_subcommand(1);

  std::string dir;
  auto* check = store->add_subcommand(
      "check", "Tell whether the store opens as it is, and what a repair "
               "would drop; changes nothing. Exit 0: sound, 1: damaged, "
               "2: no store or unreadable");
  check->add_option("DIR", dir, "The store's directory (config.storage_path)")
      ->required();

  bool apply = false;
  std::string backup;
  auto* repair = store->add_subcommand(
      "repair", "Drop damage in a write-ahead log and every write after it. "
                "Without --apply, only prints what it would drop");
  repair->add_option("DIR", dir, "The store's directory (config.storage_path)")
      ->required();
  repair->add_flag("--apply", apply,
                   "Repair: back the store up, then drop what was printed");
  repair->add_option("--backup", backup,
                     "Where the store's files are copied first (a new "
                     "directory; default DIR.before-repair-<time>)");

  CLI11_PARSE(app, argc, argv);
  if (check->parsed())
    return prism::tools::store_check_command(dir, std::cout);
  return prism::tools::store_repair_command(dir, apply, backup, std::cout);
}
