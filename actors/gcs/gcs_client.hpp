#pragma once

// Blocking requests to the control store from API threads (drivers, task and
// actor threads), never from a scheduler thread.

#include <chrono>
#include <optional>
#include <string>
#include <thread>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/scoped_actor.hpp>

#include "prism/error.hpp"

namespace prism::actors {

/// Sets how long requests wait for a control store that is down (the gcs
/// endpoint answers them with an error after that). One cluster per process.
void set_gcs_wait(std::chrono::milliseconds wait);

/// The timeout of one request to the control store: its wait, and a margin
/// for the answer itself.
std::chrono::milliseconds gcs_request_timeout();

/// Sends `msg` to the control store's endpoint and returns its `Reply`.
/// A request the control store took down with it is sent again (the endpoint
/// holds it until a new one is attached). Throws `gcs_unavailable_error`
/// when no answer comes in time, naming `what` was asked.
template <class Reply, class Msg>
Reply ask_gcs(caf::actor_system& sys, const caf::actor& gcs, const Msg& msg,
              const std::string& what) {
  using clock = std::chrono::steady_clock;
  auto deadline = clock::now() + gcs_request_timeout();
  caf::scoped_actor self{sys};
  for (;;) {
    std::optional<Reply> reply;
    caf::error failure;
    self->request(gcs, gcs_request_timeout(), msg)
        .receive([&](Reply& x) { reply = std::move(x); },
                 [&](caf::error& err) { failure = std::move(err); });
    if (reply)
      return std::move(*reply);
    if (failure == caf::sec::request_receiver_down && clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds{2});
      continue;
    }
    throw gcs_unavailable_error(what +
                                " failed: the control store did not "
                                "answer (" +
                                sys.render(failure) + ")");
  }
}

} // namespace prism::actors
