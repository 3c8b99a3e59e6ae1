#pragma once

// Mutual TLS under CAF's middleman: the module that makes every port a
// process opens, and every connection it makes, a TLS connection.
//
// Why not libcaf_openssl's own transport: in CAF 0.17.6 it hands a
// connection to the BASP broker before the TLS handshake is done. The
// broker writes its handshake at once; the write "succeeds" with 0 bytes
// while TLS waits for the peer, so the multiplexer thread spins at 100% CPU
// for as long as any peer (one that never even sends a ClientHello) holds a
// connection open; and a connection closed by the broker's connection
// timeout in that state stays open, spinning, until its peer closes it,
// which then also drops another peer's connection. Here a connection
// reaches the broker only once its handshake completed (each side's
// certificate verified), within a deadline; until then the multiplexer
// polls it for the handshake alone.

#include <chrono>
#include <cstddef>

#include <caf/actor_system.hpp>
#include <caf/detail/type_list.hpp>
#include <caf/io/middleman_actor.hpp>

namespace prism::actors {

/// How long an accepted connection may take to complete its TLS handshake,
/// and how long a connect waits for it.
inline constexpr std::chrono::milliseconds tls_handshake_timeout{5000};

/// The most TLS handshakes a port runs at once; a new connection past it
/// ends the oldest.
inline constexpr std::size_t max_tls_handshakes = 256;

/// CAF module (loaded with `cfg.load<tls_transport>()` after the
/// middleman, in CAF's OpenSSL slot) that runs Prism's TLS middleman actor
/// with the credentials of the system's config (`openssl.certificate`,
/// `openssl.key`, `openssl.cafile`).
class tls_transport : public caf::actor_system::module {
public:
  static caf::actor_system::module* make(caf::actor_system& sys,
                                         caf::detail::type_list<>);

  void start() override;
  void stop() override;
  void init(caf::actor_system_config&) override;
  id_t id() const override;
  void* subtype_ptr() override;

  /// The TLS middleman actor of `sys`, or an invalid handle if `sys` runs
  /// none.
  static caf::io::middleman_actor actor_of(caf::actor_system& sys);

private:
  explicit tls_transport(caf::actor_system& sys);

  caf::actor_system& sys_;
  caf::io::middleman_actor actor_;
};

} // namespace prism::actors
