// What a head does with hostile input on its port: random bytes, truncated
// and oversized BASP headers, messages to guessed actor ids, forged down
// messages, and thousands of connections at once. After each, the head
// still serves a driver, and `prism status` reads as it did before.
//
// The fuzzed inputs number PRISM_FUZZ_INPUTS (default 300 here; run
// `PRISM_FUZZ_INPUTS=100000 prism_cluster_tests --run_test=hostile_input`
// for the long pass, as README's "Security" says).

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <future>
#include <random>
#include <string>
#include <sys/resource.h>
#include <thread>
#include <vector>

#include <boost/test/unit_test.hpp>

#include <caf/all.hpp>
#include <caf/io/basp/header.hpp>
#include <caf/io/basp_broker.hpp>
#include <caf/io/middleman.hpp>

#include <prism/prism.hpp>

#include "join/head_link.hpp"
#include "net/network.hpp"
#include "net/peers.hpp"
#include "prism_command.hpp"
#include "protocol/registration.hpp"
#include "raw_peer.hpp"

namespace hostile_input_test {

using namespace prism::cluster_test;
using namespace std::chrono_literals;

int twice(int x) {
  return 2 * x;
}

PRISM_REMOTE(hostile_input_test::twice);

namespace {

namespace basp = caf::io::basp;

std::size_t fuzz_inputs() {
  const char* text = std::getenv("PRISM_FUZZ_INPUTS");
  return text != nullptr && *text != '\0' ? std::stoul(text) : 300;
}

/// The bytes of `hdr` as BASP writes them.
std::string header_bytes(basp::header hdr) {
  std::vector<char> buf;
  caf::binary_serializer sink{nullptr, buf};
  if (sink(hdr))
    throw std::runtime_error("cannot write a BASP header");
  return {buf.begin(), buf.end()};
}

basp::header client_handshake(std::uint32_t payload_len) {
  return basp::header{basp::message_type::client_handshake,
                      0,
                      payload_len,
                      0,
                      caf::invalid_actor_id,
                      caf::invalid_actor_id};
}

void send_all(int fd, const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    auto n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n <= 0)
      return; // the head closed it: what it does with the rest is its call
    done += static_cast<std::size_t>(n);
  }
}

/// Resident memory of process `pid`, in KiB.
long resident_kib(int pid) {
  std::ifstream in{"/proc/" + std::to_string(pid) + "/status"};
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0)
      return std::stol(line.substr(6));
  return 0;
}

/// A bare session with a head and one node on loopback without TLS (the
/// port any local user reaches) and the view of it before the attack.
struct attacked_cluster {
  attacked_cluster() {
    address = s.start_head({"--num-cpus", "1"});
    s.start_node(address, {"--num-cpus", "1"});
    head_pid = s.pid_of("head");
    before = view();
  }

  /// What `prism status` shows of the cluster.
  std::string view() {
    auto r = s.run({"status", "--address", address}, 30s);
    BOOST_REQUIRE_MESSAGE(r.status == 0, r.err);
    return r.out;
  }

  /// The head still runs and serves a driver, and shows what it showed
  /// before the attack.
  void check_unharmed() {
    BOOST_TEST(::kill(head_pid, 0) == 0);
    BOOST_TEST(view() == before);
    prism::config cfg;
    cfg.address = address;
    prism::init(cfg);
    BOOST_TEST(prism::get(prism::task(hostile_input_test::twice).remote(21),
                          60s) == 42);
    prism::kv::put("after-the-attack", "fine");
    BOOST_TEST(prism::kv::get("after-the-attack").value_or("") == "fine");
    prism::shutdown();
    BOOST_TEST(s.sanitizer_reports() == "");
  }

  process_cluster s{bare_session()};
  std::string address;
  int head_pid = 0;
  std::string before;
};

/// Raises this process's limit of open files as far as it may go, and
/// returns it.
std::size_t raise_file_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0)
    return 1024;
  limit.rlim_cur = limit.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &limit);
  return static_cast<std::size_t>(limit.rlim_cur);
}

/// An actor system configured as a process of a cluster, connected to a
/// head without a token: a member of the cluster's loopback port, which
/// then sends what it likes.
struct connected_peer {
  explicit connected_peer(const std::string& address) : sys{configured()} {
    prism::actors::start_dialer(sys, prism::actors::dial_timeout);
    gcs = prism::actors::connect_to_head(
        sys, prism::actors::parse_host_port(address, "the head"),
        prism::actors::head_entry{"", "test"}, 10000ms);
  }

  ~connected_peer() {
    prism::actors::stop_peers(sys);
  }

  caf::actor_system_config& configured() {
    prism::actors::configure_cluster_process(cfg, 1, {});
    return cfg;
  }

  /// A handle of actor `id` of process `node`, made up.
  caf::actor guessed(const caf::node_id& process, caf::actor_id id) {
    auto broker =
        sys.middleman().named_broker<caf::io::basp_broker>(caf::atom("BASP"));
    auto made = std::make_shared<std::promise<caf::strong_actor_ptr>>();
    auto result = made->get_future();
    sys.middleman().backend().dispatch([broker, made, process, id] {
      auto* b = static_cast<caf::io::basp_broker*>(
          caf::actor_cast<caf::abstract_actor*>(broker));
      // Outside a message of the broker: no last hop to learn a route from.
      b->set_last_hop(nullptr);
      made->set_value(b->instance.proxies().get_or_put(process, id));
    });
    return caf::actor_cast<caf::actor>(result.get());
  }

  caf::actor_system_config cfg;
  caf::actor_system sys;
  caf::actor gcs;
};

} // namespace

BOOST_AUTO_TEST_SUITE(hostile_input)

BOOST_AUTO_TEST_CASE(fuzzed_bytes_and_headers_change_nothing) {
  attacked_cluster c;
  std::mt19937_64 random{20261125};
  auto inputs = fuzz_inputs();
  BOOST_TEST_MESSAGE("fuzzed inputs: " << inputs);
  for (std::size_t i = 0; i < inputs; ++i) {
    auto source = "127.0.0." + std::to_string(2 + i % 250);
    int fd = connect_to(c.address, true, source);
    BOOST_REQUIRE_MESSAGE(fd >= 0,
                          "connection " << i << ": " << std::strerror(errno));
    std::string input;
    if (i % 2 == 0) {
      // Random bytes.
      input.resize(1 + random() % 2048);
      for (auto& b : input)
        b = static_cast<char>(random());
    } else {
      // A header with random fields, and random bytes after it.
      basp::header hdr{static_cast<basp::message_type>(random() % 8),
                       static_cast<std::uint8_t>(random()),
                       static_cast<std::uint32_t>(random()),
                       random(),
                       random() % 1000,
                       random() % 1000};
      if (random() % 2 == 0)
        hdr.payload_len %= 4096;
      input = header_bytes(hdr);
      input.resize(input.size() + random() % 512);
      for (std::size_t j = basp::header_size; j < input.size(); ++j)
        input[j] = static_cast<char>(random());
    }
    send_all(fd, input);
    ::close(fd);
  }
  c.check_unharmed();
}

BOOST_AUTO_TEST_CASE(truncated_and_oversized_headers_change_nothing) {
  attacked_cluster c;
  auto whole = header_bytes(client_handshake(64));
  for (std::size_t n = 1; n < whole.size(); ++n) {
    int fd = connect_to(c.address);
    BOOST_REQUIRE(fd >= 0);
    send_all(fd, whole.substr(0, n));
    ::close(fd);
  }
  // A header that announces 4 GB: the head closes the connection at once,
  // without making room for it.
  auto rss_before = resident_kib(c.head_pid);
  for (std::uint32_t announced : {0xffffffffu, 0x40000001u, 64u * 1024 + 1}) {
    int fd = connect_to(c.address);
    BOOST_REQUIRE(fd >= 0);
    send_all(fd, header_bytes(client_handshake(announced)));
    bool closed = false;
    heard_from(fd, 10s, &closed);
    ::close(fd);
    BOOST_TEST(closed, "the head kept a connection that announced "
                           << announced << " bytes");
  }
  BOOST_TEST(resident_kib(c.head_pid) - rss_before < 64 * 1024);
  BOOST_TEST(
      contains(c.s.log_of("head"), "announced a message of 4294967295 bytes"));
  // Handshakes that announce no payload: CAF 0.17.6 reads a payload that
  // is not there (a null pointer) and ends the process.
  for (auto op : {basp::message_type::client_handshake,
                  basp::message_type::server_handshake}) {
    int fd = connect_to(c.address);
    BOOST_REQUIRE(fd >= 0);
    send_all(fd, header_bytes(basp::header{op, 0, 0, 1, caf::invalid_actor_id,
                                           caf::invalid_actor_id}));
    bool closed = false;
    heard_from(fd, 10s, &closed);
    ::close(fd);
    BOOST_TEST(closed);
  }
  BOOST_TEST(contains(c.s.log_of("head"), "a handshake without its payload"));
  // A heartbeat before the handshake, then a message that announces 1 GiB:
  // the heartbeat ends the connection already.
  {
    int fd = connect_to(c.address);
    BOOST_REQUIRE(fd >= 0);
    send_all(fd,
             header_bytes(basp::header{basp::message_type::heartbeat, 0, 0, 0,
                                       caf::invalid_actor_id,
                                       caf::invalid_actor_id}) +
                 header_bytes(basp::header{basp::message_type::direct_message,
                                           0, 1u << 30, 0, 1, 1}));
    bool closed = false;
    heard_from(fd, 10s, &closed);
    ::close(fd);
    BOOST_TEST(closed);
    BOOST_TEST(contains(c.s.log_of("head"), "a message before its handshake"));
  }
  // An operation BASP does not have.
  int fd = connect_to(c.address);
  BOOST_REQUIRE(fd >= 0);
  auto bad = whole;
  bad[0] = 0x7f;
  send_all(fd, bad);
  bool closed = false;
  heard_from(fd, 10s, &closed);
  ::close(fd);
  BOOST_TEST(closed);
  c.check_unharmed();
}

// A peer that completed a handshake sends messages to actor ids it guesses,
// and down messages that name the head's node as dead to every one of them.
BOOST_AUTO_TEST_CASE(
    guessed_actor_ids_and_forged_down_messages_change_nothing) {
  attacked_cluster c;
  {
    connected_peer peer{c.address};
    caf::scoped_actor self{peer.sys};
    std::vector<prism::protocol::node_info> nodes;
    self->request(peer.gcs, 10s, prism::protocol::list_nodes{})
        .receive([&](std::vector<prism::protocol::node_info>& n) { nodes = n; },
                 [&](caf::error& err) {
                   BOOST_FAIL("list_nodes: " << peer.sys.render(err));
                 });
    BOOST_REQUIRE(nodes.size() == 2u);
    auto head_process = peer.gcs.node();
    for (caf::actor_id id = 1; id <= 300; ++id) {
      auto guess = peer.guessed(head_process, id);
      caf::anon_send(guess, 42);
      caf::anon_send(guess, std::string(10000, 'x'));
      caf::anon_send(guess, std::vector<std::string>{"a", "b"});
      for (auto& n : nodes)
        caf::anon_send(
            guess, caf::down_msg{n.raylet.address(), caf::exit_reason::kill});
    }
    // The forgeries reach the head before the check below looks.
    BOOST_TEST(eventually(20s, [&] {
      return contains(c.s.log_of("head"), "dropped a forged down message");
    }));
  }
  c.check_unharmed();
}

BOOST_AUTO_TEST_CASE(thousands_of_connections_at_once_change_nothing) {
  attacked_cluster c;
  // As many as this process (and the head, which raises its limit the same
  // way) may hold, up to 3,000.
  auto files = raise_file_limit();
  std::vector<int> open;
  for (int i = 0; i < 3000; ++i) {
    int fd = connect_to(c.address, true);
    if (fd < 0)
      break;
    open.push_back(fd);
  }
  BOOST_TEST_MESSAGE("connections held at once: " << open.size());
  BOOST_TEST(open.size() >= std::min<std::size_t>(1000, files - 100));
  // While they are open, the head still serves.
  BOOST_TEST(c.view() == c.before);
  for (int fd : open)
    ::close(fd);
  c.check_unharmed();
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace hostile_input_test
