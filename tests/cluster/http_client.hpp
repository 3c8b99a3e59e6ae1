#pragma once

// A plain HTTP client for the tests of a process's HTTP ports: one request
// per connection, raw bytes on a socket, so that a test may also send what
// no real client would.

#include <chrono>
#include <cstdlib>
#include <string>
#include <sys/socket.h>
#include <unistd.h>

#include "raw_peer.hpp"

namespace prism::cluster_test {

/// "127.0.0.1:PORT" of "http://127.0.0.1:PORT/metrics".
inline std::string address_of_url(const std::string& url) {
  auto start = url.find("://") + 3;
  return url.substr(start, url.find('/', start) - start);
}

/// Sends `request` on a new connection to `address`, ends its sending side,
/// and returns what came back before the server closed (or 5 s passed).
inline std::string http_exchange(const std::string& address,
                                 const std::string& request) {
  int fd = connect_to(address);
  if (fd < 0)
    return {};
  ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  ::shutdown(fd, SHUT_WR);
  auto heard = heard_from(fd, std::chrono::seconds{5});
  ::close(fd);
  return heard;
}

inline std::string get_request(const std::string& path,
                               const std::string& headers = "") {
  return "GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" +
         headers + "\r\n";
}

struct http_answer {
  /// 0 if nothing came back.
  int status = 0;
  std::string body;
};

/// A GET of `url` ("http://HOST:PORT/path?query") over plain HTTP.
inline http_answer get_answer(const std::string& url,
                              const std::string& headers = "") {
  auto start = url.find('/', url.find("://") + 3);
  auto path = start == std::string::npos ? "/" : url.substr(start);
  auto reply = http_exchange(address_of_url(url), get_request(path, headers));
  http_answer a;
  if (reply.rfind("HTTP/1.1 ", 0) == 0)
    a.status = std::atoi(reply.c_str() + 9);
  auto body = reply.find("\r\n\r\n");
  a.body = body == std::string::npos ? reply : reply.substr(body + 4);
  return a;
}

/// The body of a GET of `url` over plain HTTP.
inline std::string get(const std::string& url,
                       const std::string& headers = "") {
  return get_answer(url, headers).body;
}

} // namespace prism::cluster_test
