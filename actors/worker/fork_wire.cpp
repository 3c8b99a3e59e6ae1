#include "worker/fork_wire.hpp"

#include <cerrno>

#include <sys/socket.h>
#include <unistd.h>

namespace prism::actors::fork_wire {

bool send(int fd, const header& h, const std::string& text, int pass) {
  auto bytes = encode(h, text);
  iovec iov{bytes.data(), bytes.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  if (pass >= 0) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    auto* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &pass, sizeof(int));
  }
  for (;;) {
    if (::sendmsg(fd, &msg, MSG_NOSIGNAL) >= 0)
      return true;
    if (errno != EINTR)
      return false;
  }
}

received receive(int fd, header& h, std::string& text, int& passed) {
  passed = -1;
  char data[max_message];
  iovec iov{data, sizeof(data)};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
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
        c->cmsg_len == CMSG_LEN(sizeof(int)))
      std::memcpy(&passed, CMSG_DATA(c), sizeof(int));
  bool whole = (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) == 0;
  if (!whole || !decode(data, static_cast<std::size_t>(n), h, text)) {
    if (passed >= 0)
      ::close(passed);
    passed = -1;
    // A stream this side cannot read is as good as closed.
    return received::closed;
  }
  return received::message;
}

} // namespace prism::actors::fork_wire
