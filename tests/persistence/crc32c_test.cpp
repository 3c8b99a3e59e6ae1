// The CRC32C that checks every record of a store's logs before it opens:
// the processor's instruction, where it is used, agrees with the table and
// with the standard's check value, at every length and alignment.

#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <random>
#include <string>

#include "crc32c.hpp"

namespace crc32c_test {

using prism::persistence::crc32c;
using prism::persistence::crc32c_by_table;

BOOST_AUTO_TEST_SUITE(crc32c_checksums)

BOOST_AUTO_TEST_CASE(check_value_of_the_standard) {
  BOOST_TEST(crc32c("123456789") == 0xE3069283u);
  BOOST_TEST(crc32c_by_table("123456789") == 0xE3069283u);
  BOOST_TEST(crc32c("") == 0u);
  BOOST_TEST(crc32c(std::string(32, '\0')) == 0x8A9136AAu);
}

BOOST_AUTO_TEST_CASE(agrees_with_the_table_at_every_length_and_alignment) {
  std::mt19937_64 rng{42};
  std::string bytes(4096 + 16, '\0');
  for (auto& c : bytes)
    c = static_cast<char>(rng());
  for (std::size_t offset = 0; offset < 16; ++offset)
    for (std::size_t n = 0; n <= 300; ++n) {
      std::string_view v{bytes.data() + offset, n};
      BOOST_TEST_REQUIRE(crc32c(v) == crc32c_by_table(v),
                         "offset " << offset << ", length " << n);
    }
  std::string_view all{bytes.data() + 3, 4096};
  BOOST_TEST(crc32c(all) == crc32c_by_table(all));
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace crc32c_test
