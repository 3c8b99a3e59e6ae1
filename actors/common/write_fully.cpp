#include "common/write_fully.hpp"

#include <cerrno>

#include <unistd.h>

namespace prism::actors {

bool write_fully(int fd, const char* p, std::size_t n) {
  while (n > 0) {
    auto written = ::write(fd, p, n);
    if (written < 0 && errno == EINTR)
      continue;
    if (written <= 0)
      return false;
    p += written;
    n -= static_cast<std::size_t>(written);
  }
  return true;
}

} // namespace prism::actors
