// Connections between the processes of a cluster, dialed through CAF's
// middleman, against a real `prism` head.

#include <csignal>
#include <string>
#include <thread>

#include <boost/test/unit_test.hpp>

#include <caf/all.hpp>
#include <caf/io/middleman.hpp>

#include "net/network.hpp"
#include "net/peers.hpp"
#include "prism_command.hpp"

namespace dial_test {

using namespace prism::cluster_test;
using namespace std::chrono_literals;

namespace {

/// The middleman's settings of both test processes: a heartbeat tick every
/// 50 ms, so that many ticks fall into a handshake that waits on a frozen
/// peer, and a connection timeout far beyond the test.
prism::actors::network_settings fast_ticks() {
  prism::actors::network_settings net;
  net.heartbeat_interval = 50ms;
  net.connection_timeout = 30000ms;
  return net;
}

/// An actor system configured like a process of a cluster.
struct cluster_process_system {
  cluster_process_system() : sys{configured()} {}

  ~cluster_process_system() {
    prism::actors::stop_peers(sys);
  }

  caf::actor_system_config& configured() {
    prism::actors::configure_cluster_process(cfg, 1, fast_ticks());
    return cfg;
  }

  caf::actor_system_config cfg;
  caf::actor_system sys;
};

} // namespace

BOOST_AUTO_TEST_SUITE(cluster_dial)

// CAF 0.17.6 keeps no time it last heard from a connection it dialed, so a
// heartbeat tick before the peer's handshake closes that connection as timed
// out. A head frozen across a dozen ticks answers the handshake only once it
// resumes: the dialer must still connect, within its deadline.
BOOST_AUTO_TEST_CASE(a_dial_outlasts_heartbeat_ticks_before_the_handshake) {
  process_cluster s{bare_session()};
  auto address = s.start_head({"--num-cpus", "1"});
  auto where = prism::actors::parse_host_port(address, "the head's address");

  // The head's node id, learned by another system, so that the dialing one
  // has no connection to the head yet.
  caf::node_id head_process;
  {
    cluster_process_system learner;
    std::string why;
    auto head = prism::actors::dial_published(learner.sys, where, 10000ms, why);
    BOOST_REQUIRE_MESSAGE(head, "the head did not answer: " << why);
    head_process = head.node();
  }

  cluster_process_system dialing;
  prism::actors::start_dialer(dialing.sys, 10000ms);
  BOOST_REQUIRE(!prism::actors::connected_to(dialing.sys, head_process));
  auto pid = s.pid_of("head");
  BOOST_REQUIRE(pid > 0);
  BOOST_REQUIRE(::kill(pid, SIGSTOP) == 0);
  // Time is the subject here: the head stays silent for a dozen ticks.
  std::thread resume{[pid] {
    std::this_thread::sleep_for(600ms);
    ::kill(pid, SIGCONT);
  }};
  bool reached = false;
  std::string failure;
  {
    caf::scoped_actor self{dialing.sys};
    self->request(prism::actors::dialer_of(dialing.sys), 20000ms,
                  prism::actors::dial_atom::value, head_process, address)
        .receive([&](bool connected) { reached = connected; },
                 [&](caf::error& err) { failure = caf::to_string(err); });
  }
  resume.join();
  BOOST_TEST(reached, "the dial failed: " << failure);
  BOOST_TEST(prism::actors::connected_to(dialing.sys, head_process));
  BOOST_TEST(s.run({"status"}).status == 0);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace dial_test
