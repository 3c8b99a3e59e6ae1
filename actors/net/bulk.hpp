#pragma once

// Large payloads between nodes over plain TCP of their own, beside CAF's
// connection: a node offers the bytes of a stored object under a random
// ticket, told to the reader over the (authenticated) cluster connection,
// and the reader fetches them straight into their place. The node sends
// them from where they lie, and the reader receives them where they go,
// with none of the copies that CAF's serialization of a message makes on
// both sides. Used only on clusters without TLS: on a TLS cluster every
// byte goes over the encrypted connection.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "prism/internal/thread_annotations.hpp"

namespace prism::actors {

/// A node's port for bulk reads: a thread that accepts connections, and a
/// thread per connection (a few at most) that reads a ticket and sends the
/// bytes offered under it. A ticket is good for one read, within its
/// lifetime (then its bytes are let go of); a connection that names no
/// live ticket, or says nothing within `ticket_timeout`, is closed with
/// nothing sent.
class bulk_server {
public:
  /// How long an offer waits for its reader, by default.
  static constexpr auto default_offer_lifetime = std::chrono::seconds{60};
  /// How long a connection may take to name its ticket.
  static constexpr auto ticket_timeout = std::chrono::seconds{5};
  /// How long a send may stall (a reader that stopped reading).
  static constexpr auto send_timeout = std::chrono::seconds{30};
  /// Connections served at once; more are closed at once (their readers
  /// read over the cluster connection instead).
  static constexpr std::size_t max_connections = 8;

  /// Listens on `host` (a free port). Throws `std::system_error` if it
  /// cannot.
  explicit bulk_server(
      const std::string& host,
      std::chrono::milliseconds offer_lifetime = default_offer_lifetime);

  /// Closes the port and every connection, and waits for their threads.
  ~bulk_server();

  bulk_server(const bulk_server&) = delete;
  bulk_server& operator=(const bulk_server&) = delete;

  std::uint16_t port() const noexcept {
    return port_;
  }

  /// Offers the `n` bytes at `data`, kept alive by `keeper` until they are
  /// sent or the offer lapses; returns its ticket.
  std::string offer(std::shared_ptr<const void> keeper, const char* data,
                    std::uint64_t n);

  /// Offers not yet taken.
  std::size_t offers() const;

private:
  struct offered {
    std::shared_ptr<const void> keeper;
    const char* data = nullptr;
    std::uint64_t size = 0;
    std::chrono::steady_clock::time_point until;
  };

  struct connection {
    int fd = -1;
    std::thread worker;
    std::atomic<bool> done{false};
  };

  void accept_loop();
  void serve(connection& c);
  bool take(const std::string& ticket, offered& out);
  void reap_finished() EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void drop_lapsed() EXCLUSIVE_LOCKS_REQUIRED(mu_);

  std::chrono::milliseconds offer_lifetime_;

  int listener_ = -1;
  int wake_[2] = {-1, -1};
  std::uint16_t port_ = 0;
  mutable std::mutex mu_;
  std::unordered_map<std::string, offered> offers_ GUARDED_BY(mu_);
  std::vector<std::unique_ptr<connection>> connections_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  std::thread acceptor_;
};

/// A read of bytes a node offered, on a thread of its own: it connects to
/// `host:port`, names `ticket`, and receives exactly `n` bytes into `into`,
/// then calls `done` with "" or why not (from its thread). `cancel` (or
/// the destructor) ends it early: `done` then says so. Waits at most
/// `connect_timeout` for the connection and `stall_timeout` for each part
/// of the bytes.
class bulk_fetch {
public:
  bulk_fetch(std::string host, std::uint16_t port, std::string ticket,
             char* into, std::uint64_t n,
             std::chrono::milliseconds connect_timeout,
             std::chrono::milliseconds stall_timeout,
             std::function<void(std::string)> done);

  /// Cancels the read and waits for its thread.
  ~bulk_fetch();

  bulk_fetch(const bulk_fetch&) = delete;
  bulk_fetch& operator=(const bulk_fetch&) = delete;

  void cancel();

private:
  std::string run();

  std::string host_;
  std::uint16_t port_;
  std::string ticket_;
  char* into_;
  std::uint64_t size_;
  std::chrono::milliseconds connect_timeout_;
  std::chrono::milliseconds stall_timeout_;
  std::mutex mu_;
  int fd_ GUARDED_BY(mu_) = -1;
  bool cancelled_ GUARDED_BY(mu_) = false;
  std::thread worker_;
};

} // namespace prism::actors
