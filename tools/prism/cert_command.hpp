#pragma once

// `prism cert`: the certificates of a cluster's mutual TLS.

#include <iosfwd>
#include <string>

namespace prism::tools {

/// Makes a cluster CA in `dir` (created 0700 if need be): `ca.pem`, its
/// certificate, which every process trusts, and `ca.key`, its private key
/// (0600). Refuses a directory that holds a CA already. Returns the exit
/// status.
int cert_init_command(const std::string& dir, std::ostream& out,
                      std::ostream& err);

/// Issues a certificate named `name` (a host name or address), signed by
/// the CA in `dir` and valid for `days`: `NAME.pem` and `NAME.key` (0600)
/// in `dir`, good for both ends of a connection. Refuses to replace files.
/// Returns the exit status.
int cert_issue_command(const std::string& dir, const std::string& name,
                       long days, std::ostream& out, std::ostream& err);

} // namespace prism::tools
