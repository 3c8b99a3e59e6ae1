#pragma once

// `prism store check DIR` and `prism store repair DIR`: for an operator whose
// control store `init` refused as damaged.

#include <iosfwd>
#include <string>

namespace prism::tools {

/// Prints what is wrong with the store at `dir`, and what a repair would
/// drop. Returns the exit status: 0 if the store opens as it is, 1 if it is
/// refused, 2 if there is no store or it cannot be read.
int store_check_command(const std::string& dir, std::ostream& out);

/// Prints what a repair of the store at `dir` drops; with `apply`, backs
/// the store up to `backup` (default: "<dir>.before-repair-<seconds since
/// 1970>") and repairs it. Returns 0 if the store opens now (or already
/// did), 1 if it still does not (a dry run, or damage no repair drops), 2 on
/// an error.
int store_repair_command(const std::string& dir, bool apply, std::string backup,
                         std::ostream& out);

} // namespace prism::tools
