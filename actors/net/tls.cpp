#include "net/tls.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <poll.h>
#include <sys/socket.h>

#include <caf/actor_system_config.hpp>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include "prism/error.hpp"

namespace prism::actors {

namespace {

std::string tls_variable(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

/// The reasons on OpenSSL's error queue of this thread, which it empties.
std::string openssl_errors() {
  std::string result;
  while (auto e = ERR_get_error()) {
    const char* reason = ERR_reason_error_string(e);
    if (!result.empty())
      result += "; ";
    result += reason != nullptr ? reason : "error " + std::to_string(e);
  }
  return result.empty() ? "no reason given" : result;
}

struct context_deleter {
  void operator()(SSL_CTX* ctx) const {
    SSL_CTX_free(ctx);
  }
};
using context_ptr = std::unique_ptr<SSL_CTX, context_deleter>;

/// A context with `files` loaded and checked, for both ends of a
/// connection; throws `invalid_argument_error` naming the bad file.
context_ptr load_context(const tls_files& files) {
  ERR_clear_error();
  context_ptr ctx{SSL_CTX_new(TLS_method())};
  if (!ctx)
    throw invalid_argument_error("cannot set up TLS: " + openssl_errors());
  auto bad = [&](const std::string& what, const std::string& file) {
    return invalid_argument_error("TLS: cannot use " + what + " '" + file +
                                  "': " + openssl_errors());
  };
  if (SSL_CTX_use_certificate_chain_file(ctx.get(), files.cert.c_str()) != 1)
    throw bad("the certificate", files.cert);
  if (SSL_CTX_use_PrivateKey_file(ctx.get(), files.key.c_str(),
                                  SSL_FILETYPE_PEM) != 1)
    throw bad("the private key", files.key);
  if (SSL_CTX_check_private_key(ctx.get()) != 1)
    throw invalid_argument_error("TLS: the private key '" + files.key +
                                 "' is not the key of the certificate '" +
                                 files.cert + "'");
  if (SSL_CTX_load_verify_locations(ctx.get(), files.ca.c_str(), nullptr) != 1)
    throw bad("the CA certificate", files.ca);
  SSL_CTX_set_verify(
      ctx.get(), SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  SSL_CTX_set_min_proto_version(ctx.get(), TLS1_3_VERSION);
  // CAF's streams write what the socket takes and keep the rest in place.
  SSL_CTX_set_mode(ctx.get(), SSL_MODE_ENABLE_PARTIAL_WRITE |
                                  SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  SSL_CTX_set_session_cache_mode(ctx.get(), SSL_SESS_CACHE_OFF);
  SSL_CTX_set_num_tickets(ctx.get(), 0);
  return ctx;
}

// -- a socket BIO that never raises SIGPIPE ----------------------------------

int socket_write(BIO* bio, const char* buf, int len) {
  BIO_clear_retry_flags(bio);
  auto n = ::send(BIO_get_fd(bio, nullptr), buf, static_cast<std::size_t>(len),
                  MSG_NOSIGNAL);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
    BIO_set_retry_write(bio);
  return static_cast<int>(n);
}

int socket_read(BIO* bio, char* buf, int len) {
  BIO_clear_retry_flags(bio);
  auto n =
      ::recv(BIO_get_fd(bio, nullptr), buf, static_cast<std::size_t>(len), 0);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
    BIO_set_retry_read(bio);
  return static_cast<int>(n);
}

int socket_puts(BIO* bio, const char* text) {
  return socket_write(bio, text, static_cast<int>(std::strlen(text)));
}

/// OpenSSL's socket BIO, with reads and writes of its own: `send` with
/// MSG_NOSIGNAL, so that a peer gone mid-write costs an error, not the
/// process.
const BIO_METHOD* quiet_socket_method() {
  static BIO_METHOD* method = [] {
    auto* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK |
                               BIO_TYPE_DESCRIPTOR,
                           "prism socket");
    const BIO_METHOD* plain = BIO_s_socket();
    BIO_meth_set_write(m, socket_write);
    BIO_meth_set_read(m, socket_read);
    BIO_meth_set_puts(m, socket_puts);
    BIO_meth_set_ctrl(m, BIO_meth_get_ctrl(plain));
    BIO_meth_set_create(m, BIO_meth_get_create(plain));
    BIO_meth_set_destroy(m, BIO_meth_get_destroy(plain));
    return m;
  }();
  return method;
}

} // namespace

bool wait_for_socket(int fd, short events,
                     std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      return false;
    pollfd p{fd, events, 0};
    int n = ::poll(&p, 1, static_cast<int>(left.count()));
    if (n > 0)
      return true;
    if (n < 0 && errno != EINTR)
      return false;
  }
}

tls_files resolve_tls(const tls_files& given) {
  auto result = given;
  if (!result.enabled())
    result = tls_files{tls_variable(tls_cert_variable),
                       tls_variable(tls_key_variable),
                       tls_variable(tls_ca_variable)};
  if (!result.enabled())
    return result;
  std::string missing;
  auto need = [&](const std::string& file, const char* what) {
    if (file.empty())
      missing += missing.empty() ? what : std::string{", "} + what;
  };
  need(result.cert, "the certificate (--tls-cert, PRISM_TLS_CERT)");
  need(result.key, "its private key (--tls-key, PRISM_TLS_KEY)");
  need(result.ca, "the cluster CA's certificate (--tls-ca, PRISM_TLS_CA)");
  if (!missing.empty())
    throw invalid_argument_error(
        "mutual TLS needs a certificate, its key and the cluster CA's "
        "certificate; missing: " +
        missing);
  return result;
}

void check_tls_files(const tls_files& files) {
  auto ctx = load_context(files);
  auto* store = SSL_CTX_get_cert_store(ctx.get());
  auto* cert = SSL_CTX_get0_certificate(ctx.get());
  std::unique_ptr<X509_STORE_CTX, decltype(&X509_STORE_CTX_free)> check{
      X509_STORE_CTX_new(), &X509_STORE_CTX_free};
  if (!check || X509_STORE_CTX_init(check.get(), store, cert, nullptr) != 1)
    throw invalid_argument_error("TLS: cannot check the certificate: " +
                                 openssl_errors());
  if (X509_verify_cert(check.get()) != 1)
    throw invalid_argument_error(
        "TLS: the certificate '" + files.cert +
        "' does not verify against the CA certificate '" + files.ca + "': " +
        X509_verify_cert_error_string(X509_STORE_CTX_get_error(check.get())));
}

tls_files tls_of(const caf::actor_system_config& cfg) {
  return tls_files{cfg.openssl_certificate, cfg.openssl_key,
                   cfg.openssl_cafile};
}

std::vector<std::string> tls_environment(const tls_files& files) {
  if (!files.enabled())
    return {};
  auto absolute = [](const std::string& path) {
    std::error_code ec;
    auto p = std::filesystem::absolute(path, ec);
    return ec ? path : p.string();
  };
  return {std::string{tls_cert_variable} + "=" + absolute(files.cert),
          std::string{tls_key_variable} + "=" + absolute(files.key),
          std::string{tls_ca_variable} + "=" + absolute(files.ca)};
}

// -- tls_context
// ---------------------------------------------------------------

tls_context::tls_context(const tls_files& files)
    : ctx_(load_context(files).release()) {}

tls_context::~tls_context() {
  SSL_CTX_free(ctx_);
}

SSL* tls_context::new_session(int fd, bool accepting) const {
  SSL* ssl = SSL_new(ctx_);
  if (ssl == nullptr)
    return nullptr;
  BIO* bio = BIO_new(quiet_socket_method());
  if (bio == nullptr) {
    SSL_free(ssl);
    return nullptr;
  }
  BIO_set_fd(bio, fd, BIO_NOCLOSE);
  SSL_set_bio(ssl, bio, bio);
  if (accepting)
    SSL_set_accept_state(ssl);
  else
    SSL_set_connect_state(ssl);
  return ssl;
}

std::string tls_failure(SSL* ssl, int rc) {
  auto code = SSL_get_error(ssl, rc);
  auto verified = SSL_get_verify_result(ssl);
  if (verified != X509_V_OK) {
    ERR_clear_error();
    std::string reason = X509_verify_cert_error_string(verified);
    switch (verified) {
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    case X509_V_ERR_CERT_SIGNATURE_FAILURE:
      return "its certificate is not signed by this process's cluster CA "
             "(" +
             reason + ")";
    default:
      return "its certificate is refused (" + reason + ")";
    }
  }
  if (code == SSL_ERROR_ZERO_RETURN ||
      (code == SSL_ERROR_SYSCALL && ERR_peek_error() == 0))
    return SSL_is_init_finished(ssl)
               ? "it closed the connection"
               : "it closed the connection during the TLS handshake";
  auto reasons = openssl_errors();
  if (reasons.find("alert") != std::string::npos)
    return "it refused this process's certificate (" + reasons +
           "): is it signed by the cluster's CA?";
  if (reasons.find("wrong version number") != std::string::npos ||
      reasons.find("packet length too long") != std::string::npos ||
      reasons.find("record layer failure") != std::string::npos)
    return "it does not speak TLS (" + reasons +
           "): a process started without TLS?";
  return "TLS failed: " + reasons;
}

namespace {

/// Waits as the failed call on `ssl` that returned `rc` asks; false if it
/// asks for no wait, or the deadline passed.
bool wait_for_tls(SSL* ssl, int rc,
                  std::chrono::steady_clock::time_point deadline) {
  switch (SSL_get_error(ssl, rc)) {
  case SSL_ERROR_WANT_READ:
    return wait_for_socket(SSL_get_fd(ssl), POLLIN, deadline);
  case SSL_ERROR_WANT_WRITE:
    return wait_for_socket(SSL_get_fd(ssl), POLLOUT, deadline);
  default:
    return false;
  }
}

bool wants_io(SSL* ssl, int rc) {
  auto code = SSL_get_error(ssl, rc);
  return code == SSL_ERROR_WANT_READ || code == SSL_ERROR_WANT_WRITE;
}

} // namespace

std::string tls_handshake(SSL* ssl,
                          std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    ERR_clear_error();
    int rc = SSL_do_handshake(ssl);
    if (rc == 1)
      return "";
    if (!wants_io(ssl, rc))
      return tls_failure(ssl, rc);
    if (!wait_for_tls(ssl, rc, deadline))
      return "no TLS handshake by the deadline";
  }
}

// -- tls_client ---------------------------------------------------------------

struct tls_client::impl {
  std::unique_ptr<tls_context> ctx;
  SSL* ssl = nullptr;

  ~impl() {
    SSL_free(ssl);
  }
};

tls_client::tls_client(const tls_files& files) : impl_(new impl) {
  impl_->ctx = std::make_unique<tls_context>(files);
}

tls_client::~tls_client() = default;

std::string
tls_client::handshake(int fd, std::chrono::steady_clock::time_point deadline) {
  impl_->ssl = impl_->ctx->new_session(fd, false);
  if (impl_->ssl == nullptr)
    return "cannot set up TLS: " + openssl_errors();
  return tls_handshake(impl_->ssl, deadline);
}

std::string tls_client::read(char* buf, std::size_t n,
                             std::chrono::steady_clock::time_point deadline) {
  std::size_t done = 0;
  while (done < n) {
    ERR_clear_error();
    int rc = SSL_read(impl_->ssl, buf + done, static_cast<int>(n - done));
    if (rc > 0) {
      done += static_cast<std::size_t>(rc);
      continue;
    }
    if (!wants_io(impl_->ssl, rc))
      return tls_failure(impl_->ssl, rc);
    if (!wait_for_tls(impl_->ssl, rc, deadline))
      return "it did not speak by the deadline";
  }
  return "";
}

} // namespace prism::actors
