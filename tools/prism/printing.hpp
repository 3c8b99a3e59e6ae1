#pragma once

// What the commands that ask the cluster share in printing: tables, and
// failures as one line.

#include <iostream>
#include <ostream>
#include <string>
#include <vector>

#include "prism/detail/runtime.hpp"
#include "prism/error.hpp"

namespace prism::tools {

/// Prints `rows` under `keys` (upper-cased) in columns as wide as their
/// widest cell.
void print_table(std::ostream& out, const std::vector<std::string>& keys,
                 const std::vector<std::vector<std::string>>& rows,
                 const std::string& indent = "");

/// Sends `reply`'s error on as the exception it names.
template <class Reply>
void check(const Reply& reply) {
  if (reply.error.code != errc::ok)
    detail::throw_error(reply.error);
}

/// Runs `body`, printing what it throws as one line ("prism COMMAND:
/// why"); returns the exit status.
template <class Body>
int guarded(const char* command, Body&& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    std::cerr << "prism " << command << ": " << e.what() << std::endl;
    return 1;
  }
}

} // namespace prism::tools
