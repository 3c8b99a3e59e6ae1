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
#include "floor_actors.hpp"

namespace prism::bench {

namespace {

/// Requests of `caf_floor_pipelined` kept in flight.
constexpr std::size_t pipeline_window = 1'000;

/// Returns round trips per second of `total` requests with up to `window` in
/// flight. Starting the actor system and the server is not timed.
double round_trips(std::size_t total, std::size_t window) {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto server = sys.spawn<echo_server>();
  auto rate = timed_requests(sys, server, total, window, caf::infinite);
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
