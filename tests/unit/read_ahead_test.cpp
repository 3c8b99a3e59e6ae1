// The read-ahead of Prism's connections (net/connection.hpp): bytes that one
// read took from the socket are handed out as the stream asks, in order, and
// the stream is told to read on while any wait; a large read with nothing
// waiting goes straight to the caller's buffer.

#include <boost/test/unit_test.hpp>

#include <cstring>
#include <string>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

#include "net/connection.hpp"

namespace read_ahead_test {

using prism::actors::read_ahead;
namespace net = caf::io::network;

/// A connected pair of stream sockets, the reading end non-blocking.
struct socket_pair {
  socket_pair() {
    BOOST_REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds) ==
                  0);
  }

  ~socket_pair() {
    ::close(fds[0]);
    ::close(fds[1]);
  }

  void send(const std::string& bytes) const {
    BOOST_REQUIRE(::write(fds[1], bytes.data(), bytes.size()) ==
                  static_cast<ssize_t>(bytes.size()));
  }

  int fds[2] = {-1, -1};
};

/// Reads `n` bytes as the stream would ask for them; "" if the read did not
/// give exactly that many.
std::string read(read_ahead<caf::policy::tcp>& policy, int fd, std::size_t n) {
  std::string buf(n, '\0');
  std::size_t got = 0;
  auto state = policy.read_some(got, fd, buf.data(), n);
  if (state != net::rw_state::success || got != n)
    return "";
  return buf;
}

BOOST_AUTO_TEST_SUITE(read_ahead_suite)

BOOST_AUTO_TEST_CASE(bytes_read_ahead_come_out_in_order_as_asked) {
  socket_pair s;
  read_ahead<caf::policy::tcp> policy;
  // Three messages of a header and a payload each, in one write.
  s.send("HDR1payload-oneHDR2payload-twoHDR3");
  BOOST_TEST(!policy.must_read_more(s.fds[0], 4));
  BOOST_TEST(read(policy, s.fds[0], 4) == "HDR1");
  // The socket is drained into the buffer: the stream must read on.
  BOOST_TEST(policy.must_read_more(s.fds[0], 11));
  BOOST_TEST(read(policy, s.fds[0], 11) == "payload-one");
  BOOST_TEST(read(policy, s.fds[0], 4) == "HDR2");
  BOOST_TEST(read(policy, s.fds[0], 11) == "payload-two");
  BOOST_TEST(read(policy, s.fds[0], 4) == "HDR3");
  BOOST_TEST(!policy.must_read_more(s.fds[0], 4));
  // Nothing more: a read gives nothing, and says the socket is fine.
  std::size_t got = 1;
  char c = 0;
  BOOST_TEST(
      (policy.read_some(got, s.fds[0], &c, 1) == net::rw_state::success));
  BOOST_TEST(got == 0u);
  // A part that arrives later completes what is asked for in pieces.
  s.send("payload-three");
  std::string rest(13, '\0');
  BOOST_TEST((policy.read_some(got, s.fds[0], rest.data(), 13) ==
              net::rw_state::success));
  BOOST_TEST(rest.substr(0, got) ==
             std::string{"payload-three"}.substr(0, got));
}

BOOST_AUTO_TEST_CASE(a_large_read_with_nothing_ahead_goes_straight_through) {
  socket_pair s;
  read_ahead<caf::policy::tcp> policy;
  std::string big(read_ahead<caf::policy::tcp>::capacity + 100, 'x');
  for (std::size_t i = 0; i < big.size(); ++i)
    big[i] = static_cast<char>('a' + i % 26);
  // Written in two parts, each fits the socket's buffer.
  s.send(big.substr(0, 60000));
  std::string got_all;
  std::vector<char> buf(big.size());
  std::size_t got = 0;
  BOOST_TEST((policy.read_some(got, s.fds[0], buf.data(), buf.size()) ==
              net::rw_state::success));
  BOOST_TEST(got == 60000u);
  // None of it stayed behind in the read-ahead buffer.
  BOOST_TEST(!policy.must_read_more(s.fds[0], 1));
  got_all.append(buf.data(), got);
  s.send(big.substr(60000));
  while (got_all.size() < big.size()) {
    BOOST_REQUIRE((policy.read_some(got, s.fds[0], buf.data(),
                                    big.size() - got_all.size()) ==
                   net::rw_state::success));
    BOOST_REQUIRE(got > 0u);
    got_all.append(buf.data(), got);
  }
  BOOST_TEST((got_all == big));
}

BOOST_AUTO_TEST_CASE(a_closed_peer_is_a_failure_once_the_bytes_ahead_are_out) {
  socket_pair s;
  read_ahead<caf::policy::tcp> policy;
  s.send("last words");
  ::shutdown(s.fds[1], SHUT_WR);
  BOOST_TEST(read(policy, s.fds[0], 4) == "last");
  BOOST_TEST(read(policy, s.fds[0], 6) == " words");
  std::size_t got = 0;
  char c = 0;
  BOOST_TEST(
      (policy.read_some(got, s.fds[0], &c, 1) == net::rw_state::failure));
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace read_ahead_test
