#pragma once

// The HTTP port of a Prism process: its metrics (`/metrics`) and, on the
// head, its status page. Read-only by design: no route may change the
// cluster. It runs on threads of its own, never on CAF's scheduler:
//
// - one I/O thread reads and writes every connection, asynchronously, so a
//   slow or stalled client holds no thread that serves others;
// - a few route threads build the answers (they may ask the control store
//   and wait), so a slow answer holds no connection's reading either.
//
// Every request is bounded in size and time (`http_limits`); a connection
// past either is closed. Beyond loopback it speaks TLS (the process's
// certificate and key) and wants the cluster token, unless it was opened
// `insecure`.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "net/network.hpp"

namespace prism::actors {

/// What an HTTP port counted since it opened.
struct http_counters {
  std::uint64_t accepted = 0;
  /// Closed at once: `max_connections` were open.
  std::uint64_t refused = 0;
  std::uint64_t requests = 0;
  /// Requests without the token, or with a wrong one.
  std::uint64_t unauthorized = 0;
  /// Malformed or oversized requests, failed TLS handshakes.
  std::uint64_t malformed = 0;
  /// Connections closed because a request or handshake took too long.
  std::uint64_t timed_out = 0;
  /// Requests answered 503 because `max_waiting` were waiting.
  std::uint64_t overloaded = 0;
  std::uint64_t open_connections = 0;
};

/// One request, as a route sees it.
struct http_request {
  std::string method;
  /// The path, without the query ("/api/actors").
  std::string path;
  /// The query's parameters, decoded ("?q=a%20b" -> {"q", "a b"}); a name
  /// given twice keeps its last value.
  std::map<std::string, std::string> query;
  std::string body;
  /// "HOST:PORT" of the client.
  std::string peer;
  /// What the port serves (`http_settings::what`), and what it counted
  /// until this request.
  std::string port;
  http_counters counters;

  /// The value of parameter `name`, or `fallback`: a copy, so that a
  /// reference to it never outlives a defaulted `fallback`.
  std::string param(const std::string& name, std::string fallback = {}) const;
};

/// A route's answer.
struct http_reply {
  unsigned status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  /// Further headers, e.g. {"Cache-Control", "no-store"}.
  std::vector<std::pair<std::string, std::string>> headers;
};

/// Builds the answer to a request. Runs on a route thread; may block for a
/// bounded time (every request to another actor carries a timeout). A
/// route that throws answers 500 with the exception's message.
using http_route = std::function<http_reply(const http_request&)>;

/// What one connection and the server may take.
struct http_limits {
  /// The request line and headers together.
  std::size_t max_header_bytes = 8 * 1024;
  /// A request's body (only `POST /login` has one).
  std::size_t max_body_bytes = 4 * 1024;
  /// From a request's first byte (or the connection's, for its first) to
  /// its last, TLS handshake included: a client that sends a byte a second
  /// is closed when this passes.
  std::chrono::milliseconds request_timeout{10000};
  /// How long a kept-alive connection may wait for its next request.
  std::chrono::milliseconds idle_timeout{30000};
  /// How long writing an answer may take.
  std::chrono::milliseconds write_timeout{10000};
  /// Connections open at once; past it, new ones are closed at once.
  std::size_t max_connections = 16384;
  /// Requests waiting for a route thread; past it, new ones are answered
  /// 503 at once, so a flood never queues without bound.
  std::size_t max_waiting = 256;
  /// Threads that run routes.
  std::size_t route_threads = 2;
};

struct http_settings {
  /// What the port serves, for logs and errors ("metrics", "status page").
  std::string what = "HTTP";
  /// Where it listens; port 0 picks a free one.
  host_port listen{"127.0.0.1", 0};
  /// Certificate and key: it speaks TLS (HTTPS) with them. The CA is not
  /// used: a browser or Prometheus presents no client certificate.
  tls_files tls;
  /// The cluster token each request must present (`Authorization: Bearer
  /// TOKEN`, or the cookie `POST /login` sets); empty: none is wanted.
  std::string token;
  /// Whether it may listen beyond loopback without TLS or without a token.
  bool insecure = false;
  /// Routes by exact path ("/metrics"). An unknown path answers 404.
  std::map<std::string, http_route> routes;
  http_limits limits;
};

/// An open HTTP port.
class http_server {
public:
  /// Opens the port and starts serving. Throws `invalid_argument_error`,
  /// in one line naming `what` and the address, for a port that is taken,
  /// TLS files that cannot be used, or a port beyond loopback without TLS
  /// and a token (unless `insecure`).
  explicit http_server(http_settings settings);

  /// Closes the port and every connection, and waits for its threads.
  ~http_server();

  http_server(const http_server&) = delete;
  http_server& operator=(const http_server&) = delete;

  /// The port it listens on.
  std::uint16_t port() const;

  /// "http://HOST:PORT" or "https://HOST:PORT", with the host others reach
  /// it at (`reached_host` for a wildcard listen address).
  std::string url(const std::string& reached_host = {}) const;

  http_counters counters() const;

  /// Its state and threads (http_server.cpp).
  struct impl;

private:
  std::unique_ptr<impl> impl_;
};

/// Whether `given` presents `token`: a request with `Authorization: Bearer
/// T` or the cookie `prism_token=T`, compared in constant time.
bool presents_token(const std::string& authorization, const std::string& cookie,
                    const std::string& token);

/// Decodes a query string or form body ("a=1&b=x%20y").
std::map<std::string, std::string> decode_form(const std::string& text);

} // namespace prism::actors
