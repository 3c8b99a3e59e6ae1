// detail::encode / detail::decode: values survive a round trip, and bad
// input is reported as an error, never a crash.

#include <boost/test/unit_test.hpp>

#include <climits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <sys/mman.h>

#include "prism/detail/value.hpp"

namespace value_codec_test {

struct point {
  int x = 0;
  int y = 0;
  std::string label;

  friend bool operator==(const point&, const point&) = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, point& p) {
  return f(p.x, p.y, p.label);
}

template <class T>
T round_trip(const T& x) {
  return prism::detail::decode<T>(prism::detail::encode(x));
}

/// The payload of `v`, copied.
prism::detail::byte_buffer as_buffer(const prism::detail::value& v) {
  return {v.bytes.begin(), v.bytes.end()};
}

/// Returns `v` with its payload cut to its first `size` bytes.
prism::detail::value truncated(const prism::detail::value& v,
                               std::size_t size) {
  auto bytes = std::make_shared<prism::detail::byte_buffer>(
      v.bytes.begin(), v.bytes.begin() + static_cast<std::ptrdiff_t>(size));
  return prism::detail::value{v.tag, std::move(bytes), {}};
}

using namespace value_codec_test;
using prism::detail::decode;
using prism::detail::encode;

BOOST_AUTO_TEST_SUITE(value_codec)

// -- round trips
// ---------------------------------------------------------------

BOOST_AUTO_TEST_CASE(int_round_trips) {
  for (int x : {0, 1, -1, 42, INT_MIN, INT_MAX})
    BOOST_TEST(round_trip(x) == x);
}

BOOST_AUTO_TEST_CASE(double_round_trips) {
  for (double x : {0.0, -0.5, 3.141592653589793, 1e300, -1e-300})
    BOOST_TEST(round_trip(x) == x);
}

BOOST_AUTO_TEST_CASE(string_round_trips) {
  std::string s{"hello, prism"};
  BOOST_TEST(round_trip(s) == s);
}

BOOST_AUTO_TEST_CASE(string_with_embedded_nul_round_trips) {
  std::string s{"a\0b", 3};
  BOOST_TEST(round_trip(s) == s);
}

BOOST_AUTO_TEST_CASE(vector_of_strings_round_trips) {
  std::vector<std::string> xs{"one", "", "three"};
  BOOST_TEST(round_trip(xs) == xs, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(map_of_string_to_vector_of_int_round_trips) {
  std::map<std::string, std::vector<int>> m{
      {"empty", {}}, {"one", {1}}, {"many", {1, 2, 3}}};
  BOOST_TEST((round_trip(m) == m));
}

BOOST_AUTO_TEST_CASE(user_struct_round_trips) {
  point p{3, -4, "corner"};
  BOOST_TEST((round_trip(p) == p));
}

BOOST_AUTO_TEST_CASE(nested_vectors_round_trip) {
  std::vector<std::vector<int>> xs{{1, 2}, {}, {3}};
  BOOST_TEST((round_trip(xs) == xs));
}

BOOST_AUTO_TEST_CASE(empty_vector_round_trips) {
  BOOST_TEST(round_trip(std::vector<int>{}).empty());
}

BOOST_AUTO_TEST_CASE(vector_of_100000_doubles_round_trips) {
  std::vector<double> xs(100'000);
  for (std::size_t i = 0; i < xs.size(); ++i)
    xs[i] = static_cast<double>(i) / 3.0;
  BOOST_TEST((round_trip(xs) == xs));
}

// -- type tags
// -----------------------------------------------------------------

BOOST_AUTO_TEST_CASE(encode_tags_the_value_with_its_type) {
  BOOST_TEST(encode(42).tag == prism::detail::type_tag<int>());
  BOOST_TEST(encode(std::string{"x"}).tag ==
             prism::detail::type_tag<std::string>());
}

BOOST_AUTO_TEST_CASE(different_types_have_different_tags) {
  BOOST_TEST(prism::detail::type_tag<int>() != prism::detail::type_tag<long>());
  BOOST_TEST(prism::detail::type_tag<int>() !=
             prism::detail::type_tag<std::string>());
  BOOST_TEST(prism::detail::type_tag<std::vector<int>>() !=
             prism::detail::type_tag<std::vector<long>>());
}

BOOST_AUTO_TEST_CASE(no_type_has_the_void_tag) {
  BOOST_TEST(prism::detail::type_tag<int>() != prism::detail::void_tag);
  BOOST_TEST(prism::detail::type_tag<point>() != prism::detail::void_tag);
}

BOOST_AUTO_TEST_CASE(type_tag_name_is_the_demangled_type_name) {
  BOOST_TEST(prism::detail::type_tag_name(prism::detail::type_tag<int>()) ==
             "int");
  BOOST_TEST(prism::detail::type_tag_name(prism::detail::type_tag<point>()) ==
             "value_codec_test::point");
}

BOOST_AUTO_TEST_CASE(equal_values_encode_to_equal_values) {
  BOOST_TEST((encode(std::string{"same"}) == encode(std::string{"same"})));
  BOOST_TEST(!(encode(1) == encode(2)));
}

// -- bad input
// -----------------------------------------------------------------

BOOST_AUTO_TEST_CASE(decoding_as_another_type_throws_type_mismatch_error) {
  auto v = encode(42);
  BOOST_CHECK_THROW(decode<std::string>(v), prism::type_mismatch_error);
}

BOOST_AUTO_TEST_CASE(decoding_a_void_value_throws_type_mismatch_error) {
  BOOST_CHECK_THROW(decode<int>(prism::detail::value{}),
                    prism::type_mismatch_error);
}

BOOST_AUTO_TEST_CASE(decoding_truncated_bytes_throws_error) {
  auto v = encode(std::string{"a string long enough to cut"});
  auto cut = truncated(v, v.size() - 5);
  try {
    decode<std::string>(cut);
    BOOST_FAIL("decoded a truncated string");
  } catch (const prism::type_mismatch_error&) {
    BOOST_FAIL("the tag is right; only the bytes are short");
  } catch (const prism::error& e) {
    BOOST_TEST((e.code() == prism::errc::internal));
  }
}

BOOST_AUTO_TEST_CASE(decoding_a_truncated_vector_throws_error) {
  auto v = encode(std::vector<double>{1.0, 2.0, 3.0});
  BOOST_CHECK_THROW(decode<std::vector<double>>(truncated(v, v.size() - 1)),
                    prism::error);
}

BOOST_AUTO_TEST_CASE(decoding_an_empty_payload_throws_error) {
  auto v = encode(std::vector<int>{1, 2, 3});
  BOOST_CHECK_THROW(decode<std::vector<int>>(truncated(v, 0)), prism::error);
}

BOOST_AUTO_TEST_CASE(decoding_bytes_with_trailing_garbage_throws_error) {
  auto v = encode(7);
  auto bytes = std::make_shared<prism::detail::byte_buffer>(v.bytes.begin(),
                                                            v.bytes.end());
  bytes->push_back('x');
  prism::detail::value padded{v.tag, std::move(bytes), {}};
  BOOST_CHECK_THROW(decode<int>(padded), prism::error);
}

// -- large values: written as CAF writes them, read into room made first

/// A string of `n` bytes that no two offsets of 256 share by chance.
std::string patterned(std::size_t n) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i)
    s[i] = static_cast<char>((i * 7 + i / 4096) & 0xff);
  return s;
}

/// `xs`, one after the other, as CAF's own serializer writes them.
template <class... Ts>
prism::detail::byte_buffer cafs_bytes(Ts... xs) {
  prism::detail::byte_buffer out;
  caf::binary_serializer sink{static_cast<caf::execution_unit*>(nullptr), out};
  BOOST_REQUIRE(!sink(xs...));
  return out;
}

BOOST_AUTO_TEST_CASE(a_large_string_round_trips_in_cafs_bytes) {
  auto big = patterned(prism::detail::large_buffer_bytes + 12345);
  auto v = encode(big);
  BOOST_TEST((as_buffer(v) == cafs_bytes(big)));
  BOOST_TEST((decode<std::string>(v) == big));
  // Cut short, or with its length past its end: an error, not a read.
  BOOST_CHECK_THROW(decode<std::string>(truncated(v, v.size() - 1)),
                    prism::error);
  BOOST_CHECK_THROW(decode<std::string>(truncated(v, 3)), prism::error);
}

BOOST_AUTO_TEST_CASE(values_large_and_small_cross_cafs_serializer_unchanged) {
  for (std::size_t n : {std::size_t{0}, std::size_t{9},
                        prism::detail::large_buffer_bytes + 1}) {
    auto v = encode(patterned(n));
    v.refs.push_back(prism::detail::contained_ref{});
    auto bytes = cafs_bytes(v);
    // As CAF writes the parts: the tag, the bytes, the refs.
    BOOST_TEST((bytes == cafs_bytes(v.tag, as_buffer(v), v.refs)));
    prism::detail::value back;
    caf::binary_deserializer src{static_cast<caf::execution_unit*>(nullptr),
                                 bytes};
    BOOST_REQUIRE(!src(back));
    BOOST_TEST(src.remaining() == 0u);
    BOOST_TEST((back == v));
    BOOST_TEST(back.refs.size() == 1u);
    // Cut anywhere: an error, never a read past the end.
    for (auto cut : {bytes.size() - 1, bytes.size() / 2, std::size_t{5}}) {
      prism::detail::byte_buffer part(
          bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(cut));
      prism::detail::value damaged;
      caf::binary_deserializer bad{static_cast<caf::execution_unit*>(nullptr),
                                   part};
      BOOST_TEST(static_cast<bool>(bad(damaged)));
    }
  }
}

// Pages of `n` bytes at `p` the process has in memory now.
std::size_t resident_pages(void* p, std::size_t n) {
  std::vector<unsigned char> in((n + 4095) / 4096);
  BOOST_REQUIRE(::mincore(p, n, in.data()) == 0);
  std::size_t count = 0;
  for (auto page : in)
    count += page & 1;
  return count;
}

BOOST_AUTO_TEST_CASE(a_large_fresh_buffer_is_faulted_in_aside_but_its_front) {
  std::size_t n = prism::detail::parallel_fault_bytes * 4;
  void* p = ::mmap(nullptr, n, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  BOOST_REQUIRE(p != MAP_FAILED);
  auto* bytes = static_cast<char*>(p);
  BOOST_TEST(resident_pages(p, n) == 0u);
  { prism::detail::tail_prefault faults{p, n}; }
  // All but the first eighth is in memory, that left to the writer (a huge
  // page across its end may take in up to 2 MB before it).
  BOOST_TEST(resident_pages(bytes + n / 8, n - n / 8) == (n - n / 8) / 4096);
  BOOST_TEST(resident_pages(p, n / 16) == 0u);
  // Below the threshold, nothing is done.
  { prism::detail::tail_prefault none{p, n / 16}; }
  BOOST_TEST(resident_pages(p, n / 16) == 0u);
  ::munmap(p, n);
}

// A value whose length says more bytes than the message holds (a hostile
// peer's) is refused before anything is allocated for them.
BOOST_AUTO_TEST_CASE(a_value_longer_than_its_bytes_is_refused_at_once) {
  prism::detail::byte_buffer bytes;
  caf::binary_serializer sink{static_cast<caf::execution_unit*>(nullptr),
                              bytes};
  std::uint64_t tag = 1;
  std::size_t claimed = std::size_t{1} << 31;
  BOOST_REQUIRE(!sink(tag));
  BOOST_REQUIRE(!sink.begin_sequence(claimed));
  bytes.push_back('x');
  prism::detail::value v;
  caf::binary_deserializer src{static_cast<caf::execution_unit*>(nullptr),
                               bytes};
  BOOST_TEST(static_cast<bool>(src(v)));
  BOOST_TEST(v.size() == 0u);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace value_codec_test
