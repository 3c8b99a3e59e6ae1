#pragma once

// What a node and the fork server of one of its programs say to each other
// over their socket pair (SOCK_SEQPACKET: one message per datagram). No CAF
// here: the server runs before any actor system exists.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace prism::actors::fork_wire {

/// The variable that makes a program a fork server, set to the number of
/// the descriptor of its socket.
inline constexpr const char* server_variable = "PRISM_WORKER_FORK_SERVER";

/// The variable that tells a fork server how many spares to keep: processes
/// forked ahead of requests, which prepare to serve as workers while they
/// wait (see `serve_forks`).
inline constexpr const char* spares_variable = "PRISM_WORKER_FORK_SPARES";

/// Set (with `LD_BIND_NOW`) by the node that starts a fork server: the
/// dynamic linker resolves every symbol of the program once, in the
/// server, and each process it forks inherits them resolved, instead of
/// resolving and copying them on first call in every worker. The server
/// takes both out of its environment, which its workers inherit.
inline constexpr const char* bind_now_variable = "PRISM_WORKER_FORK_BIND_NOW";

/// The largest message either side sends.
inline constexpr std::size_t max_message = 16 * 1024;

enum class kind : std::uint8_t {
  /// server -> node: it serves (`pid` is its own).
  ready = 1,
  /// server -> node: it cannot serve and ends; `text` says why.
  refused = 2,
  /// node -> server: fork a worker, with `text` the "NAME=value" entries
  /// to set in its environment, each ended by '\0', and, if two
  /// descriptors ride along, its stdout and stderr. The server passes it
  /// on to a spare, if it has one, unless `status` is `fresh_fork`.
  fork = 3,
  /// server -> node: forked, as `pid`; a pidfd of it rides along. `status`
  /// is 1 if it is a spare, forked and prepared before the request.
  forked = 4,
  /// server -> node: the fork failed; `text` says why.
  fork_failed = 5,
  /// server -> node: the process `pid` it forked ended with wait status
  /// `status`.
  exited = 6,
};

/// A fork request's `status` that asks for a process forked for it, never
/// a spare (a spare prepared to serve as a worker).
inline constexpr std::int32_t fresh_fork = 1;

struct header {
  kind what = kind::ready;
  std::uint64_t serial = 0;
  std::int32_t pid = 0;
  std::int32_t status = 0;
};

/// A message in its bytes: the header, then the text.
inline std::vector<char> encode(const header& h, const std::string& text = {}) {
  std::vector<char> out(sizeof(header) + text.size());
  std::memcpy(out.data(), &h, sizeof(header));
  if (!text.empty())
    std::memcpy(out.data() + sizeof(header), text.data(), text.size());
  return out;
}

/// Reads a message of `n` bytes; false if it is too short to be one.
inline bool decode(const char* data, std::size_t n, header& h,
                   std::string& text) {
  if (n < sizeof(header))
    return false;
  std::memcpy(&h, data, sizeof(header));
  text.assign(data + sizeof(header), n - sizeof(header));
  return true;
}

/// The most descriptors one message carries.
inline constexpr std::size_t max_passed = 4;

/// Sends one message on `fd`, with the descriptors `pass` along (at most
/// `max_passed`). Returns false if the socket is closed or broken.
bool send(int fd, const header& h, const std::string& text,
          const std::vector<int>& pass);

/// The same, with the descriptor `pass` along if it is not -1.
inline bool send(int fd, const header& h, const std::string& text = {},
                 int pass = -1) {
  return send(fd, h, text,
              pass >= 0 ? std::vector<int>{pass} : std::vector<int>{});
}

/// What `receive` found.
enum class received { message, none, closed };

/// Receives one message from `fd` (non-blocking): `none` if nothing is
/// waiting, `closed` at the end of the stream or on an error. Descriptors
/// that came along are put in `passed`, in order (else it is empty); those
/// of a malformed message are closed.
received receive(int fd, header& h, std::string& text,
                 std::vector<int>& passed);

/// Closes each of `fds` and empties it.
void close_all(std::vector<int>& fds);

} // namespace prism::actors::fork_wire
