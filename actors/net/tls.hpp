#pragma once

// Mutual TLS between the processes of a cluster: the credentials a process
// presents and checks, the sessions of its connections (`transport.hpp`),
// and a client session for the probes that come before each connection.

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace caf {
class actor_system_config;
} // namespace caf

struct ssl_st;
struct ssl_ctx_st;

namespace prism::actors {

inline constexpr const char* tls_cert_variable = "PRISM_TLS_CERT";
inline constexpr const char* tls_key_variable = "PRISM_TLS_KEY";
inline constexpr const char* tls_ca_variable = "PRISM_TLS_CA";

/// A process's credentials for mutual TLS, as PEM files: its certificate,
/// its private key, and the cluster CA's certificate, which signed the
/// certificate of every process it accepts or connects to.
struct tls_files {
  std::string cert;
  std::string key;
  std::string ca;

  /// Whether any file is set.
  bool enabled() const {
    return !cert.empty() || !key.empty() || !ca.empty();
  }
};

/// Waits for `events` (poll's POLLIN, POLLOUT) on the socket `fd` until
/// `deadline`; false on timeout or error.
bool wait_for_socket(int fd, short events,
                     std::chrono::steady_clock::time_point deadline);

/// `given` if it sets any file, else the files named by PRISM_TLS_CERT,
/// PRISM_TLS_KEY and PRISM_TLS_CA. Throws `invalid_argument_error` unless
/// the result sets all three or none.
tls_files resolve_tls(const tls_files& given);

/// Loads `files` the way a connection will: throws `invalid_argument_error`
/// naming the file and what is wrong with it (unreadable, not PEM, a key
/// that does not match the certificate, a certificate that the CA did not
/// sign or that is not valid now). REQUIRES: `files.enabled()`.
void check_tls_files(const tls_files& files);

/// The credentials that `cfg` was set up with (`configure_cluster_process`),
/// none if it speaks plain TCP.
tls_files tls_of(const caf::actor_system_config& cfg);

/// "NAME=value" entries that hand `files` on to a process this one starts
/// (PRISM_TLS_*, as absolute paths); none if `files` is not enabled.
std::vector<std::string> tls_environment(const tls_files& files);

/// The credentials of a process, loaded once, from which each of its TLS
/// connections is made: TLS 1.3 only, each side's certificate required and
/// verified against the cluster CA (no host name check: the CA is the
/// cluster's own, and any certificate it signed belongs to the cluster).
class tls_context {
public:
  /// Throws `invalid_argument_error` if `files` cannot be loaded.
  explicit tls_context(const tls_files& files);
  ~tls_context();

  tls_context(const tls_context&) = delete;
  tls_context& operator=(const tls_context&) = delete;

  /// A new session on the non-blocking socket `fd` (which it does not own),
  /// on the accepting side if `accepting`, else the connecting side; its
  /// reads and writes never raise SIGPIPE. nullptr if OpenSSL fails. The
  /// caller frees it (`SSL_free`).
  ssl_st* new_session(int fd, bool accepting) const;

private:
  ssl_ctx_st* ctx_;
};

/// Runs the handshake of `ssl` on its non-blocking socket until `deadline`:
/// "" once the peer is verified, else why not, in words that say whose
/// certificate was refused.
std::string tls_handshake(ssl_st* ssl,
                          std::chrono::steady_clock::time_point deadline);

/// Why the TLS call on `ssl` that returned `rc` failed, in words that say
/// whose certificate was refused; empties OpenSSL's error queue.
std::string tls_failure(ssl_st* ssl, int rc);

/// The client side of a TLS connection on a socket someone else connected
/// and owns, with `files` as credentials; for probes that read a peer's
/// first bytes before CAF connects. Every call ends by its deadline.
class tls_client {
public:
  /// Throws `invalid_argument_error` if `files` cannot be loaded.
  explicit tls_client(const tls_files& files);
  ~tls_client();

  tls_client(const tls_client&) = delete;
  tls_client& operator=(const tls_client&) = delete;

  /// Runs the handshake on the non-blocking socket `fd`. Returns "" once
  /// the peer is verified, else why not, in words that say whose
  /// certificate was refused.
  std::string handshake(int fd, std::chrono::steady_clock::time_point deadline);

  /// Reads exactly `n` bytes into `buf`. Returns "" or why not (including
  /// the peer's refusal of this side's certificate, which TLS 1.3 reports
  /// only after the handshake).
  std::string read(char* buf, std::size_t n,
                   std::chrono::steady_clock::time_point deadline);

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace prism::actors
