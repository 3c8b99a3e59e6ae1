// `prism store check DIR` and `prism store repair DIR`: for an operator whose
// control store `init` refused as damaged.

#include <chrono>
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "store_check.hpp"

namespace prism::tools {

namespace {

using namespace prism::persistence;

/// Lists the writes a repair drops, at most `limit` of them.
void print_dropped(const std::vector<logged_batch>& batches, std::ostream& out,
                   std::size_t limit = 200) {
  std::size_t shown = 0;
  std::size_t total = 0;
  for (const auto& b : batches) {
    total += b.count;
    if (b.writes.empty() && shown < limit) {
      out << "  sequence " << b.sequence << " (" << b.file << " at offset "
          << b.offset << "): " << b.count << " writes that do not decode\n";
      ++shown;
    }
    for (std::size_t i = 0; i < b.writes.size() && shown < limit; ++i) {
      const auto& w = b.writes[i];
      out << "  sequence " << b.sequence + i << " (" << b.file << " at offset "
          << b.offset << "): " << w.op << " " << w.table << " "
          << show_key(w.table, w.key) << "\n";
      ++shown;
    }
  }
  if (total > shown)
    out << "  ... and " << total - shown << " more\n";
}

void print_logs(const log_report& logs, std::ostream& out) {
  out << "write-ahead logs:";
  for (const auto& f : logs.files)
    out << " " << f;
  if (logs.files.empty())
    out << " none";
  out << " (" << logs.batches << " records read before any damage)\n";
  if (logs.torn_tail())
    out << "note: " << describe(logs) << "\n";
  for (const auto& d : logs.harmless)
    out << "note: " << d.file << " at offset " << d.offset << " (" << d.what
        << "): unreadable, but the writes after it go on with the next "
           "sequence number, so it held nothing that was applied\n";
}

/// Prints what is wrong with the store at `dir`, and what a repair would
/// drop. Returns the exit status: 0 if the store opens as it is, 1 if it is
/// refused, 2 if there is no store or it cannot be read.
int store_check_command(const std::string& dir, std::ostream& out) {
  try {
    auto found = check_store(dir);
    out << "control store at " << dir << "\n";
    print_logs(found.logs, out);
    if (found.sound()) {
      out << "verdict: sound; it opens as it is\n";
      return 0;
    }
    out << "refused: " << found.refusal->what() << "\n";
    if (found.repairable()) {
      out << "`prism store repair` would drop these acknowledged writes, "
             "and keep every write before the damage:\n";
      print_dropped(found.logs.after_damage, out);
      out << "verdict: damaged; `prism store repair --apply " << dir
          << "` repairs it\n";
    } else {
      out << "verdict: damaged outside the write-ahead logs; no repair drops "
             "it: restore the store from a backup\n";
    }
    return 1;
  } catch (const store_error& e) {
    out << "prism store check: " << e.what() << "\n";
    return 2;
  }
}

/// Prints what a repair of the store at `dir` drops; with `apply`, backs
/// the store up to `backup` (default: "<dir>.before-repair-<seconds since
/// 1970>") and repairs it. Returns 0 if the store opens now (or already
/// did), 1 if it still does not (a dry run, or damage no repair drops), 2 on
/// an error.
int store_repair_command(const std::string& dir, bool apply, std::string backup,
                         std::ostream& out) {
  try {
    if (!apply) {
      auto status = store_check_command(dir, out);
      if (status == 1)
        out << "nothing was changed: run again with --apply to repair\n";
      return status;
    }
    if (backup.empty()) {
      auto now = std::chrono::system_clock::now().time_since_epoch();
      backup =
          dir + ".before-repair-" +
          std::to_string(
              std::chrono::duration_cast<std::chrono::seconds>(now).count());
    }
    auto done = repair_store(dir, backup);
    if (done.backup.empty()) {
      out << "control store at " << dir
          << " opens as it is; nothing was changed\n";
      return 0;
    }
    out << "backed up the store's files to " << done.backup << "\n"
        << "dropped the damage and these writes after it:\n";
    print_dropped(done.dropped, out);
    for (const auto& r : done.tables.repairs)
      out << "  then " << to_string(r.what) << " " << r.table << " " << r.key
          << ": " << r.reason << "\n";
    out << "repaired: control store at " << dir << " opens now\n";
    return 0;
  } catch (const store_error& e) {
    out << "prism store repair: " << e.what() << "\n";
    return e.kind() == store_error::kind_t::corrupt ? 1 : 2;
  }
}

/// What `prism store repair` was given.
struct repair_options {
  std::string dir;
  bool apply = false;
  std::string backup;
};

void add_check_command(CLI::App& store, command_list& commands) {
  auto dir = std::make_shared<std::string>();
  auto* check = store.add_subcommand(
      "check", "Tell whether the store opens as it is, and what a repair "
               "would drop; changes nothing. Exit 0: sound, 1: damaged, "
               "2: no store or unreadable");
  check->add_option("DIR", *dir, "The store's directory (config.storage_path)")
      ->required();
  commands.push_back(
      {check, [dir] { return store_check_command(*dir, std::cout); }});
}

void add_repair_command(CLI::App& store, command_list& commands) {
  auto opts = std::make_shared<repair_options>();
  auto* repair = store.add_subcommand(
      "repair", "Drop damage in a write-ahead log and every write after it. "
                "Without --apply, only prints what it would drop");
  repair
      ->add_option("DIR", opts->dir,
                   "The store's directory (config.storage_path)")
      ->required();
  repair->add_flag("--apply", opts->apply,
                   "Repair: back the store up, then drop what was printed");
  repair->add_option("--backup", opts->backup,
                     "Where the store's files are copied first (a new "
                     "directory; default DIR.before-repair-<time>)");
  commands.push_back({repair, [opts] {
                        return store_repair_command(opts->dir, opts->apply,
                                                    opts->backup, std::cout);
                      }});
}

} // namespace

void add_store_command(CLI::App& app, command_list& commands) {
  auto* store = app.add_subcommand(
      "store", "Check or repair a control store's tables on disk");
  store->require_subcommand(1);
  add_check_command(*store, commands);
  add_repair_command(*store, commands);
}

} // namespace prism::tools
