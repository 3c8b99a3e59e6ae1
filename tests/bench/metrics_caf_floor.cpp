// The floor under Prism's numbers: request/response between two plain CAF
// actors in an actor system of their own, one request at a time and with many
// in flight. Both actors are event-based; only the end of a run crosses back to
// the calling thread, through a promise.

#include <algorithm>
#include <cstddef>
#include <future>
#include <memory>
#include <utility>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>

#include "bench.hpp"

namespace prism::bench {

namespace {

/// Requests of `caf_floor_pipelined` kept in flight.
constexpr std::size_t pipeline_window = 1'000;

/// Answers every int with itself.
caf::behavior echo_server() {
  return {[](int x) { return x; }};
}

struct client_state {
  caf::actor server;
  std::size_t unsent = 0;
  std::size_t unanswered = 0;
  // Shared so that the promise outlives set_value, whatever the waiter does.
  std::shared_ptr<std::promise<void>> done;
};

using client_actor = caf::stateful_actor<client_state>;

void send_request(client_actor* self) {
  --self->state.unsent;
  self->request(self->state.server, caf::infinite, 42).then([self](int) {
    auto& st = self->state;
    if (st.unsent > 0)
      send_request(self);
    if (--st.unanswered == 0) {
      st.done->set_value();
      self->quit();
    }
  });
}

/// Sends `total` requests to `server`, keeping up to `window` in flight (a new
/// one per response), and fulfills `done` once all are answered. Lives on its
/// pending responses alone; it needs no behavior of its own.
void client(client_actor* self, caf::actor server, std::size_t total,
            std::size_t window, std::shared_ptr<std::promise<void>> done) {
  auto& st = self->state;
  st.server = std::move(server);
  st.unsent = total;
  st.unanswered = total;
  st.done = std::move(done);
  for (std::size_t i = 0; i < std::min(window, total); ++i)
    send_request(self);
}

/// Returns round trips per second of `total` requests with up to `window` in
/// flight. Starting the actor system and the server is not timed.
double round_trips(std::size_t total, std::size_t window) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto server = sys.spawn(echo_server);
  auto rate = ops_per_second(total, [&] {
    auto done = std::make_shared<std::promise<void>>();
    auto finished = done->get_future();
    sys.spawn(client, server, total, window, std::move(done));
    finished.get();
  });
  caf::anon_send_exit(server, caf::exit_reason::user_shutdown);
  return rate;
}

// -- metrics ------------------------------------------------------------------

double request_rtt(const run_options& opts) {
  return round_trips(opts.iterations(200'000), 1);
}

double pipelined(const run_options& opts) {
  return round_trips(opts.iterations(1'000'000), pipeline_window);
}

} // namespace

std::vector<metric> caf_floor_metrics() {
  return {
      {"caf_floor_request_rtt", "per_s", false, request_rtt},
      {"caf_floor_pipelined", "per_s", false, pipelined},
  };
}

} // namespace prism::bench
