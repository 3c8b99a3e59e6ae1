#pragma once

// How a Prism process speaks to the other processes of its cluster: the
// middleman's settings every process shares, and the addresses it accepts.

#include <chrono>
#include <cstdint>
#include <string>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

namespace prism::actors {

/// The wire version of this build. It travels in CAF's handshake
/// (`middleman.app-identifiers`), so a process of a build that speaks
/// another version is refused when it connects, before any message of it is
/// read.
inline constexpr const char* wire_version = "prism-wire-2";

/// How a process finds out that a peer is gone. A peer whose connection
/// drops (the process died, even with SIGKILL) is gone at once; one that
/// stops answering (SIGSTOP, a cut network) is gone once nothing came from it
/// for `connection_timeout`. Both ends send heartbeats every
/// `heartbeat_interval` while idle.
struct network_settings {
  std::chrono::milliseconds heartbeat_interval{500};
  std::chrono::milliseconds connection_timeout{4000};
};

/// Sets up `cfg` for a process of a cluster: Prism's message types and
/// scheduling policy with `scheduler_threads` threads, the middleman with no
/// BASP worker threads (the multiplexer reads and writes itself: one thread
/// hand-off less per message), heartbeats and the connection timeout, and
/// the wire version. Automatic connections stay off: every connection is
/// one Prism dials.
void configure_cluster_process(caf::actor_system_config& cfg,
                               std::size_t scheduler_threads,
                               const network_settings& net);

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

/// Throws `invalid_argument_error` unless `host` is a loopback address: a
/// cluster port beyond loopback is open to anyone who can reach it, since
/// CAF's middleman authenticates nobody, and mutual TLS is not available yet.
void require_loopback(const std::string& host);

/// Whether a BASP peer answers at `host:port` within `timeout`: it accepts
/// the connection and sends its first bytes (a BASP server speaks first).
/// CAF's own connect waits forever on a peer that accepts and stays silent,
/// so every connect asks this first. Returns "" if it answered, else why not.
std::string probe_peer(const host_port& where,
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
