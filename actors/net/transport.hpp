#pragma once

// Prism's transport under CAF's middleman: the connections and ports of a
// process that talks to other processes, plain TCP or mutual TLS, with a
// bound on what a peer can make it allocate.
//
// Why not CAF's own: its BASP broker reads a message into a buffer of the
// size the message's header announces, so one header announcing 4 GB made
// a process allocate and zero 4 GB for a peer that sent 32 bytes. Here a
// connection announcing more than a process accepts is closed instead:
// before its BASP handshake the bound is 64 KiB, after it the process's
// `max_message_bytes`.
//
// And why not libcaf_openssl's TLS: in CAF 0.17.6 it hands a connection to
// the broker before the TLS handshake is done. The broker writes its
// handshake at once; the write "succeeds" with 0 bytes while TLS waits for
// the peer, so the multiplexer thread spins at 100% CPU for as long as any
// peer (one that never even sends a ClientHello) holds a connection open;
// and a connection closed by the broker's connection timeout in that state
// stays open, spinning, until its peer closes it, which then also drops
// another peer's connection. Here a TLS connection reaches the broker only
// once its handshake completed (each side's certificate verified), within
// a deadline; until then the multiplexer polls it for the handshake alone.

#include <chrono>
#include <cstddef>

#include <caf/actor_system.hpp>
#include <caf/detail/type_list.hpp>
#include <caf/io/middleman_actor.hpp>

namespace prism::actors {

/// How long an accepted TLS connection may take to complete its handshake,
/// and how long a connect waits for it.
inline constexpr std::chrono::milliseconds tls_handshake_timeout{5000};

/// The most TLS handshakes a port runs at once; a new connection past it
/// ends the oldest.
inline constexpr std::size_t max_tls_handshakes = 256;

/// The most a peer's BASP handshake may announce.
inline constexpr std::size_t max_handshake_message_bytes = 64 * 1024;

/// What a process's transport does, set on its config before its actor
/// system starts (`configure_cluster_process`).
struct transport_settings {
  /// Mutual TLS with the credentials of the config (`openssl.certificate`,
  /// `openssl.key`, `openssl.cafile`), or plain TCP.
  bool tls = false;
  /// The largest message a peer may send once its handshake is done; a
  /// connection that announces a larger one is closed.
  std::size_t max_message_bytes = std::size_t{1} << 30;
};

/// CAF module (`cfg.load<transport>()`, after the middleman; it takes
/// CAF's slot for a TLS module) that runs Prism's middleman actor for the
/// system, with the settings given to `set_transport_settings` for its
/// config.
class transport : public caf::actor_system::module {
public:
  static caf::actor_system::module* make(caf::actor_system& sys,
                                         caf::detail::type_list<>);

  void start() override;
  void stop() override;
  void init(caf::actor_system_config&) override;
  id_t id() const override;
  void* subtype_ptr() override;

  /// Prism's middleman actor of `sys`, or an invalid handle if `sys` runs
  /// none.
  static caf::io::middleman_actor actor_of(caf::actor_system& sys);

  /// Whether the transport of `sys` speaks TLS.
  static bool uses_tls(caf::actor_system& sys);

private:
  explicit transport(caf::actor_system& sys);

  caf::actor_system& sys_;
  caf::io::middleman_actor actor_;
};

/// Gives the transport of the actor system that `cfg` will start
/// `settings`. `cfg` must outlive that system's start.
void set_transport_settings(const caf::actor_system_config& cfg,
                            transport_settings settings);

} // namespace prism::actors
