// What a process's transport leaves behind when it shuts down: nothing of
// Prism's may stay held by CAF 0.17.6's broker or multiplexer, or
// LeakSanitizer reports it at exit (README, "LeakSanitizer and CAF's BASP
// broker").

#include <chrono>
#include <future>
#include <sys/socket.h>
#include <unistd.h>
#include <utility>

#include <boost/test/unit_test.hpp>

#include <caf/all.hpp>
#include <caf/io/middleman.hpp>

#include "net/connection.hpp"
#include "net/peers.hpp"

namespace transport_shutdown_test {

using namespace std::chrono_literals;

namespace {

caf::actor_system_config& with_middleman(caf::actor_system_config& cfg) {
  cfg.load<caf::io::middleman>();
  return cfg;
}

} // namespace

BOOST_AUTO_TEST_SUITE(transport_shutdown)

// CAF's multiplexer squashes a start and a stop of a connection in one of
// its rounds into nothing, and then never tells the stream to let go of its
// connection: the broker starting a connection and closing it in one round
// (a connect answered while it shuts down) left a connection that held
// itself at exit.
BOOST_AUTO_TEST_CASE(a_connection_started_and_stopped_in_one_round_is_freed) {
  caf::actor_system_config cfg;
  caf::actor_system sys{with_middleman(cfg)};
  int fds[2];
  BOOST_REQUIRE_EQUAL(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  auto& mpx = static_cast<caf::io::network::default_multiplexer&>(
      sys.middleman().backend());
  // References to the connection: once started, and once stopped.
  std::promise<std::pair<std::size_t, std::size_t>> counted;
  auto counts = counted.get_future();
  mpx.dispatch([&] {
    auto connection = caf::make_counted<prism::actors::plain_scribe>(
        mpx, fds[0], prism::actors::read_limits{});
    connection->configure_read(caf::io::receive_policy::exactly(16));
    auto started = connection->get_reference_count();
    connection->remove_from_loop();
    counted.set_value({started, connection->get_reference_count()});
  });
  BOOST_REQUIRE(counts.wait_for(10s) == std::future_status::ready);
  auto [started, stopped] = counts.get();
  BOOST_CHECK_EQUAL(started, 2u); // this test's and the stream's
  BOOST_CHECK_EQUAL(stopped, 1u); // this test's alone
  ::close(fds[1]);
}

// The broker keeps every actor it publishes until it is destroyed, which
// its own cycle at exit may prevent: a node's door stayed held with it.
BOOST_AUTO_TEST_CASE(the_broker_lets_go_of_published_actors) {
  caf::actor_system_config cfg;
  caf::actor_system sys{with_middleman(cfg)};
  // CAF 0.17 spawns a function without arguments through a null pointer.
  auto door = sys.spawn(
      [](int) -> caf::behavior { return {[](int x) { return x; }}; }, 0);
  auto port = sys.middleman().publish(door, 0, "127.0.0.1");
  BOOST_REQUIRE(port);
  caf::weak_actor_ptr weak = caf::actor_cast<caf::weak_actor_ptr>(door);
  caf::scoped_actor self{sys};
  self->send_exit(door, caf::exit_reason::user_shutdown);
  self->wait_for(door);
  door = nullptr;
  BOOST_REQUIRE_MESSAGE(weak.lock() != nullptr,
                        "the broker holds the actor it publishes");
  prism::actors::release_broker(sys);
  BOOST_CHECK_MESSAGE(weak.lock() == nullptr,
                      "the broker still holds the actor it published");
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace transport_shutdown_test
