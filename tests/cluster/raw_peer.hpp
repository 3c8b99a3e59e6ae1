#pragma once

// A peer of a cluster's port that speaks raw TCP, for the tests of what a
// process does with whatever arrives there.

#include <arpa/inet.h>
#include <chrono>
#include <netinet/in.h>
#include <poll.h>
#include <string>
#include <sys/socket.h>
#include <unistd.h>

#include "net/network.hpp"

namespace prism::cluster_test {

/// A TCP connection to `address` ("127.0.0.1:port"), or -1. With
/// `reset_on_close`, closing it sends a reset and leaves no TIME_WAIT, for
/// tests that open connections by the thousand. From `source` (a loopback
/// address such as "127.0.0.7") if given: spreading connections over
/// sources keeps them from running out of ports.
inline int connect_to(const std::string& address, bool reset_on_close = false,
                      const std::string& source = "") {
  auto where = prism::actors::parse_host_port(address, "address");
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return -1;
  if (reset_on_close) {
    linger l{1, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
  }
  if (!source.empty()) {
    sockaddr_in from{};
    from.sin_family = AF_INET;
    ::inet_pton(AF_INET, source.c_str(), &from.sin_addr);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof(from)) != 0) {
      ::close(fd);
      return -1;
    }
  }
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(where.port);
  ::inet_pton(AF_INET, where.host.c_str(), &sa.sin_addr);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

/// What the peer of `fd` sends within `timeout`, until it closes (then
/// `closed` is set) or the time is up.
inline std::string heard_from(int fd, std::chrono::milliseconds timeout,
                              bool* closed = nullptr) {
  std::string heard;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{fd, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0)
      return heard;
    char buf[4096];
    auto n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) {
      if (closed != nullptr)
        *closed = true;
      return heard;
    }
    heard.append(buf, static_cast<std::size_t>(n));
  }
}

} // namespace prism::cluster_test
