#include "worker/instance_process.hpp"

#include <cerrno>
#include <cstring>
#include <thread>

#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/log.hpp"
#include "prism/error.hpp"

namespace prism::actors {

namespace {

const std::shared_ptr<spdlog::logger>& links_logger() {
  static const auto log = component_logger("actor_host");
  return log;
}

/// Connections that have not said hello, at most: a local peer that opens
/// more pushes the oldest out.
constexpr std::size_t max_unknown = 256;

/// The listener's key in the epoll set (descriptors are never negative).
constexpr std::uint64_t listener_key = ~std::uint64_t{0};

} // namespace

// -- instance_links -----------------------------------------------------------

instance_links& instance_links::of_process() {
  // Never destroyed: its thread runs as long as the process, and a worker
  // process ends with _exit.
  static auto* links = new instance_links;
  return *links;
}

instance_links::instance_links() {
  name_ = "prism-instances-" + unique_id::random().hex();
  listener_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path + 1, name_.data(), name_.size());
  auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 +
                                    name_.size());
  if (listener_ < 0 ||
      ::bind(listener_, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
      ::listen(listener_, SOMAXCONN) != 0)
    throw error(errc::internal,
                std::string{"cannot open the socket of instance processes: "} +
                    std::strerror(errno));
  epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = listener_key;
  if (epoll_ < 0 || ::epoll_ctl(epoll_, EPOLL_CTL_ADD, listener_, &ev) != 0)
    throw error(errc::internal,
                std::string{"cannot watch the socket of instance processes: "} +
                    std::strerror(errno));
  std::thread{[this] { loop(); }}.detach();
}

std::shared_ptr<instance_link> instance_links::expect(const std::string& token,
                                                      callbacks cbs) {
  auto link = std::make_shared<instance_link>(*this, std::move(cbs));
  std::lock_guard<std::mutex> guard{mu_};
  // Links whose process never came (it could not start) go on the way.
  std::erase_if(expected_, [](const auto& e) { return e.second.expired(); });
  expected_.emplace(token, link);
  return link;
}

void instance_links::loop() {
  epoll_event events[64];
  for (;;) {
    int n = ::epoll_wait(epoll_, events, 64, -1);
    if (n < 0 && errno != EINTR) {
      links_logger()->error("instance processes are no longer read: {}",
                            std::strerror(errno));
      return;
    }
    for (int i = 0; i < n; ++i) {
      if (events[i].data.u64 == listener_key) {
        accept_all();
        continue;
      }
      auto fd = static_cast<int>(events[i].data.u64);
      if ((events[i].events & EPOLLOUT) != 0)
        if (auto c = connections_.find(fd);
            c != connections_.end() && c->second.link)
          c->second.link->flush();
      if ((events[i].events & ~static_cast<std::uint32_t>(EPOLLOUT)) != 0)
        read_from(fd);
    }
  }
}

void instance_links::want_write(int fd, bool writable) {
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP;
  if (writable)
    ev.events |= EPOLLOUT;
  ev.data.u64 = static_cast<std::uint64_t>(fd);
  ::epoll_ctl(epoll_, EPOLL_CTL_MOD, fd, &ev);
}

void instance_links::accept_all() {
  for (;;) {
    int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0)
      return;
    // Only a process of this user is one of ours.
    ucred cred{};
    socklen_t len = sizeof(cred);
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 ||
        cred.uid != ::getuid()) {
      ::close(fd);
      continue;
    }
    std::size_t unknown = 0;
    for (auto& [other, c] : connections_)
      unknown += c.link ? 0 : 1;
    if (unknown >= max_unknown)
      for (auto& [other, c] : connections_)
        if (!c.link) {
          drop(other);
          break;
        }
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP;
    ev.data.u64 = static_cast<std::uint64_t>(fd);
    if (::epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &ev) != 0) {
      ::close(fd);
      continue;
    }
    connections_[fd];
  }
}

void instance_links::read_from(int fd) {
  auto c = connections_.find(fd);
  if (c == connections_.end())
    return;
  char buf[64 * 1024];
  for (;;) {
    auto got = ::recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      break;
    if (got <= 0) {
      // What came before the end is read first: a last answer counts.
      while (auto f = c->second.reader.next())
        if (c->second.link)
          c->second.link->received(*f);
      drop(fd);
      return;
    }
    c->second.reader.take(buf, static_cast<std::size_t>(got));
  }
  while (auto f = c->second.reader.next()) {
    if (!c->second.link) {
      said_hello(fd, *f);
      if (connections_.count(fd) == 0)
        return;
    } else if (!c->second.link->received(*f)) {
      links_logger()->warn("an instance process (pid {}) sent a frame of "
                           "kind {} that makes no sense: its link ends",
                           c->second.link->pid(), static_cast<int>(f->what));
      drop(fd);
      return;
    }
  }
  if (c->second.reader.broken()) {
    links_logger()->warn("a peer of the instance socket does not speak its "
                         "wire: dropped");
    drop(fd);
  }
}

void instance_links::said_hello(int fd, const instance_wire::frame& f) {
  instance_wire::hello h;
  std::shared_ptr<instance_link> link;
  if (f.what == instance_wire::kind::hello && instance_wire::decode(f, h)) {
    std::lock_guard<std::mutex> guard{mu_};
    if (auto e = expected_.find(h.token); e != expected_.end()) {
      link = e->second.lock();
      expected_.erase(e);
    }
  }
  if (!link) {
    links_logger()->warn("refused a connection to the instance socket: it "
                         "named no instance this process waits for");
    drop(fd);
    return;
  }
  connections_[fd].link = link;
  link->connected(fd, h.pid);
}

void instance_links::drop(int fd) {
  auto c = connections_.find(fd);
  if (c == connections_.end())
    return;
  auto link = std::move(c->second.link);
  connections_.erase(c);
  ::epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, nullptr);
  if (link)
    link->lost(); // closes fd
  else
    ::close(fd);
}

// -- instance_link ------------------------------------------------------------

instance_link::instance_link(instance_links& links,
                             instance_links::callbacks cbs)
    : links_(links), cbs_(std::move(cbs)) {}

bool instance_link::construct(const instance_wire::construct& msg,
                              constructed_callback done) {
  {
    std::lock_guard<std::mutex> guard{mu_};
    if (ended_)
      return false;
    on_constructed_ = std::move(done);
  }
  return send(instance_wire::encode(instance_wire::kind::construct, msg));
}

bool instance_link::run(instance_wire::run batch, ran_callback done) {
  {
    std::lock_guard<std::mutex> guard{mu_};
    if (ended_)
      return false;
    batch.batch = ++next_batch_;
    batches_.emplace(batch.batch, std::move(done));
  }
  return send(instance_wire::encode(instance_wire::kind::run, batch));
}

void instance_link::cancel(const task_id& task) {
  send(instance_wire::encode(instance_wire::kind::cancel,
                             instance_wire::cancel{task}));
}

void instance_link::answer(const instance_wire::runtime_answer& a) {
  send(instance_wire::encode(instance_wire::kind::runtime_answer, a));
}

void instance_link::close() {
  std::lock_guard<std::mutex> guard{mu_};
  closed_ = true;
  // The loop reads the end and reports the link lost; one whose process
  // never connected is refused when it does.
  if (fd_ >= 0 && !ended_)
    ::shutdown(fd_, SHUT_RDWR);
  else if (fd_ < 0)
    ended_ = true;
}

std::int32_t instance_link::pid() const {
  std::lock_guard<std::mutex> guard{mu_};
  return pid_;
}

void instance_link::connected(int fd, std::int32_t pid) {
  {
    std::lock_guard<std::mutex> guard{mu_};
    fd_ = fd;
    pid_ = pid;
    if (closed_) {
      ::shutdown(fd_, SHUT_RDWR);
      return;
    }
  }
  if (cbs_.connected)
    cbs_.connected(*this);
}

bool instance_link::received(const instance_wire::frame& f) {
  switch (f.what) {
  case instance_wire::kind::constructed: {
    instance_wire::constructed c;
    constructed_callback done;
    {
      std::lock_guard<std::mutex> guard{mu_};
      done = std::move(on_constructed_);
      on_constructed_ = nullptr;
    }
    if (!done || !instance_wire::decode(f, c))
      return false;
    done(std::move(c));
    return true;
  }
  case instance_wire::kind::ran: {
    instance_wire::ran r;
    if (!instance_wire::decode(f, r))
      return false;
    ran_callback done;
    {
      std::lock_guard<std::mutex> guard{mu_};
      auto b = batches_.find(r.batch);
      if (b == batches_.end())
        return false;
      done = std::move(b->second);
      batches_.erase(b);
    }
    done(std::move(r));
    return true;
  }
  case instance_wire::kind::runtime_call: {
    instance_wire::runtime_call c;
    if (!cbs_.runtime_call || !instance_wire::decode(f, c))
      return false;
    cbs_.runtime_call(*this, std::move(c));
    return true;
  }
  case instance_wire::kind::metrics: {
    instance_wire::metrics m;
    if (!instance_wire::decode(f, m))
      return false;
    if (cbs_.metrics)
      cbs_.metrics(std::move(m));
    return true;
  }
  case instance_wire::kind::wake: {
    instance_wire::wake w;
    if (!cbs_.wake || !instance_wire::decode(f, w))
      return false;
    cbs_.wake(w.task);
    return true;
  }
  default:
    return false;
  }
}

void instance_link::lost() {
  {
    std::lock_guard<std::mutex> guard{mu_};
    ended_ = true;
    if (fd_ >= 0)
      ::close(fd_);
    fd_ = -1;
    queued_.clear();
    batches_.clear();
    on_constructed_ = nullptr;
  }
  if (cbs_.lost)
    cbs_.lost();
}

bool instance_link::send(std::vector<char> bytes) {
  std::lock_guard<std::mutex> guard{mu_};
  if (ended_ || fd_ < 0)
    return false;
  bool idle = queued_.empty();
  queued_.push_back(std::move(bytes));
  // Behind others, it goes when the loop writes them.
  if (!idle)
    return true;
  if (!write_queued()) {
    // The loop reads the end of the socket and reports the link lost.
    ::shutdown(fd_, SHUT_RDWR);
    return false;
  }
  if (!queued_.empty())
    links_.want_write(fd_, true);
  return true;
}

void instance_link::flush() {
  std::lock_guard<std::mutex> guard{mu_};
  if (ended_ || fd_ < 0)
    return;
  if (!write_queued())
    ::shutdown(fd_, SHUT_RDWR);
  else if (queued_.empty())
    links_.want_write(fd_, false);
}

bool instance_link::write_queued() {
  while (!queued_.empty()) {
    auto& front = queued_.front();
    auto sent = ::send(fd_, front.data() + written_, front.size() - written_,
                       MSG_DONTWAIT | MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR)
      continue;
    if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      return true;
    if (sent <= 0)
      return false;
    written_ += static_cast<std::size_t>(sent);
    if (written_ == front.size()) {
      queued_.pop_front();
      written_ = 0;
    }
  }
  return true;
}

} // namespace prism::actors
