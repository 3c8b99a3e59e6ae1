#pragma once

// How a Prism process speaks to the other processes of its cluster: the
// middleman's settings every process shares, and the addresses it accepts.

#include <chrono>
#include <cstdint>
#include <string>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/expected.hpp>
#include <caf/io/middleman_actor.hpp>

#include "net/tls.hpp"

namespace prism::actors {

/// The wire version of this build. It travels in CAF's handshake
/// (`middleman.app-identifiers`), so a process of a build that speaks
/// another version is refused when it connects, before any message of it is
/// read.
inline constexpr const char* wire_version = "prism-wire-7";

/// How a process finds out that a peer is gone. A peer whose connection
/// drops (the process died, even with SIGKILL) is gone at once; one that
/// stops answering (SIGSTOP, a cut network) is gone once nothing came from it
/// for `connection_timeout`. Both ends send heartbeats every
/// `heartbeat_interval` while idle.
struct network_settings {
  std::chrono::milliseconds heartbeat_interval{500};
  std::chrono::milliseconds connection_timeout{4000};
  /// The largest message a peer may send this process; a connection that
  /// announces a larger one is closed (see `transport.hpp`).
  std::size_t max_message_bytes = std::size_t{1} << 30;
  /// Mutual TLS; none set takes PRISM_TLS_CERT, PRISM_TLS_KEY and
  /// PRISM_TLS_CA (see `resolve_tls`).
  tls_files tls;
};

/// Sets up `cfg` for a process of a cluster: Prism's message types and
/// scheduling policy with `scheduler_threads` threads, the middleman with no
/// BASP worker threads (the multiplexer reads and writes itself: one thread
/// hand-off less per message), heartbeats and the connection timeout, and
/// the wire version, Prism's transport (`transport.hpp`: connections that
/// announce messages over `net.max_message_bytes` are closed), and the
/// open file limit raised. Automatic connections stay off: every
/// connection is one Prism dials. With TLS credentials (`net.tls`, else the
/// environment), it checks them and loads CAF's OpenSSL module: every port the
/// process opens and every connection it makes is then mutual TLS, and no plain
/// port is opened (`publish_actor`, `open_port`, `connection_manager`).
/// Throws `invalid_argument_error` for credentials that cannot be used.
void configure_cluster_process(caf::actor_system_config& cfg,
                               std::size_t scheduler_threads,
                               const network_settings& net);

/// Raises this process's limit of open files to its hard limit: a process
/// of a cluster holds a connection per peer, and a flood of connections
/// must not starve it of sockets for its own.
void raise_open_file_limit();

/// Whether `sys` speaks mutual TLS to other processes.
bool uses_tls(caf::actor_system& sys);

/// The middleman actor that opens ports and connections for `sys`: CAF's
/// OpenSSL one if it speaks TLS, else the plain one.
caf::io::middleman_actor connection_manager(caf::actor_system& sys);

/// Publishes `whom` on `host:port` (0 picks a free port), over TLS if `sys`
/// speaks it; returns the port. `reuse` sets SO_REUSEADDR.
caf::expected<std::uint16_t>
publish_actor(caf::actor_system& sys, const caf::actor& whom,
              std::uint16_t port, const std::string& host, bool reuse = false);

/// Listens on `host:port` for other processes, publishing no actor, over
/// TLS if `sys` speaks it; returns the port. Blocks: not on a scheduler
/// thread.
caf::expected<std::uint16_t> open_port(caf::actor_system& sys,
                                       std::uint16_t port,
                                       const std::string& host, bool reuse);

/// A "host:port" split in two.
struct host_port {
  std::string host;
  std::uint16_t port = 0;
};

/// Parses "host:port" (a port from 0 to 65535). Throws
/// `invalid_argument_error` naming `what` and the text otherwise.
host_port parse_host_port(const std::string& text, const std::string& what);

/// "HOST:PORT".
std::string address_of(const host_port& where);

/// Whether `host` names this machine's loopback interface only:
/// "localhost", 127.0.0.0/8 or ::1.
bool is_loopback(const std::string& host);

/// Throws `invalid_argument_error`, in one line, if a process would listen
/// on `host` beyond loopback with neither `tls` nor `insecure`: CAF's
/// middleman authenticates nobody, so a plain port there lets anyone who
/// reaches it run code on every node. Returns true if the process listens
/// beyond loopback without TLS (`insecure`): its caller warns.
bool check_exposure(const std::string& host, bool tls, bool insecure);

/// Whether PRISM_INSECURE=1 allows listening beyond loopback without TLS.
bool insecure_from_environment();

/// The warning a process logs on every start with `insecure` exposure.
std::string insecure_warning(const std::string& host);

/// Whether `host` is a wildcard address ("0.0.0.0", "::", ""): every
/// interface.
bool is_wildcard(const std::string& host);

/// The address of this machine's interface that connections to `peer`
/// leave from: where a process that dials `peer` can be reached back
/// ("127.0.0.1" for a loopback peer). Falls back to "127.0.0.1" if no route
/// is known.
std::string local_address_toward(const std::string& peer);

/// Whether a Prism process answers at `host:port` within `timeout`: it
/// accepts the connection, completes the TLS handshake if `sys` speaks TLS
/// (each side's certificate signed by the cluster CA), and sends a BASP
/// handshake (a BASP server speaks first) that names this build's wire
/// version. CAF's own connect waits forever on a peer that accepts and
/// stays silent, and says little of a refused certificate or another
/// version, so every connect asks this first. Returns "" if it answered,
/// else why not, naming whose certificate or which versions.
std::string probe_peer(caf::actor_system& sys, const host_port& where,
                       std::chrono::milliseconds timeout);

/// Whether a connect failed because CAF 0.17.6 gave up on it before the
/// peer's handshake arrived: the dialing side keeps no time it last heard
/// from a connection it opened, so a heartbeat tick that comes between the
/// connect and the peer's first answer finds it "silent past the connection
/// timeout" and closes it (`sec::connection_timeout`, within milliseconds).
/// The peer is fine: a dial tries again until its own deadline.
bool closed_before_handshake(const caf::error& err);

/// Connects to the actor published at `where`: probes the peer first (a
/// peer that accepts but never speaks would hang CAF's handshake), then
/// asks the middleman, each within `timeout`; the middleman again while it
/// closes the connection before the handshake (`closed_before_handshake`)
/// and `timeout` has not passed. Returns the actor, or an
/// invalid handle with `why` set. Blocks: not on a scheduler thread.
caf::actor dial_published(caf::actor_system& sys, const host_port& where,
                          std::chrono::milliseconds timeout, std::string& why);

} // namespace prism::actors
