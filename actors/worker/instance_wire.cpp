#include "worker/instance_wire.hpp"

#include <cerrno>
#include <cstring>

#include <sys/socket.h>
#include <unistd.h>

#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>

namespace prism::actors::instance_wire {

namespace {

/// The length and the kind before each body.
constexpr std::size_t prefix_bytes = sizeof(std::uint64_t) + 1;

bool known(std::uint8_t k) {
  return k >= static_cast<std::uint8_t>(kind::hello) &&
         k <= static_cast<std::uint8_t>(kind::metrics);
}

/// Reads `n` bytes into `p`; false at the end of the stream or on an error.
bool read_fully(int fd, char* p, std::size_t n) {
  while (n > 0) {
    auto got = ::recv(fd, p, n, 0);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      return false;
    p += got;
    n -= static_cast<std::size_t>(got);
  }
  return true;
}

} // namespace

template <class T>
std::vector<char> encode(kind what, const T& body) {
  std::vector<char> out(prefix_bytes);
  caf::binary_serializer sink{static_cast<caf::execution_unit*>(nullptr), out};
  if (auto err = sink(const_cast<T&>(body)))
    throw error(errc::internal, "an instance frame cannot be serialized");
  std::uint64_t length = out.size() - sizeof(std::uint64_t);
  std::memcpy(out.data(), &length, sizeof(length));
  out[sizeof(length)] = static_cast<char>(what);
  return out;
}

template <class T>
bool decode(const frame& f, T& out) {
  caf::binary_deserializer src{static_cast<caf::execution_unit*>(nullptr),
                               f.body.data(), f.body.size()};
  return !src(out) && src.remaining() == 0;
}

#define PRISM_INSTANCE_FRAME(T)                                                \
  template std::vector<char> encode<T>(kind, const T&);                        \
  template bool decode<T>(const frame&, T&);

PRISM_INSTANCE_FRAME(hello)
PRISM_INSTANCE_FRAME(construct)
PRISM_INSTANCE_FRAME(constructed)
PRISM_INSTANCE_FRAME(run)
PRISM_INSTANCE_FRAME(ran)
PRISM_INSTANCE_FRAME(cancel)
PRISM_INSTANCE_FRAME(runtime_call)
PRISM_INSTANCE_FRAME(runtime_answer)
PRISM_INSTANCE_FRAME(wake)
PRISM_INSTANCE_FRAME(metrics)

#undef PRISM_INSTANCE_FRAME

bool write_frame(int fd, const std::vector<char>& bytes) {
  const char* p = bytes.data();
  std::size_t n = bytes.size();
  while (n > 0) {
    auto sent = ::send(fd, p, n, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR)
      continue;
    if (sent <= 0)
      return false;
    p += sent;
    n -= static_cast<std::size_t>(sent);
  }
  return true;
}

std::optional<frame> read_frame(int fd) {
  char prefix[prefix_bytes];
  if (!read_fully(fd, prefix, prefix_bytes))
    return std::nullopt;
  std::uint64_t length = 0;
  std::memcpy(&length, prefix, sizeof(length));
  auto k = static_cast<std::uint8_t>(prefix[sizeof(length)]);
  if (length == 0 || length > max_frame || !known(k))
    return std::nullopt;
  frame f;
  f.what = static_cast<kind>(k);
  f.body.resize(length - 1);
  if (!f.body.empty() && !read_fully(fd, f.body.data(), f.body.size()))
    return std::nullopt;
  return f;
}

void frame_reader::take(const char* data, std::size_t n) {
  // What was read before goes first, once most of the buffer is.
  if (start_ > 0 && start_ * 2 >= buf_.size()) {
    buf_.erase(buf_.begin(), buf_.begin() + static_cast<long>(start_));
    start_ = 0;
  }
  buf_.insert(buf_.end(), data, data + n);
}

std::optional<frame> frame_reader::next() {
  auto left = buf_.size() - start_;
  if (broken_ || left < prefix_bytes)
    return std::nullopt;
  std::uint64_t length = 0;
  std::memcpy(&length, buf_.data() + start_, sizeof(length));
  auto k = static_cast<std::uint8_t>(buf_[start_ + sizeof(length)]);
  if (length == 0 || length > max_frame || !known(k)) {
    broken_ = true;
    return std::nullopt;
  }
  if (left - sizeof(length) < length)
    return std::nullopt;
  frame f;
  f.what = static_cast<kind>(k);
  auto body = buf_.begin() + static_cast<long>(start_ + prefix_bytes);
  f.body.assign(body, body + static_cast<long>(length - 1));
  start_ += sizeof(length) + length;
  return f;
}

} // namespace prism::actors::instance_wire
