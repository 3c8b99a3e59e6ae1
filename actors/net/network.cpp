#include "net/network.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <caf/binary_deserializer.hpp>
#include <caf/io/basp/header.hpp>
#include <caf/io/middleman.hpp>
#include <caf/scoped_actor.hpp>

#include "common/shared_queue_policy.hpp"
#include "net/transport.hpp"
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
  auto tls = resolve_tls(net.tls);
  if (tls.enabled()) {
    check_tls_files(tls);
    cfg.openssl_certificate = tls.cert;
    cfg.openssl_key = tls.key;
    cfg.openssl_cafile = tls.ca;
  }
  cfg.load<transport>();
  set_transport_settings(cfg, {tls.enabled(), net.max_message_bytes});
  raise_open_file_limit();
}

void raise_open_file_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 &&
      limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &limit);
  }
}

bool uses_tls(caf::actor_system& sys) {
  return transport::uses_tls(sys);
}

caf::io::middleman_actor connection_manager(caf::actor_system& sys) {
  auto own = transport::actor_of(sys);
  return own ? own : sys.middleman().actor_handle();
}

caf::expected<std::uint16_t>
publish_actor(caf::actor_system& sys, const caf::actor& whom,
              std::uint16_t port, const std::string& host, bool reuse) {
  if (!transport::actor_of(sys))
    return sys.middleman().publish(whom, port, host.c_str(), reuse);
  caf::scoped_actor self{sys};
  caf::expected<std::uint16_t> result{caf::sec::request_timeout};
  self->request(connection_manager(sys), std::chrono::seconds{10},
                caf::publish_atom::value, port,
                caf::actor_cast<caf::strong_actor_ptr>(whom),
                sys.message_types(whom), host, reuse)
      .receive([&](std::uint16_t actual) { result = actual; },
               [&](caf::error& err) { result = std::move(err); });
  return result;
}

caf::expected<std::uint16_t> open_port(caf::actor_system& sys,
                                       std::uint16_t port,
                                       const std::string& host, bool reuse) {
  if (!transport::actor_of(sys))
    return sys.middleman().open(port, host.c_str(), reuse);
  caf::scoped_actor self{sys};
  caf::expected<std::uint16_t> result{caf::sec::request_timeout};
  self->request(connection_manager(sys), std::chrono::seconds{10},
                caf::open_atom::value, port, host, reuse)
      .receive([&](std::uint16_t actual) { result = actual; },
               [&](caf::error& err) { result = std::move(err); });
  return result;
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

bool is_wildcard(const std::string& host) {
  return host.empty() || host == "0.0.0.0" || host == "::";
}

bool check_exposure(const std::string& host, bool tls, bool insecure) {
  if (is_loopback(host) || tls)
    return false;
  if (insecure)
    return true;
  throw invalid_argument_error(
      "refusing to listen on '" + (host.empty() ? "0.0.0.0" : host) +
      "' without TLS: anyone who reaches the port could run code on every "
      "node; give --tls-cert, --tls-key and --tls-ca (see `prism cert`), or "
      "--insecure to listen anyway");
}

bool insecure_from_environment() {
  const char* value = std::getenv("PRISM_INSECURE");
  return value != nullptr && std::string{value} == "1";
}

std::string insecure_warning(const std::string& host) {
  return "INSECURE: listening on '" + (host.empty() ? "0.0.0.0" : host) +
         "' without TLS (--insecure): anyone who reaches this port can run "
         "code on every node of the cluster";
}

std::string local_address_toward(const std::string& peer) {
  if (is_loopback(peer))
    return "127.0.0.1";
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  // A UDP socket "connected" to the peer sends nothing, but the kernel
  // picks the interface a packet to it would leave from.
  auto target = is_wildcard(peer) ? std::string{"192.0.2.1"} : peer;
  if (::getaddrinfo(target.c_str(), "9", &hints, &found) != 0)
    return "127.0.0.1";
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> addrs{found,
                                                             &::freeaddrinfo};
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return "127.0.0.1";
  std::string result = "127.0.0.1";
  sockaddr_in local{};
  socklen_t len = sizeof(local);
  char text[INET_ADDRSTRLEN] = {};
  if (::connect(fd, found->ai_addr, found->ai_addrlen) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0 &&
      ::inet_ntop(AF_INET, &local.sin_addr, text, sizeof(text)) != nullptr)
    result = text;
  ::close(fd);
  return result;
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

} // namespace

namespace {

/// Reads exactly `n` bytes of the plain connection `fd` into `buf`.
std::string read_plain(int fd, char* buf, std::size_t n,
                       std::chrono::steady_clock::time_point deadline) {
  std::size_t done = 0;
  while (done < n) {
    if (!wait_for_socket(fd, POLLIN, deadline))
      return "it did not speak by the deadline";
    auto got = ::recv(fd, buf + done, n - done, 0);
    if (got > 0)
      done += static_cast<std::size_t>(got);
    else if (got == 0)
      return "it closed the connection at once";
    else if (errno != EINTR && errno != EAGAIN)
      return std::strerror(errno);
  }
  return "";
}

/// The most a server's BASP handshake may hold: its node, application
/// identifiers, and the published actor's id and interface.
constexpr std::uint32_t max_handshake_bytes = 64 * 1024;

/// Reads the BASP handshake a peer sends on the connected socket `fd` (over
/// TLS with the credentials of `sys`) and checks that it speaks this
/// build's wire version. Returns "" or why not.
std::string hear_handshake(caf::actor_system& sys, int fd,
                           std::chrono::milliseconds timeout,
                           std::chrono::steady_clock::time_point deadline) {
  auto tls = tls_of(sys.config());
  std::unique_ptr<tls_client> session;
  if (tls.enabled()) {
    session = std::make_unique<tls_client>(tls);
    if (auto why = session->handshake(fd, deadline); !why.empty())
      return why;
  }
  auto read = [&](std::vector<char>& buf) {
    return session ? session->read(buf.data(), buf.size(), deadline)
                   : read_plain(fd, buf.data(), buf.size(), deadline);
  };
  std::vector<char> bytes(caf::io::basp::header_size);
  if (auto why = read(bytes); !why.empty()) {
    if (why != "it did not speak by the deadline")
      return why;
    return "it accepts connections but did not speak within " +
           std::to_string(timeout.count()) + " ms: not a Prism process" +
           (session ? std::string{"?"}
                    : ", or one that requires TLS (" +
                          std::string{tls_cert_variable} + ", " +
                          tls_key_variable + ", " + tls_ca_variable + ")?");
  }
  caf::io::basp::header hdr;
  caf::binary_deserializer header_source{sys, bytes};
  if (header_source(hdr) ||
      hdr.operation != caf::io::basp::message_type::server_handshake ||
      hdr.payload_len > max_handshake_bytes)
    return "it does not speak CAF's BASP: not a Prism process";
  bytes.resize(hdr.payload_len);
  if (auto why = read(bytes); !why.empty())
    return why;
  caf::node_id peer;
  std::vector<std::string> app_ids;
  caf::binary_deserializer payload_source{sys, bytes};
  if (payload_source(peer, app_ids))
    return "its handshake is malformed: not a Prism process";
  if (std::find(app_ids.begin(), app_ids.end(), wire_version) != app_ids.end())
    return "";
  std::string theirs;
  for (auto& id : app_ids)
    theirs += (theirs.empty() ? "" : ", ") + id;
  return "it speaks " + (theirs.empty() ? "no Prism wire version" : theirs) +
         " and this build speaks " + wire_version +
         ": a head, its nodes and its drivers must come from builds that "
         "speak one wire version";
}

} // namespace

std::string probe_peer(caf::actor_system& sys, const host_port& where,
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
    if (!wait_for_socket(s.fd, POLLOUT, deadline)) {
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
    return hear_handshake(sys, s.fd, timeout, deadline);
  }
  return why;
}

bool closed_before_handshake(const caf::error& err) {
  return err == caf::sec::connection_timeout;
}

caf::actor dial_published(caf::actor_system& sys, const host_port& where,
                          std::chrono::milliseconds timeout, std::string& why) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  why = probe_peer(sys, where, timeout);
  if (!why.empty())
    return {};
  caf::scoped_actor self{sys};
  for (;;) {
    caf::actor result;
    caf::error failed;
    self->request(connection_manager(sys), timeout, caf::connect_atom::value,
                  where.host, where.port)
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
