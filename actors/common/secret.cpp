#include "common/secret.hpp"

#include <openssl/rand.h>
#include <vector>

#include "prism/error.hpp"

namespace prism::actors {

bool same_secret(const std::string& x, const std::string& y) {
  if (x.size() != y.size())
    return false;
  unsigned char diff = 0;
  for (std::size_t i = 0; i < x.size(); ++i)
    diff |= static_cast<unsigned char>(x[i] ^ y[i]);
  return diff == 0;
}

std::string random_secret(std::size_t bytes) {
  std::vector<unsigned char> raw(bytes);
  if (RAND_bytes(raw.data(), static_cast<int>(raw.size())) != 1)
    throw error(errc::internal, "cannot draw a random secret");
  static constexpr char digits[] = "0123456789abcdef";
  std::string text;
  text.reserve(bytes * 2);
  for (auto b : raw) {
    text += digits[b >> 4];
    text += digits[b & 0xf];
  }
  return text;
}

} // namespace prism::actors
