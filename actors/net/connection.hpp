#pragma once

// A connection of the BASP broker as Prism's transport makes it: CAF's
// scribe over plain TCP or an established TLS session, which checks every
// BASP header before the broker reads it (net/transport.hpp says why).
// Internal to the transport; tests construct one to check how it leaves the
// multiplexer.

#include <algorithm>
#include <climits>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <caf/io/basp/header.hpp>
#include <caf/io/network/default_multiplexer.hpp>
#include <caf/io/network/stream_impl.hpp>
#include <caf/io/scribe.hpp>
#include <caf/policy/tcp.hpp>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "common/log.hpp"
#include "net/transport.hpp"

namespace prism::actors {

namespace net = caf::io::network;

struct ssl_deleter {
  void operator()(SSL* ssl) const {
    SSL_free(ssl);
  }
};
using ssl_ptr = std::unique_ptr<SSL, ssl_deleter>;

// -- established connections
// ---------------------------------------------------

/// How a stream reads and writes once the handshake is done.
class tls_policy {
public:
  explicit tls_policy(SSL* ssl) : ssl_(ssl) {}

  net::rw_state read_some(std::size_t& result, net::native_socket, void* buf,
                          std::size_t len) {
    result = 0;
    ERR_clear_error();
    int rc = SSL_read(ssl_.get(), buf,
                      static_cast<int>(std::min<std::size_t>(len, INT_MAX)));
    if (rc > 0) {
      result = static_cast<std::size_t>(rc);
      return net::rw_state::success;
    }
    // A read that must write first (a TLS 1.3 key update over a full send
    // buffer) would wait on a write the stream never asks for: it fails.
    if (SSL_get_error(ssl_.get(), rc) == SSL_ERROR_WANT_WRITE) {
      ERR_clear_error();
      return net::rw_state::failure;
    }
    return waits(rc) ? net::rw_state::success : net::rw_state::failure;
  }

  net::rw_state write_some(std::size_t& result, net::native_socket,
                           const void* buf, std::size_t len) {
    result = 0;
    if (len == 0)
      return net::rw_state::indeterminate;
    ERR_clear_error();
    int rc = SSL_write(ssl_.get(), buf,
                       static_cast<int>(std::min<std::size_t>(len, INT_MAX)));
    if (rc > 0) {
      result = static_cast<std::size_t>(rc);
      return net::rw_state::success;
    }
    return waits(rc) ? net::rw_state::success : net::rw_state::failure;
  }

  bool must_read_more(net::native_socket, std::size_t threshold) {
    return static_cast<std::size_t>(SSL_pending(ssl_.get())) >= threshold;
  }

private:
  /// Whether the call that returned `rc` only waits for the socket; a
  /// failure empties OpenSSL's error queue.
  bool waits(int rc) {
    auto code = SSL_get_error(ssl_.get(), rc);
    if (code == SSL_ERROR_WANT_READ || code == SSL_ERROR_WANT_WRITE)
      return true;
    ERR_clear_error();
    return false;
  }

  ssl_ptr ssl_;
};

/// `Policy` (TCP, or a TLS session) reading ahead: CAF's stream asks for a
/// BASP header, then for its payload, each read a system call; this reads
/// what the socket has, up to 64 KB, and hands it out as asked, so that a
/// burst of small messages costs a read, not two per message. A read at
/// least as large as that, with nothing read ahead, goes straight into the
/// stream's buffer.
template <class Policy>
class read_ahead : public Policy {
public:
  using Policy::Policy;

  static constexpr std::size_t capacity = 64 * 1024;

  net::rw_state read_some(std::size_t& result, net::native_socket fd, void* buf,
                          std::size_t len) {
    result = 0;
    if (pos_ == end_) {
      if (len >= capacity)
        return Policy::read_some(result, fd, buf, len);
      pos_ = end_ = 0;
      std::size_t got = 0;
      auto state = Policy::read_some(got, fd, ahead_.get(), capacity);
      if (state != net::rw_state::success || got == 0)
        return state;
      end_ = got;
    }
    auto n = std::min(len, end_ - pos_);
    std::copy_n(ahead_.get() + pos_, n, static_cast<char*>(buf));
    pos_ += n;
    result = n;
    return net::rw_state::success;
  }

  /// The stream reads on while bytes wait here: the socket, drained into
  /// this buffer, would not wake it for them.
  bool must_read_more(net::native_socket fd, std::size_t threshold) {
    return pos_ != end_ || Policy::must_read_more(fd, threshold);
  }

private:
  /// Not zeroed: a connection touches only the pages its reads fill, and a
  /// worker process that starts with several connections does not fault in
  /// 64 KB for each.
  std::unique_ptr<char[]> ahead_{new char[capacity]};
  std::size_t pos_ = 0;
  std::size_t end_ = 0;
};

using basp_header = caf::io::basp::header;

/// What a connection lets its peer announce: `handshake` bytes until its
/// BASP handshake, then `message` bytes.
struct read_limits {
  std::size_t handshake = max_handshake_message_bytes;
  std::size_t message = std::size_t{1} << 30;
};

/// Why the broker must not see the BASP header in `buf` (`size` bytes) of
/// a connection whose peer sent a handshake already if `greeted`; "" if it
/// may. Until its handshake a peer sends nothing else, and little: CAF
/// 0.17.6 would take a heartbeat or a message first, and make room for
/// whatever it announces. And CAF reads a handshake header that announces
/// no payload as one with a payload, through a null pointer: 32 bytes from
/// any peer would end the process.
std::string refusal_of_header(const void* buf, std::size_t size, bool greeted,
                              const read_limits& limits, basp_header& hdr);

/// A connection of the broker: CAF's scribe with a stream of `Policy`
/// (plain TCP, or an established TLS session), that reads the BASP headers
/// before the broker does, and closes the connection instead of passing on
/// one CAF would crash on or one that announces a message larger than its
/// limits.
template <class Policy>
class capped_scribe final : public caf::io::scribe {
public:
  template <class... Ts>
  capped_scribe(net::default_multiplexer& mpx, net::native_socket fd,
                read_limits limits, Ts&&... policy_args)
      : caf::io::scribe(net::conn_hdl_from_socket(fd)), limits_(limits),
        stream_(mpx, fd, std::forward<Ts>(policy_args)...) {}

  void configure_read(caf::io::receive_policy::config config) override {
    // The broker asks for what a checked header announced; this bounds any
    // other read as well.
    if (config.second > std::max(limits_.handshake, limits_.message)) {
      refuse("a read of " + std::to_string(config.second) + " bytes");
      return;
    }
    stream_.configure_read(config);
    if (!launched_) {
      launched_ = true;
      stream_.start(this);
    }
  }

  bool consume(caf::execution_unit* ctx, const void* buf,
               std::size_t size) override {
    if (payload_due_) {
      payload_due_ = false;
    } else {
      basp_header hdr;
      auto why = refusal_of_header(buf, size, greeted_, limits_, hdr);
      if (!why.empty()) {
        refuse(why);
        return false;
      }
      greeted_ = greeted_ || caf::io::basp::is_handshake(hdr);
      payload_due_ = hdr.payload_len > 0;
    }
    return caf::io::scribe::consume(ctx, buf, size);
  }

  void ack_writes(bool enable) override {
    stream_.ack_writes(enable);
  }

  std::vector<char>& wr_buf() override {
    return stream_.wr_buf();
  }

  std::vector<char>& rd_buf() override {
    return stream_.rd_buf();
  }

  void graceful_shutdown() override {
    stream_.graceful_shutdown();
    detach(&stream_.backend(), false);
  }

  void flush() override {
    stream_.flush(this);
  }

  std::string addr() const override {
    auto x = net::remote_addr_of_fd(stream_.fd());
    return x ? *x : std::string{};
  }

  std::uint16_t port() const override {
    auto x = net::remote_port_of_fd(stream_.fd());
    return x ? *x : 0;
  }

  void add_to_loop() override {
    stream_.activate(this);
  }

  void remove_from_loop() override {
    stop_reading();
  }

private:
  /// Closes the connection, for `why`: reads no more, and tells the
  /// broker, from outside its handler, that the connection failed.
  void refuse(const std::string& why) {
    auto peer = addr();
    component_logger("transport")
        ->warn("closed the connection from {}: {}",
               peer.empty() ? std::string{"?"} : peer, why);
    if (launched_)
      stop_reading();
    caf::intrusive_ptr<capped_scribe> self{this};
    auto* mpx = &stream_.backend();
    mpx->post([self, mpx] { self->io_failure(mpx, net::operation::read); });
  }

  /// Takes the connection out of the multiplexer's reads. CAF 0.17.6's
  /// multiplexer squashes a start and a stop of one round into nothing and
  /// then never calls `removed_from_loop`, by which the stream lets go of
  /// this connection: one the broker starts and closes in one round (a
  /// connect answered as the broker shuts down) would hold itself forever.
  /// A read the multiplexer does not poll is let go of here instead.
  void stop_reading() {
    stream_.passivate();
    if ((stream_.eventbf() & net::input_mask) == 0) {
      caf::intrusive_ptr<capped_scribe> self{this};
      stream_.removed_from_loop(net::operation::read);
    }
  }

  read_limits limits_;
  /// Whether the peer sent its BASP handshake.
  bool greeted_ = false;
  /// Whether the next read is the payload its last header announced.
  bool payload_due_ = false;
  bool launched_ = false;
  net::stream_impl<Policy> stream_;
};

using tls_scribe = capped_scribe<read_ahead<tls_policy>>;
using plain_scribe = capped_scribe<read_ahead<caf::policy::tcp>>;

} // namespace prism::actors
