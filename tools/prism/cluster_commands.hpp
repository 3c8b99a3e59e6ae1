#pragma once

// `prism start`, `prism stop` and `prism status`: the processes of a
// cluster on this host, and what the cluster holds.

#include <cstdint>
#include <iosfwd>
#include <string>

namespace prism::tools {

struct start_options {
  /// Start the head (control store and a node), or join `address`.
  bool head = false;
  std::string address;
  std::string host = "127.0.0.1";
  std::uint16_t port = 6380;
  std::string storage;
  /// Where a node keeps programs fetched from the control store.
  std::string program_cache;
  double num_cpus = 0;
  /// Custom resources as a JSON object, e.g. {"GPU": 1}.
  std::string resources;
  bool block = false;
  std::string log_level = "info";
  std::uint32_t heartbeat_interval_ms = 500;
  std::uint32_t connection_timeout_ms = 4000;
  /// How long a node keeps dialing a head it lost before it ends.
  std::uint32_t head_timeout_ms = 60000;
  /// Mutual TLS: this process's certificate and key, and the cluster CA's
  /// certificate; none takes PRISM_TLS_CERT, PRISM_TLS_KEY, PRISM_TLS_CA.
  std::string tls_cert;
  std::string tls_key;
  std::string tls_ca;
  /// The cluster token's file; none takes PRISM_AUTH_TOKEN, then
  /// PRISM_AUTH_TOKEN_FILE, then the session's token file.
  std::string token_file;
  /// Listen beyond loopback without TLS, with a warning at every start.
  bool insecure = false;
  /// Where other processes reach this one when it listens on 0.0.0.0.
  std::string node_ip;
  /// Head: the autoscaler's configuration file; empty: no autoscaler.
  std::string autoscaler;
  /// Whether --host was given (a node's default is the interface it
  /// reaches the head from).
  bool host_given = false;
};

/// Starts a head or a node; without `block`, as a daemon that outlives the
/// command, which returns once it runs. Returns the exit status.
int start_command(const start_options& opts);

/// Stops every process `prism start` started on this host: SIGTERM, then
/// SIGKILL after `grace_ms`. Returns the exit status.
int stop_command(std::uint32_t grace_ms, std::ostream& out);

/// Prints the cluster at `address` ("" for `PRISM_ADDRESS`, then the head
/// started on this host): nodes, jobs, actors and waiting demands.
int status_command(std::string address, std::ostream& out);

} // namespace prism::tools
