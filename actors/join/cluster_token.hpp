#pragma once

// The cluster token: a secret that a node joining a head, and a driver or
// `prism status` attaching to one, presents at the head's door.

#include <string>

namespace prism::actors {

inline constexpr const char* token_variable = "PRISM_AUTH_TOKEN";
inline constexpr const char* token_file_variable = "PRISM_AUTH_TOKEN_FILE";

/// `$PRISM_SESSION_DIR`, or /tmp/prism-<uid>: where `prism start` keeps
/// what it started on this host, the head's token file among it.
std::string session_directory();

/// Whether `dir` is a directory of this user that no other user may write
/// to: the session directory's name is predictable (/tmp/prism-<uid>), and
/// one that another user made first could hand this process their token.
bool is_private_directory(const std::string& dir);

/// The token file a head writes in `session_directory()`.
std::string session_token_file();

/// The token this process presents, from the first source that has one:
/// `given`; PRISM_AUTH_TOKEN; the file `given_file`; the file
/// PRISM_AUTH_TOKEN_FILE; the head's file in this host's session directory
/// (`session_token_file`). "" if none has one. Throws
/// `invalid_argument_error` for a named file that cannot be read or holds
/// no token. Surrounding white space of a file is dropped.
std::string resolve_token(const std::string& given,
                          const std::string& given_file);

/// Writes `token` to `path` (mode 0600, replaced atomically). Throws
/// `invalid_argument_error` if it cannot.
void write_token_file(const std::string& path, const std::string& token);

} // namespace prism::actors
