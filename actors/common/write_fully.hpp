#pragma once

#include <cstddef>

namespace prism::actors {

/// Writes `n` bytes from `p` to descriptor `fd`, again after a partial
/// write or a signal. Returns false if the descriptor fails first (a full
/// disk, a closed pipe); what it took is written.
bool write_fully(int fd, const char* p, std::size_t n);

} // namespace prism::actors
