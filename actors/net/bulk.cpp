#include "net/bulk.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/secret.hpp"

namespace prism::actors {

namespace {

/// What a reader sends first: the ticket, 32 hex digits.
constexpr std::size_t ticket_bytes = 32;

/// What a node sends before the bytes: their count, little-endian.
constexpr std::size_t header_bytes = 8;

std::system_error system_failure(const std::string& what) {
  return std::system_error{errno, std::generic_category(), what};
}

timeval timeval_of(std::chrono::milliseconds t) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(t.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((t.count() % 1000) * 1000);
  return tv;
}

void set_timeouts(int fd, std::chrono::milliseconds receive,
                  std::chrono::milliseconds send) {
  auto r = timeval_of(receive);
  auto s = timeval_of(send);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &r, sizeof(r));
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &s, sizeof(s));
}

// Sends all `n` bytes at `p`; false if the connection fails or stalls.
bool send_all(int fd, const char* p, std::uint64_t n) {
  while (n > 0) {
    auto sent = ::send(fd, p, n, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR)
      continue;
    if (sent <= 0)
      return false;
    p += sent;
    n -= static_cast<std::uint64_t>(sent);
  }
  return true;
}

// Receives exactly `n` bytes into `p`; returns how many came before the
// connection ended, failed or stalled, and sets `stalled` if it stopped
// because nothing came within the receive timeout.
std::uint64_t receive_all(int fd, char* p, std::uint64_t n, bool& stalled) {
  std::uint64_t got = 0;
  stalled = false;
  while (got < n) {
    auto r = ::recv(fd, p + got, n - got, 0);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0) {
      stalled = r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
      break;
    }
    got += static_cast<std::uint64_t>(r);
  }
  return got;
}

void put_size(char* out, std::uint64_t n) {
  for (std::size_t i = 0; i < header_bytes; ++i)
    out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
}

std::uint64_t get_size(const char* in) {
  std::uint64_t n = 0;
  for (std::size_t i = 0; i < header_bytes; ++i)
    n |= static_cast<std::uint64_t>(static_cast<unsigned char>(in[i]))
         << (8 * i);
  return n;
}

} // namespace

// -- bulk_server --------------------------------------------------------------

bulk_server::bulk_server(const std::string& host,
                         std::chrono::milliseconds offer_lifetime)
    : offer_lifetime_(offer_lifetime) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), "0", &hints,
                             &found);
      rc != 0)
    throw std::system_error{std::make_error_code(std::errc::invalid_argument),
                            "bulk port: cannot resolve " + host + ": " +
                                ::gai_strerror(rc)};
  std::unique_ptr<addrinfo, void (*)(addrinfo*)> guard{found, ::freeaddrinfo};
  listener_ = ::socket(found->ai_family, found->ai_socktype | SOCK_CLOEXEC,
                       found->ai_protocol);
  if (listener_ < 0)
    throw system_failure("bulk port: socket");
  auto fail = [this](const std::string& what) {
    auto e = system_failure(what);
    ::close(listener_);
    return e;
  };
  if (::bind(listener_, found->ai_addr, found->ai_addrlen) != 0)
    throw fail("bulk port: bind to " + host);
  if (::listen(listener_, 16) != 0)
    throw fail("bulk port: listen");
  sockaddr_storage bound{};
  socklen_t len = sizeof(bound);
  if (::getsockname(listener_, reinterpret_cast<sockaddr*>(&bound), &len) != 0)
    throw fail("bulk port: getsockname");
  port_ = ntohs(bound.ss_family == AF_INET6
                    ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                    : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  if (::pipe2(wake_, O_CLOEXEC) != 0)
    throw fail("bulk port: pipe");
  acceptor_ = std::thread{[this] { accept_loop(); }};
}

bulk_server::~bulk_server() {
  {
    std::lock_guard<std::mutex> guard{mu_};
    stopping_ = true;
    for (auto& c : connections_)
      if (c->fd >= 0)
        ::shutdown(c->fd, SHUT_RDWR);
  }
  char one = 1;
  while (::write(wake_[1], &one, 1) < 0 && errno == EINTR) {
  }
  acceptor_.join();
  // No new connection is served now; those served end at their shutdown.
  std::vector<std::unique_ptr<connection>> left;
  {
    std::lock_guard<std::mutex> guard{mu_};
    left.swap(connections_);
  }
  for (auto& c : left)
    c->worker.join();
  ::close(listener_);
  ::close(wake_[0]);
  ::close(wake_[1]);
}

std::string bulk_server::offer(std::shared_ptr<const void> keeper,
                               const char* data, std::uint64_t n) {
  auto ticket = random_secret(ticket_bytes / 2);
  std::lock_guard<std::mutex> guard{mu_};
  drop_lapsed();
  offers_[ticket] = offered{std::move(keeper), data, n,
                            std::chrono::steady_clock::now() + offer_lifetime_};
  return ticket;
}

void bulk_server::drop_lapsed() {
  auto now = std::chrono::steady_clock::now();
  std::erase_if(offers_, [now](const auto& o) { return o.second.until < now; });
}

std::size_t bulk_server::offers() const {
  std::lock_guard<std::mutex> guard{mu_};
  return offers_.size();
}

bool bulk_server::take(const std::string& ticket, offered& out) {
  std::lock_guard<std::mutex> guard{mu_};
  auto i = offers_.find(ticket);
  if (i == offers_.end() || i->second.until < std::chrono::steady_clock::now())
    return false;
  out = std::move(i->second);
  offers_.erase(i);
  return true;
}

void bulk_server::reap_finished() {
  auto finished = std::partition(
      connections_.begin(), connections_.end(),
      [](const std::unique_ptr<connection>& c) { return !c->done.load(); });
  for (auto i = finished; i != connections_.end(); ++i)
    (*i)->worker.join();
  connections_.erase(finished, connections_.end());
}

void bulk_server::accept_loop() {
  // Wakes at least this often to let go of the bytes of lapsed offers.
  auto sweep = static_cast<int>(
      std::min(offer_lifetime_, std::chrono::milliseconds{5000}).count());
  for (;;) {
    pollfd fds[2] = {{listener_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
    int rc = ::poll(fds, 2, sweep);
    if (rc < 0) {
      if (errno == EINTR)
        continue;
      return;
    }
    if (fds[1].revents != 0)
      return;
    if ((fds[0].revents & POLLIN) == 0) {
      std::lock_guard<std::mutex> guard{mu_};
      drop_lapsed();
      continue;
    }
    int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      // The peer gave up already; or no descriptor or memory is free, and
      // the connection waits in the backlog: a pause, not a busy loop.
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
          errno == ENOMEM) {
        pollfd wake{wake_[0], POLLIN, 0};
        ::poll(&wake, 1, 100);
      }
      continue;
    }
    std::lock_guard<std::mutex> guard{mu_};
    reap_finished();
    if (stopping_ || connections_.size() >= max_connections) {
      ::close(fd);
      continue;
    }
    auto c = std::make_unique<connection>();
    c->fd = fd;
    auto* raw = c.get();
    try {
      c->worker = std::thread{[this, raw] { serve(*raw); }};
    } catch (const std::system_error&) {
      ::close(fd); // No thread to spare: its reader reads in chunks.
      continue;
    }
    connections_.push_back(std::move(c));
  }
}

void bulk_server::serve(connection& c) {
  int fd = 0;
  {
    std::lock_guard<std::mutex> guard{mu_};
    fd = c.fd;
  }
  set_timeouts(fd, ticket_timeout, send_timeout);
  std::string ticket(ticket_bytes, '\0');
  offered o;
  bool stalled = false;
  if (receive_all(fd, ticket.data(), ticket_bytes, stalled) == ticket_bytes &&
      take(ticket, o)) {
    char header[header_bytes];
    put_size(header, o.size);
    if (send_all(fd, header, header_bytes))
      send_all(fd, o.data, o.size);
  }
  {
    std::lock_guard<std::mutex> guard{mu_};
    ::close(c.fd);
    c.fd = -1;
  }
  o = {}; // The bytes may go now.
  c.done = true;
}

// -- bulk_fetch ---------------------------------------------------------------

bulk_fetch::bulk_fetch(std::string host, std::uint16_t port, std::string ticket,
                       char* into, std::uint64_t n,
                       std::chrono::milliseconds connect_timeout,
                       std::chrono::milliseconds stall_timeout,
                       std::function<void(std::string)> done)
    : host_(std::move(host)), port_(port), ticket_(std::move(ticket)),
      into_(into), size_(n), connect_timeout_(connect_timeout),
      stall_timeout_(stall_timeout) {
  worker_ = std::thread{[this, done = std::move(done)] { done(run()); }};
}

bulk_fetch::~bulk_fetch() {
  cancel();
  worker_.join();
}

void bulk_fetch::cancel() {
  std::lock_guard<std::mutex> guard{mu_};
  cancelled_ = true;
  if (fd_ >= 0)
    ::shutdown(fd_, SHUT_RDWR);
}

std::string bulk_fetch::run() {
  auto where = host_ + ":" + std::to_string(port_);
  if (ticket_.size() != ticket_bytes)
    return "the ticket for " + where + " is malformed";
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(host_.c_str(), std::to_string(port_).c_str(),
                             &hints, &found);
      rc != 0)
    return "cannot resolve " + host_ + ": " + ::gai_strerror(rc);
  std::unique_ptr<addrinfo, void (*)(addrinfo*)> guard{found, ::freeaddrinfo};
  int fd = ::socket(found->ai_family,
                    found->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                    found->ai_protocol);
  if (fd < 0)
    return std::string{"socket: "} + std::strerror(errno);
  {
    std::lock_guard<std::mutex> lock{mu_};
    if (cancelled_) {
      ::close(fd);
      return "cancelled";
    }
    fd_ = fd;
  }
  auto finish = [this](std::string why) {
    std::lock_guard<std::mutex> lock{mu_};
    ::close(fd_);
    fd_ = -1;
    return cancelled_ ? std::string{"cancelled"} : why;
  };
  if (::connect(fd, found->ai_addr, found->ai_addrlen) != 0) {
    if (errno != EINPROGRESS)
      return finish("cannot connect to " + where + ": " + std::strerror(errno));
    // In slices, so that a cancel is seen soon.
    auto deadline = std::chrono::steady_clock::now() + connect_timeout_;
    for (;;) {
      pollfd p{fd, POLLOUT, 0};
      int rc = ::poll(&p, 1, 20);
      if (rc > 0)
        break;
      if (rc < 0 && errno != EINTR)
        return finish(std::string{"poll: "} + std::strerror(errno));
      {
        std::lock_guard<std::mutex> lock{mu_};
        if (cancelled_)
          break;
      }
      if (std::chrono::steady_clock::now() >= deadline)
        return finish("no connection to " + where + " within " +
                      std::to_string(connect_timeout_.count()) + " ms");
    }
    int err = 0;
    socklen_t len = sizeof(err);
    ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0)
      return finish("cannot connect to " + where + ": " + std::strerror(err));
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  set_timeouts(fd, stall_timeout_, stall_timeout_);
  if (!send_all(fd, ticket_.data(), ticket_.size()))
    return finish("cannot send the ticket to " + where + ": " +
                  std::strerror(errno));
  auto silence =
      "nothing for " + std::to_string(stall_timeout_.count()) + " ms";
  char header[header_bytes];
  bool stalled = false;
  if (receive_all(fd, header, header_bytes, stalled) != header_bytes)
    return finish(where + (stalled ? " answered " + silence
                                   : " closed the connection: it has no offer "
                                     "under that ticket (or it lapsed)"));
  if (auto n = get_size(header); n != size_)
    return finish(where + " offers " + std::to_string(n) + " bytes, not the " +
                  std::to_string(size_) + " asked for");
  if (auto got = receive_all(fd, into_, size_, stalled); got != size_)
    return finish(where + " sent " + std::to_string(got) + " of " +
                  std::to_string(size_) + " bytes, then " +
                  (stalled ? silence : "closed the connection"));
  return finish("");
}

} // namespace prism::actors
