// The floors under cluster mode's numbers, between two processes on
// loopback: request/response between two plain CAF actors over the
// middleman (BASP over TCP), one at a time and with many in flight, a raw
// TCP ping-pong, and a raw TCP transfer of 100 MB. Beside them, what writing
// a fresh 100 MB mapping costs (its page faults), the other floor under a
// large object's way between processes. The peer is this program again,
// started with `--floor-peer`: it publishes an echo actor and a TCP echo
// listener on 127.0.0.1, prints their ports, and ends when its standard
// input closes.
//
// The `caf_tuned_remote_*` metrics run the same requests with both actor
// systems set up as Prism's own processes are: Prism's scheduling policy
// (actors/common/shared_queue_policy.hpp) instead of CAF's work stealing,
// and no BASP worker threads (`middleman.workers = 0`: the middleman's thread
// reads a message and hands it to the scheduler itself, one thread hop less
// each way).

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <future>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/io/middleman.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>

#include "bench.hpp"
#include "common/shared_queue_policy.hpp"
#include "floor_actors.hpp"

extern char** environ;

namespace prism::bench {

namespace {

/// Requests of `caf_floor_remote_pipelined` kept in flight.
constexpr std::size_t remote_window = 1'000;

/// How long the peer may take to say where it listens, and a request to it
/// to be answered: a peer that hangs fails the metric instead of the run.
constexpr auto peer_timeout = std::chrono::seconds{10};

/// The bytes of one TCP ping (and of its pong).
constexpr std::size_t ping_bytes = 8;

[[noreturn]] void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

/// Closes a file descriptor when it goes out of scope.
class fd_guard {
public:
  explicit fd_guard(int fd = -1) : fd_(fd) {}
  fd_guard(const fd_guard&) = delete;
  fd_guard& operator=(const fd_guard&) = delete;
  ~fd_guard() {
    reset();
  }

  int get() const noexcept {
    return fd_;
  }

  /// Gives up the descriptor, which the caller closes.
  int release() noexcept {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

  void reset(int fd = -1) noexcept {
    if (fd_ >= 0)
      ::close(fd_);
    fd_ = fd;
  }

private:
  int fd_;
};

// -- raw TCP ------------------------------------------------------------------

/// Moves all of `n` bytes with `io` (a send or a recv of `fd`); false at end
/// of stream or on an error.
template <class Data, class Io>
bool transfer_all(int fd, Data* data, std::size_t n, Io io) {
  while (n > 0) {
    auto k = io(fd, data, n);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return false;
    data += k;
    n -= static_cast<std::size_t>(k);
  }
  return true;
}

bool write_all(int fd, const char* data, std::size_t n) {
  return transfer_all(fd, data, n, [](int f, const char* d, std::size_t k) {
    return ::send(f, d, k, MSG_NOSIGNAL);
  });
}

bool read_all(int fd, char* data, std::size_t n) {
  return transfer_all(fd, data, n, [](int f, char* d, std::size_t k) {
    return ::recv(f, d, k, 0);
  });
}

void set_no_delay(int fd) {
  int on = 1;
  if (::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on)) != 0)
    throw_errno("setsockopt(TCP_NODELAY)");
}

sockaddr_in loopback(std::uint16_t port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return addr;
}

/// A listening socket on 127.0.0.1 at a port the kernel picks.
int listen_on_loopback(std::uint16_t& port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    throw_errno("socket");
  auto addr = loopback(0);
  socklen_t len = sizeof(addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(fd, 16) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    throw_errno("listening on 127.0.0.1");
  }
  port = ntohs(addr.sin_port);
  return fd;
}

/// The bytes a bulk reply is sent from, again and again.
constexpr std::size_t bulk_chunk = std::size_t{1} << 20;

/// Answers every ping of every connection to `listener`, one connection at a
/// time, until the listener is shut down: a ping of 0 with itself, a ping of
/// n > 0 (its 8 bytes read as a number) with n bytes, sent from one buffer
/// again and again.
void serve_pings(int listener) {
  std::vector<char> chunk(bulk_chunk, 'x');
  for (;;) {
    int conn = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (conn < 0) {
      if (errno == EINTR)
        continue;
      return;
    }
    fd_guard guard{conn};
    int on = 1; // best effort: a slower ping is still answered
    ::setsockopt(conn, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
    std::uint64_t ping = 0;
    while (read_all(conn, reinterpret_cast<char*>(&ping), sizeof(ping))) {
      bool sent = true;
      if (ping == 0)
        sent = write_all(conn, reinterpret_cast<char*>(&ping), sizeof(ping));
      for (std::uint64_t left = ping; sent && left > 0;) {
        auto n = std::min<std::uint64_t>(left, chunk.size());
        sent = write_all(conn, chunk.data(), n);
        left -= n;
      }
      if (!sent)
        break;
    }
  }
}

// -- the peer process ---------------------------------------------------------

/// Loads the middleman into `cfg`; with `tuned`, also Prism's scheduling
/// policy and no BASP worker threads.
void configure(caf::actor_system_config& cfg, bool tuned) {
  cfg.load<caf::io::middleman>();
  if (!tuned)
    return;
  actors::use_shared_queue_scheduler(cfg);
  cfg.set("middleman.workers", std::size_t{0});
}

/// The running peer: its pid, the write end of its standard input (closing
/// it ends the peer) and the ports it listens on.
class floor_peer {
public:
  /// Starts the peer; `tuned` sets its actor system up as `configure` says.
  explicit floor_peer(bool tuned) {
    int in[2];
    int out[2];
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0)
      throw_errno("pipe");
    to_peer_.reset(in[1]);
    fd_guard peer_in{in[0]};
    from_peer_.reset(out[0]);
    fd_guard peer_out{out[1]};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, peer_in.get(), 0);
    posix_spawn_file_actions_adddup2(&actions, peer_out.get(), 1);
    std::string self = "/proc/self/exe";
    std::string mode = "--floor-peer";
    std::string setup = tuned ? "--tuned" : "--stock";
    char* argv[] = {self.data(), mode.data(), setup.data(), nullptr};
    auto rc =
        ::posix_spawn(&pid_, self.c_str(), &actions, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) {
      errno = rc;
      throw_errno("starting the floor peer");
    }
    read_ports();
  }

  floor_peer(const floor_peer&) = delete;
  floor_peer& operator=(const floor_peer&) = delete;

  ~floor_peer() {
    to_peer_.reset(); // the peer sees end of input and exits
    auto deadline = std::chrono::steady_clock::now() + peer_timeout;
    int status = 0;
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        return;
      }
      // waitpid has no timeout: look again shortly, up to the deadline.
      std::this_thread::sleep_for(std::chrono::milliseconds{5});
    }
  }

  std::uint16_t caf_port() const noexcept {
    return caf_port_;
  }

  std::uint16_t tcp_port() const noexcept {
    return tcp_port_;
  }

private:
  /// Reads the peer's one line, "ports CAF TCP", within `peer_timeout`.
  void read_ports() {
    std::string line;
    auto deadline = std::chrono::steady_clock::now() + peer_timeout;
    while (line.find('\n') == std::string::npos) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pollfd p{from_peer_.get(), POLLIN, 0};
      if (left.count() <= 0 ||
          ::poll(&p, 1, static_cast<int>(left.count())) <= 0)
        throw std::runtime_error("the floor peer did not say its ports");
      char buf[128];
      auto n = ::read(from_peer_.get(), buf, sizeof(buf));
      if (n <= 0)
        throw std::runtime_error("the floor peer exited before its ports");
      line.append(buf, static_cast<std::size_t>(n));
    }
    std::istringstream in{line};
    std::string word;
    unsigned caf = 0;
    unsigned tcp = 0;
    if (!(in >> word >> caf >> tcp) || word != "ports")
      throw std::runtime_error("the floor peer said '" + line + "'");
    caf_port_ = static_cast<std::uint16_t>(caf);
    tcp_port_ = static_cast<std::uint16_t>(tcp);
  }

  pid_t pid_ = -1;
  fd_guard to_peer_;
  fd_guard from_peer_;
  std::uint16_t caf_port_ = 0;
  std::uint16_t tcp_port_ = 0;
};

// -- CAF between processes ----------------------------------------------------

/// Round trips per second of `total` requests to the peer's echo actor with
/// up to `window` in flight. Starting the peer and connecting are not timed.
double remote_round_trips(std::size_t total, std::size_t window, bool tuned) {
  floor_peer peer{tuned};
  caf::actor_system_config cfg;
  configure(cfg, tuned);
  caf::actor_system sys{cfg};
  auto server = sys.middleman().remote_actor("127.0.0.1", peer.caf_port());
  if (!server)
    throw std::runtime_error("cannot reach the floor peer: " +
                             sys.render(server.error()));
  return timed_requests(sys, *server, total, window,
                        caf::duration{peer_timeout});
}

// -- metrics ------------------------------------------------------------------

double remote_rtt(const run_options& opts, bool tuned) {
  return remote_round_trips(opts.iterations(20'000), 1, tuned);
}

double remote_pipelined(const run_options& opts, bool tuned) {
  return remote_round_trips(opts.iterations(200'000), remote_window, tuned);
}

/// A TCP connection to the peer's ping listener.
int connect_to_pings(const floor_peer& peer) {
  fd_guard conn{::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)};
  if (conn.get() < 0)
    throw_errno("socket");
  auto addr = loopback(peer.tcp_port());
  if (::connect(conn.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) !=
      0)
    throw_errno("connecting to the floor peer");
  set_no_delay(conn.get());
  return conn.release();
}

double tcp_rtt(const run_options& opts) {
  floor_peer peer{false};
  fd_guard conn{connect_to_pings(peer)};
  auto total = opts.iterations(100'000);
  char buf[ping_bytes] = {};
  return ops_per_second(total, [&] {
    for (std::size_t i = 0; i < total; ++i)
      expect(write_all(conn.get(), buf, sizeof(buf)) &&
                 read_all(conn.get(), buf, sizeof(buf)),
             "the floor peer closed the TCP connection");
  });
}

/// The megabytes of the large-object floors: those of
/// `cluster_get_100mb_across_nodes`.
int large_mb(const run_options& opts) {
  return opts.smoke ? 10 : 100;
}

/// MB/s of a 100 MB reply from the peer over one TCP connection, read into
/// a buffer touched before (its pages are there): what loopback TCP moves
/// between two processes when no fresh memory is on the way.
double tcp_bulk(const run_options& opts) {
  floor_peer peer{false};
  fd_guard conn{connect_to_pings(peer)};
  auto mb = large_mb(opts);
  std::uint64_t n = static_cast<std::uint64_t>(mb) << 20;
  std::vector<char> into(n, '\0');
  auto receive = [&] {
    expect(
        write_all(conn.get(), reinterpret_cast<const char*>(&n), sizeof(n)) &&
            read_all(conn.get(), into.data(), into.size()),
        "the floor peer closed the TCP connection");
  };
  receive(); // the peer's buffer and both sockets' warmed up
  auto start = std::chrono::steady_clock::now();
  receive();
  std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  expect(into.back() == 'x', "the floor peer sent other bytes");
  return mb / took.count();
}

/// MB/s of writing a fresh 100 MB mapping: each of its pages faults in on
/// first touch, which is what every fresh buffer on an object's way costs.
double page_faults(const run_options& opts) {
  auto mb = large_mb(opts);
  auto n = static_cast<std::size_t>(mb) << 20;
  void* p = ::mmap(nullptr, n, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    throw_errno("mmap");
  auto start = std::chrono::steady_clock::now();
  std::memset(p, 'x', n);
  std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  ::munmap(p, n);
  return mb / took.count();
}

} // namespace

int run_floor_peer(bool tuned) {
  try {
    caf::actor_system_config cfg;
    configure(cfg, tuned);
    caf::actor_system sys{cfg};
    auto server = sys.spawn<echo_server>();
    auto caf_port = sys.middleman().publish(server, 0, "127.0.0.1");
    if (!caf_port) {
      std::fprintf(stderr, "floor peer: cannot publish: %s\n",
                   sys.render(caf_port.error()).c_str());
      return 1;
    }
    std::uint16_t tcp_port = 0;
    fd_guard listener{listen_on_loopback(tcp_port)};
    std::thread pings{serve_pings, listener.get()};
    std::printf("ports %u %u\n", static_cast<unsigned>(*caf_port),
                static_cast<unsigned>(tcp_port));
    std::fflush(stdout);
    // Until the parent closes our input (or dies).
    char c;
    while (::read(0, &c, 1) > 0) {
    }
    ::shutdown(listener.get(), SHUT_RDWR);
    pings.join();
    caf::anon_send_exit(server, caf::exit_reason::user_shutdown);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "floor peer: %s\n", e.what());
    return 1;
  }
}

std::vector<metric> remote_floor_metrics() {
  return {
      {"caf_floor_remote_rtt", "per_s", false,
       [](const run_options& o) { return remote_rtt(o, false); }},
      {"caf_floor_remote_pipelined", "per_s", false,
       [](const run_options& o) { return remote_pipelined(o, false); }},
      {"caf_tuned_remote_rtt", "per_s", false,
       [](const run_options& o) { return remote_rtt(o, true); }},
      {"caf_tuned_remote_pipelined", "per_s", false,
       [](const run_options& o) { return remote_pipelined(o, true); }},
      {"tcp_floor_rtt", "per_s", false, tcp_rtt},
      {"tcp_floor_bulk_100mb", "MB_per_s", false, tcp_bulk},
      {"page_fault_floor_100mb", "MB_per_s", false, page_faults},
  };
}

} // namespace prism::bench
