#include "crc32c.hpp"

#include <cstring>

#include <boost/crc.hpp>

#if defined(__x86_64__)
#  include <nmmintrin.h>
#endif

namespace prism::persistence {

namespace {

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) std::uint32_t
by_instruction(std::string_view bytes) noexcept {
  const char* p = bytes.data();
  auto n = bytes.size();
  std::uint64_t c = 0xFFFFFFFFu;
  for (; n >= 8; p += 8, n -= 8) {
    std::uint64_t word;
    std::memcpy(&word, p, 8);
    c = _mm_crc32_u64(c, word);
  }
  auto c32 = static_cast<std::uint32_t>(c);
  for (; n > 0; ++p, --n)
    c32 = _mm_crc32_u8(c32, static_cast<unsigned char>(*p));
  return c32 ^ 0xFFFFFFFFu;
}

const bool has_instruction = __builtin_cpu_supports("sse4.2");
#endif

} // namespace

std::uint32_t crc32c_by_table(std::string_view bytes) noexcept {
  boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true> crc;
  crc.process_bytes(bytes.data(), bytes.size());
  return crc.checksum();
}

std::uint32_t crc32c(std::string_view bytes) noexcept {
#if defined(__x86_64__)
  if (has_instruction)
    return by_instruction(bytes);
#endif
  return crc32c_by_table(bytes);
}

} // namespace prism::persistence
