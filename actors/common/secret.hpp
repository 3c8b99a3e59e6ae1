#pragma once

// Secrets a process compares or makes: tokens that admit a process.

#include <string>

namespace prism::actors {

/// Whether `x` and `y` are equal, in time that depends on their lengths
/// only, never on where they differ.
bool same_secret(const std::string& x, const std::string& y);

/// A new random secret: `bytes` bytes from OpenSSL's generator, in hex.
/// Throws `error(errc::internal)` if the generator fails.
std::string random_secret(std::size_t bytes = 32);

} // namespace prism::actors
