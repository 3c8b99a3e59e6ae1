#pragma once

// The actors of the CAF floor metrics: an echo server, and a client that
// times requests to it, in one process or across two.

#include <cstddef>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>

namespace prism::bench {

/// Answers every int with itself. A class rather than a function: CAF 0.17
/// spawns a function without arguments through a null
/// `shared_ptr<std::tuple<>>`, which UndefinedBehaviorSanitizer reports.
class echo_server : public caf::event_based_actor {
public:
  using caf::event_based_actor::event_based_actor;

  caf::behavior make_behavior() override {
    return {[](int x) { return x; }};
  }
};

/// Sends `total` requests to `server` from a new actor of `sys`, keeping up
/// to `window` in flight (a new one per response), and returns round trips
/// per second. Each request must be answered within `timeout`. Throws
/// `std::runtime_error` if one fails.
double timed_requests(caf::actor_system& sys, const caf::actor& server,
                      std::size_t total, std::size_t window,
                      caf::duration timeout);

} // namespace prism::bench
