// Large payloads over a node's bulk port (net/bulk.hpp), on real sockets on
// loopback: what a node offers is read whole into its place, once; a bad
// ticket, a wrong size, a silent or hostile peer, a cancel and a closed port
// each end a read with a reason, and never stop the node serving others.

#include <boost/test/unit_test.hpp>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/bulk.hpp"

namespace bulk_test {

using namespace prism::actors;
using namespace std::chrono_literals;

/// Bytes that differ from place to place, kept alive as a node keeps them.
std::shared_ptr<std::vector<char>> pattern(std::size_t n) {
  auto bytes = std::make_shared<std::vector<char>>(n);
  for (std::size_t i = 0; i < n; ++i)
    (*bytes)[i] = static_cast<char>((i * 7919) >> 3);
  return bytes;
}

/// A read into `into` and what it ended with.
struct read_result {
  std::unique_ptr<bulk_fetch> fetch;
  std::future<std::string> why;
};

read_result start_read(std::uint16_t port, const std::string& ticket,
                       char* into, std::uint64_t n,
                       std::chrono::milliseconds stall = 10s) {
  auto done = std::make_shared<std::promise<std::string>>();
  read_result r;
  r.why = done->get_future();
  r.fetch = std::make_unique<bulk_fetch>(
      "127.0.0.1", port, ticket, into, n, 2000ms, stall,
      [done](std::string why) { done->set_value(std::move(why)); });
  return r;
}

/// How a read ended, failing the test if it has not within 20 s.
std::string ended(read_result& r) {
  BOOST_REQUIRE(r.why.wait_for(20s) == std::future_status::ready);
  return r.why.get();
}

std::string read_into(std::uint16_t port, const std::string& ticket, char* into,
                      std::uint64_t n) {
  auto r = start_read(port, ticket, into, n);
  return ended(r);
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// A plain connection to `port` on loopback.
int connect_to(std::uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  BOOST_REQUIRE(
      ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  return fd;
}

BOOST_AUTO_TEST_SUITE(bulk)

BOOST_AUTO_TEST_CASE(offered_bytes_are_read_whole_into_their_place_once) {
  bulk_server node{"127.0.0.1"};
  BOOST_TEST(node.port() != 0);
  auto bytes = pattern((std::size_t{24} << 20) + 12345);
  auto ticket = node.offer(bytes, bytes->data(), bytes->size());
  BOOST_TEST(ticket.size() == 32u);
  BOOST_TEST(node.offers() == 1u);
  std::vector<char> place(bytes->size());
  BOOST_TEST(read_into(node.port(), ticket, place.data(), place.size()) == "");
  BOOST_TEST((place == *bytes));
  BOOST_TEST(node.offers() == 0u);
  // A ticket is good once.
  auto again = read_into(node.port(), ticket, place.data(), place.size());
  BOOST_TEST(contains(again, "no offer under that ticket"), again);
}

BOOST_AUTO_TEST_CASE(a_ticket_the_node_never_gave_reads_nothing) {
  bulk_server node{"127.0.0.1"};
  auto bytes = pattern(4096);
  auto ticket = node.offer(bytes, bytes->data(), bytes->size());
  std::vector<char> place(4096, 'z');
  auto forged = std::string(32, 'a');
  auto why = read_into(node.port(), forged, place.data(), place.size());
  BOOST_TEST(contains(why, "no offer under that ticket"), why);
  BOOST_TEST((place == std::vector<char>(4096, 'z')));
  // The real one is still good.
  BOOST_TEST(read_into(node.port(), ticket, place.data(), place.size()) == "");
  BOOST_TEST((place == *bytes));
}

BOOST_AUTO_TEST_CASE(a_read_of_another_size_is_refused_naming_both) {
  bulk_server node{"127.0.0.1"};
  auto bytes = pattern(1000);
  auto ticket = node.offer(bytes, bytes->data(), bytes->size());
  std::vector<char> place(2000);
  auto why = read_into(node.port(), ticket, place.data(), place.size());
  BOOST_TEST(contains(why, "offers 1000 bytes, not the 2000"), why);
}

BOOST_AUTO_TEST_CASE(silent_and_hostile_peers_do_not_stop_the_node) {
  bulk_server node{"127.0.0.1"};
  // One says nothing; one sends a short ticket and closes; one sends junk
  // longer than a ticket.
  int silent = connect_to(node.port());
  int short_one = connect_to(node.port());
  BOOST_REQUIRE(::send(short_one, "abc", 3, MSG_NOSIGNAL) == 3);
  ::close(short_one);
  int junk = connect_to(node.port());
  std::string noise(4096, '\xff');
  BOOST_REQUIRE(::send(junk, noise.data(), noise.size(), MSG_NOSIGNAL) > 0);
  auto bytes = pattern(std::size_t{3} << 20);
  auto ticket = node.offer(bytes, bytes->data(), bytes->size());
  std::vector<char> place(bytes->size());
  BOOST_TEST(read_into(node.port(), ticket, place.data(), place.size()) == "");
  BOOST_TEST((place == *bytes));
  // The junk got no bytes back: its connection is closed (reset, as it
  // left bytes unread) with nothing sent.
  timeval limit{10, 0};
  ::setsockopt(junk, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
  char c = 0;
  errno = 0;
  auto got = ::recv(junk, &c, 1, 0);
  BOOST_TEST((got == 0 || (got < 0 && errno == ECONNRESET)));
  ::close(junk);
  ::close(silent);
}

/// A port on loopback that takes connections (the kernel's backlog) and
/// never answers on them; closed with it.
struct quiet_port {
  quiet_port() {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    BOOST_REQUIRE(
        ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
    BOOST_REQUIRE(::listen(fd, 4) == 0);
    socklen_t len = sizeof(addr);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    port = ntohs(addr.sin_port);
  }
  ~quiet_port() {
    ::close(fd);
  }
  int fd = -1;
  std::uint16_t port = 0;
};

BOOST_AUTO_TEST_CASE(a_read_from_a_peer_that_never_answers_ends_on_cancel) {
  quiet_port quiet;
  std::vector<char> place(4096);
  auto r = start_read(quiet.port, std::string(32, 'b'), place.data(),
                      place.size(), 60s);
  // Time is the subject: it does not end by itself.
  BOOST_TEST((r.why.wait_for(300ms) == std::future_status::timeout));
  r.fetch->cancel();
  BOOST_TEST(ended(r) == "cancelled");
}

BOOST_AUTO_TEST_CASE(a_stalled_read_ends_after_its_stall_timeout) {
  quiet_port quiet;
  std::vector<char> place(4096);
  auto r = start_read(quiet.port, std::string(32, 'b'), place.data(),
                      place.size(), 200ms);
  auto why = ended(r);
  BOOST_TEST(contains(why, "answered nothing for 200 ms"), why);
}

BOOST_AUTO_TEST_CASE(a_closed_port_is_refused_with_a_reason) {
  std::uint16_t port = 0;
  {
    bulk_server gone{"127.0.0.1"};
    port = gone.port();
  }
  std::vector<char> place(16);
  auto why = read_into(port, std::string(32, 'c'), place.data(), place.size());
  BOOST_TEST(
      contains(why, "cannot connect to 127.0.0.1:" + std::to_string(port)),
      why);
}

BOOST_AUTO_TEST_CASE(an_offer_no_reader_takes_lets_go_of_its_bytes) {
  bulk_server node{"127.0.0.1", 200ms};
  auto bytes = pattern(std::size_t{1} << 20);
  auto ticket = node.offer(bytes, bytes->data(), bytes->size());
  BOOST_TEST(bytes.use_count() == 2);
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (bytes.use_count() > 1 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(10ms); // A poll: the sweep runs on its own.
  BOOST_TEST(bytes.use_count() == 1);
  BOOST_TEST(node.offers() == 0u);
  std::vector<char> place(bytes->size());
  auto why = read_into(node.port(), ticket, place.data(), place.size());
  BOOST_TEST(contains(why, "no offer under that ticket"), why);
}

BOOST_AUTO_TEST_CASE(a_node_stops_while_a_reader_holds_a_connection) {
  auto node = std::make_unique<bulk_server>("127.0.0.1");
  int silent = connect_to(node->port());
  auto bytes = pattern(std::size_t{1} << 20);
  node->offer(bytes, bytes->data(), bytes->size());
  auto stop = std::async(std::launch::async, [&] { node.reset(); });
  BOOST_TEST((stop.wait_for(10s) == std::future_status::ready));
  // The offer's bytes are let go with the node.
  BOOST_TEST(bytes.use_count() == 1);
  ::close(silent);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace bulk_test
