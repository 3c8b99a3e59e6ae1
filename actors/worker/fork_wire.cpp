#include "worker/fork_wire.hpp"

#include <cerrno>

#include <sys/socket.h>
#include <unistd.h>

namespace prism::actors::fork_wire {

bool send(int fd, const header& h, const std::string& text,
          const std::vector<int>& pass) {
  if (pass.size() > max_passed)
    return false;
  auto bytes = encode(h, text);
  iovec iov{bytes.data(), bytes.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * max_passed)] = {};
  if (!pass.empty()) {
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * pass.size());
    auto* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * pass.size());
    std::memcpy(CMSG_DATA(c), pass.data(), sizeof(int) * pass.size());
  }
  for (;;) {
    if (::sendmsg(fd, &msg, MSG_NOSIGNAL) >= 0)
      return true;
    if (errno != EINTR)
      return false;
  }
}

void close_all(std::vector<int>& fds) {
  for (int x : fds)
    if (x >= 0)
      ::close(x);
  fds.clear();
}

received receive(int fd, header& h, std::string& text,
                 std::vector<int>& passed) {
  passed.clear();
  char data[max_message];
  iovec iov{data, sizeof(data)};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * max_passed)] = {};
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  ssize_t n = 0;
  do {
    n = ::recvmsg(fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n < 0)
    return errno == EAGAIN || errno == EWOULDBLOCK ? received::none
                                                   : received::closed;
  if (n == 0)
    return received::closed;
  for (auto* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
        c->cmsg_len >= CMSG_LEN(0)) {
      auto count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (std::size_t i = 0; i < count; ++i) {
        int x = -1;
        std::memcpy(&x, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
        passed.push_back(x);
      }
    }
  bool whole = (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) == 0;
  if (!whole || !decode(data, static_cast<std::size_t>(n), h, text)) {
    close_all(passed);
    // A stream this side cannot read is as good as closed.
    return received::closed;
  }
  return received::message;
}

} // namespace prism::actors::fork_wire
