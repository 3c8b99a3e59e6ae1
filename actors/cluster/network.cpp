#include "cluster/network.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <caf/io/middleman.hpp>
#include <caf/scoped_actor.hpp>

#include "cluster/shared_queue_policy.hpp"
#include "prism/error.hpp"
#include "protocol/registration.hpp"

namespace prism::actors {

void configure_cluster_process(caf::actor_system_config& cfg,
                               std::size_t scheduler_threads,
                               const network_settings& net) {
  protocol::add_message_types(cfg);
  cfg.load<caf::io::middleman>();
  cfg.set("scheduler.max-threads", scheduler_threads);
  use_shared_queue_scheduler(cfg);
  cfg.set("middleman.workers", std::size_t{0});
  cfg.set("middleman.enable-automatic-connections", false);
  cfg.set("middleman.heartbeat-interval",
          caf::timespan{net.heartbeat_interval});
  cfg.set("middleman.connection-timeout",
          caf::timespan{net.connection_timeout});
  cfg.set("middleman.app-identifiers",
          std::vector<std::string>{std::string{wire_version}});
}

host_port parse_host_port(const std::string& text, const std::string& what) {
  auto bad = [&](const std::string& why) {
    return invalid_argument_error(what + " '" + text + "' " + why +
                                  "; expected HOST:PORT, e.g. 127.0.0.1:6380");
  };
  auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0)
    throw bad("has no host and port");
  host_port result;
  result.host = text.substr(0, colon);
  if (result.host.size() > 2 && result.host.front() == '[' &&
      result.host.back() == ']')
    result.host = result.host.substr(1, result.host.size() - 2);
  auto digits = std::string_view{text}.substr(colon + 1);
  unsigned value = 0;
  auto [end, ec] =
      std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || ec != std::errc{} ||
      end != digits.data() + digits.size() || value > 65535)
    throw bad("has no valid port");
  result.port = static_cast<std::uint16_t>(value);
  return result;
}

std::string address_of(const host_port& where) {
  return where.host + ":" + std::to_string(where.port);
}

bool is_loopback(const std::string& host) {
  if (host == "localhost" || host == "::1")
    return true;
  in_addr v4{};
  if (::inet_pton(AF_INET, host.c_str(), &v4) == 1)
    return (ntohl(v4.s_addr) >> 24) == 127;
  return false;
}

void require_loopback(const std::string& host) {
  if (is_loopback(host))
    return;
  throw invalid_argument_error(
      "refusing to listen on '" + host +
      "': Prism's cluster port authenticates nobody, so it listens on "
      "loopback (127.0.0.1) only until mutual TLS and a cluster token are "
      "available (the security issue); use --host 127.0.0.1");
}

namespace {

/// A socket closed on scope exit.
struct socket_guard {
  int fd = -1;
  ~socket_guard() {
    if (fd >= 0)
      ::close(fd);
  }
};

/// Waits for `events` on `fd` until `deadline`; false on timeout or error.
bool wait_for(int fd, short events,
              std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      return false;
    pollfd p{fd, events, 0};
    int n = ::poll(&p, 1, static_cast<int>(left.count()));
    if (n > 0)
      return true;
    if (n < 0 && errno != EINTR)
      return false;
  }
}

} // namespace

std::string probe_peer(const host_port& where,
                       std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  auto port = std::to_string(where.port);
  if (int rc = ::getaddrinfo(where.host.c_str(), port.c_str(), &hints, &found);
      rc != 0)
    return "cannot resolve '" + where.host + "': " + ::gai_strerror(rc);
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> addrs{found,
                                                             &::freeaddrinfo};
  std::string why = "no address";
  for (auto* a = found; a != nullptr; a = a->ai_next) {
    socket_guard s{::socket(a->ai_family,
                            a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                            a->ai_protocol)};
    if (s.fd < 0) {
      why = std::strerror(errno);
      continue;
    }
    if (::connect(s.fd, a->ai_addr, a->ai_addrlen) != 0 &&
        errno != EINPROGRESS) {
      why = std::strerror(errno);
      continue;
    }
    if (!wait_for(s.fd, POLLOUT, deadline)) {
      why = "no connection within " + std::to_string(timeout.count()) + " ms";
      continue;
    }
    int err = 0;
    socklen_t len = sizeof(err);
    ::getsockopt(s.fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) {
      why = std::strerror(err);
      continue;
    }
    if (!wait_for(s.fd, POLLIN, deadline))
      return "it accepts connections but did not speak within " +
             std::to_string(timeout.count()) + " ms: not a Prism head?";
    char byte = 0;
    auto n = ::recv(s.fd, &byte, 1, MSG_PEEK);
    if (n == 1)
      return "";
    why = n == 0 ? "it closed the connection at once" : std::strerror(errno);
  }
  return why;
}

bool closed_before_handshake(const caf::error& err) {
  return err == caf::sec::connection_timeout;
}

caf::actor dial_published(caf::actor_system& sys, const host_port& where,
                          std::chrono::milliseconds timeout, std::string& why) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  why = probe_peer(where, timeout);
  if (!why.empty())
    return {};
  caf::scoped_actor self{sys};
  for (;;) {
    caf::actor result;
    caf::error failed;
    self->request(sys.middleman().actor_handle(), timeout,
                  caf::connect_atom::value, where.host, where.port)
        .receive(
            [&](const caf::node_id&, caf::strong_actor_ptr& ptr,
                const std::set<std::string>&) {
              result = caf::actor_cast<caf::actor>(std::move(ptr));
            },
            [&](caf::error& err) { failed = std::move(err); });
    if (!failed) {
      why.clear();
      return result;
    }
    why = sys.render(failed);
    if (!closed_before_handshake(failed) ||
        std::chrono::steady_clock::now() >= deadline)
      return {};
  }
}

} // namespace prism::actors
