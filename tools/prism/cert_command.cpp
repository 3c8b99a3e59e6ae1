// `prism cert init DIR` and `prism cert issue DIR NAME`: a cluster CA and
// the certificates it signs, made with OpenSSL's library.
//
// Keys are EC P-256. The CA is valid for ten years; a certificate for
// `days` (default 825), for both ends of a connection (serverAuth and
// clientAuth), with NAME as its common name and subject alternative name.
// Private keys are written 0600 in a directory that is 0700.

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <iostream>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <CLI/CLI.hpp>

#include "commands.hpp"

namespace prism::tools {

namespace {

namespace fs = std::filesystem;

struct key_deleter {
  void operator()(EVP_PKEY* k) const {
    EVP_PKEY_free(k);
  }
};
struct cert_deleter {
  void operator()(X509* c) const {
    X509_free(c);
  }
};
using key_ptr = std::unique_ptr<EVP_PKEY, key_deleter>;
using cert_ptr = std::unique_ptr<X509, cert_deleter>;

/// A failure of this command, with OpenSSL's reasons if it has any.
std::runtime_error failure(const std::string& what) {
  std::string reasons;
  while (auto e = ERR_get_error()) {
    const char* r = ERR_reason_error_string(e);
    reasons += std::string{reasons.empty() ? "" : "; "} + (r ? r : "?");
  }
  return std::runtime_error(what +
                            (reasons.empty() ? "" : " (" + reasons + ")"));
}

key_ptr make_key() {
  key_ptr key{EVP_EC_gen("P-256")};
  if (!key)
    throw failure("cannot make a key");
  return key;
}

/// A new certificate for `key` named `name`, valid from now for `days`,
/// with a random 128-bit serial.
cert_ptr make_cert(EVP_PKEY* key, const std::string& name, long days) {
  cert_ptr cert{X509_new()};
  if (!cert || X509_set_version(cert.get(), 2) != 1)
    throw failure("cannot make a certificate");
  unsigned char serial[16];
  if (RAND_bytes(serial, sizeof(serial)) != 1)
    throw failure("cannot draw a serial number");
  serial[0] &= 0x7f; // positive
  std::unique_ptr<BIGNUM, decltype(&BN_free)> bn{
      BN_bin2bn(serial, sizeof(serial), nullptr), &BN_free};
  if (!bn || !BN_to_ASN1_INTEGER(bn.get(), X509_get_serialNumber(cert.get())))
    throw failure("cannot set the serial number");
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -60);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), days * 24 * 3600);
  X509_set_pubkey(cert.get(), key);
  auto* subject = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(subject, "O", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>("Prism"),
                             -1, -1, 0);
  X509_NAME_add_entry_by_txt(
      subject, "CN", MBSTRING_UTF8,
      reinterpret_cast<const unsigned char*>(name.c_str()), -1, -1, 0);
  return cert;
}

/// Adds extension `nid` with `value` (OpenSSL's config syntax), issued by
/// `issuer` (the certificate itself for the CA).
void extend(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  auto* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (ext == nullptr)
    throw failure("cannot add the extension " + value);
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

/// Writes `text` to `path`, created anew with `mode`; refuses to replace a
/// file.
void write_new(const fs::path& path, const std::string& text, mode_t mode) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0)
    throw std::runtime_error("cannot write " + path.string() + ": " +
                             std::strerror(errno) +
                             (errno == EEXIST ? " (it exists already)" : ""));
  std::size_t done = 0;
  while (done < text.size()) {
    auto n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      ::close(fd);
      throw std::runtime_error("cannot write " + path.string() + ": " +
                               std::strerror(errno));
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0)
    throw std::runtime_error("cannot write " + path.string() + ": " +
                             std::strerror(errno));
}

/// PEM text of `write(bio)`.
template <class Write>
std::string pem(Write write) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio{BIO_new(BIO_s_mem()),
                                                &BIO_free};
  if (!bio || write(bio.get()) != 1)
    throw failure("cannot encode PEM");
  char* data = nullptr;
  auto n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(n));
}

void write_key(const fs::path& path, EVP_PKEY* key) {
  write_new(path, pem([&](BIO* b) {
              return PEM_write_bio_PrivateKey(b, key, nullptr, nullptr, 0,
                                              nullptr, nullptr);
            }),
            0600);
}

void write_cert(const fs::path& path, X509* cert) {
  write_new(path, pem([&](BIO* b) { return PEM_write_bio_X509(b, cert); }),
            0644);
}

template <class T, class Read>
T read_pem(const fs::path& path, Read read, const std::string& what) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio{BIO_new_file(path.c_str(), "r"),
                                                &BIO_free};
  if (!bio)
    throw failure("cannot read the CA's " + what + " " + path.string());
  T result{read(bio.get())};
  if (!result)
    throw failure("cannot read the CA's " + what + " " + path.string());
  return result;
}

void sign(X509* cert, EVP_PKEY* key) {
  if (X509_sign(cert, key, EVP_sha256()) == 0)
    throw failure("cannot sign the certificate");
}

/// Whether `name` may name a certificate: a host name or address, which
/// also names its files.
/// Letters, digits, '.', '_' and '-', starting with a letter or digit, at
/// most 63 characters.
bool valid_name(const std::string& name) {
  auto alnum = [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
           (c >= '0' && c <= '9');
  };
  if (name.empty() || name.size() > 63 || !alnum(name.front()) || name == "ca")
    return false;
  return std::all_of(name.begin(), name.end(), [&](char c) {
    return alnum(c) || c == '.' || c == '_' || c == '-';
  });
}

bool is_ip_address(const std::string& name) {
  unsigned char buf[16];
  return ::inet_pton(AF_INET, name.c_str(), buf) == 1 ||
         ::inet_pton(AF_INET6, name.c_str(), buf) == 1;
}

/// Makes a cluster CA in `dir` (created 0700 if need be): `ca.pem`, its
/// certificate, which every process trusts, and `ca.key`, its private key
/// (0600). Refuses a directory that holds a CA already. Returns the exit
/// status.
int cert_init_command(const std::string& dir, std::ostream& out,
                      std::ostream& err) {
  try {
    fs::path d{dir};
    std::error_code ec;
    fs::create_directories(d, ec);
    if (ec)
      throw std::runtime_error("cannot make " + dir + ": " + ec.message());
    fs::permissions(d, fs::perms::owner_all, fs::perm_options::replace, ec);
    if (fs::exists(d / "ca.key") || fs::exists(d / "ca.pem"))
      throw std::runtime_error(dir + " holds a CA already (ca.key, ca.pem); a "
                                     "second would not trust the first one's "
                                     "certificates");
    auto key = make_key();
    unsigned char tag[4];
    RAND_bytes(tag, sizeof(tag));
    char hex[9];
    std::snprintf(hex, sizeof(hex), "%02x%02x%02x%02x", tag[0], tag[1], tag[2],
                  tag[3]);
    auto cert =
        make_cert(key.get(), std::string{"Prism cluster CA "} + hex, 3650);
    X509_set_issuer_name(cert.get(), X509_get_subject_name(cert.get()));
    extend(cert.get(), cert.get(), NID_basic_constraints, "critical,CA:TRUE");
    extend(cert.get(), cert.get(), NID_key_usage,
           "critical,keyCertSign,cRLSign");
    extend(cert.get(), cert.get(), NID_subject_key_identifier, "hash");
    sign(cert.get(), key.get());
    write_key(d / "ca.key", key.get());
    write_cert(d / "ca.pem", cert.get());
    out << "Made the cluster CA in " << dir << ":\n"
        << "  " << (d / "ca.pem").string()
        << "  its certificate: give it to every process (--tls-ca)\n"
        << "  " << (d / "ca.key").string()
        << "  its private key: keep it here, it signs the certificates\n"
        << "Next: prism cert issue " << dir << " NAME, for each host and "
        << "driver\n";
    return 0;
  } catch (const std::exception& e) {
    err << "prism cert init: " << e.what() << std::endl;
    return 1;
  }
}

/// Issues a certificate named `name` (a host name or address), signed by
/// the CA in `dir` and valid for `days`: `NAME.pem` and `NAME.key` (0600)
/// in `dir`, good for both ends of a connection. Refuses to replace files.
/// Returns the exit status.
int cert_issue_command(const std::string& dir, const std::string& name,
                       long days, std::ostream& out, std::ostream& err) {
  try {
    if (!valid_name(name))
      throw std::runtime_error(
          "'" + name +
          "' cannot name a certificate: use a host name or address (letters, "
          "digits, '.', '_' and '-', not 'ca')");
    if (days <= 0)
      throw std::runtime_error("--days must be positive");
    fs::path d{dir};
    auto ca_key = read_pem<key_ptr>(
        d / "ca.key",
        [](BIO* b) {
          return PEM_read_bio_PrivateKey(b, nullptr, nullptr, nullptr);
        },
        "private key");
    auto ca_cert = read_pem<cert_ptr>(
        d / "ca.pem",
        [](BIO* b) { return PEM_read_bio_X509(b, nullptr, nullptr, nullptr); },
        "certificate");
    auto key = make_key();
    auto cert = make_cert(key.get(), name, days);
    X509_set_issuer_name(cert.get(), X509_get_subject_name(ca_cert.get()));
    extend(cert.get(), ca_cert.get(), NID_basic_constraints,
           "critical,CA:FALSE");
    extend(cert.get(), ca_cert.get(), NID_key_usage,
           "critical,digitalSignature,keyAgreement");
    extend(cert.get(), ca_cert.get(), NID_ext_key_usage,
           "serverAuth,clientAuth");
    extend(cert.get(), ca_cert.get(), NID_subject_alt_name,
           (is_ip_address(name) ? "IP:" : "DNS:") + name);
    extend(cert.get(), ca_cert.get(), NID_authority_key_identifier,
           "keyid:always");
    sign(cert.get(), ca_key.get());
    write_key(d / (name + ".key"), key.get());
    write_cert(d / (name + ".pem"), cert.get());
    out << "Issued " << name << " by the CA in " << dir << ", valid for "
        << days << " days:\n"
        << "  --tls-cert " << (d / (name + ".pem")).string() << " --tls-key "
        << (d / (name + ".key")).string() << " --tls-ca "
        << (d / "ca.pem").string() << "\n"
        << "Copy the three files to the host that uses them; the key "
           "stays readable by its owner only.\n";
    return 0;
  } catch (const std::exception& e) {
    err << "prism cert issue: " << e.what() << std::endl;
    return 1;
  }
}

void add_init_command(CLI::App& cert, command_list& commands) {
  auto dir = std::make_shared<std::string>();
  auto* init = cert.add_subcommand(
      "init", "Make a cluster CA in DIR: ca.pem (give it to every process) "
              "and ca.key (keep it here)");
  init->add_option("DIR", *dir, "Where the CA's files go")->required();
  commands.push_back(
      {init, [dir] { return cert_init_command(*dir, std::cout, std::cerr); }});
}

/// What `prism cert issue` was given.
struct issue_options {
  std::string dir;
  std::string name;
  long days = 825;
};

void add_issue_command(CLI::App& cert, command_list& commands) {
  auto opts = std::make_shared<issue_options>();
  auto* issue = cert.add_subcommand(
      "issue", "Issue a certificate NAME.pem and its key NAME.key, signed by "
               "the CA in DIR, for a host or a driver");
  issue->add_option("DIR", opts->dir, "The CA's directory")->required();
  issue
      ->add_option("NAME", opts->name,
                   "The host name or address it names (also its files' name)")
      ->required();
  issue->add_option("--days", opts->days, "How long it is valid")
      ->capture_default_str();
  commands.push_back({issue, [opts] {
                        return cert_issue_command(opts->dir, opts->name,
                                                  opts->days, std::cout,
                                                  std::cerr);
                      }});
}

} // namespace

void add_cert_command(CLI::App& app, command_list& commands) {
  auto* cert = app.add_subcommand(
      "cert", "Make the certificates of a cluster's mutual TLS");
  cert->require_subcommand(1);
  add_init_command(*cert, commands);
  add_issue_command(*cert, commands);
}

} // namespace prism::tools
