#pragma once

// Blocking requests to the control store from API threads (drivers, task and
// actor threads), never from a scheduler thread.

#include <chrono>
#include <concepts>
#include <optional>
#include <string>
#include <thread>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/scoped_actor.hpp>

#include "prism/error.hpp"
#include "prism/internal/backoff.hpp"
#include "protocol/kv.hpp"

namespace prism::actors {

/// Sets how long requests wait for a control store that is down (the gcs
/// endpoint answers them with an error after that). One cluster per process.
void set_gcs_wait(std::chrono::milliseconds wait);

/// The timeout of one request to the control store: its wait, and a margin
/// for the answer itself.
std::chrono::milliseconds gcs_request_timeout();

/// Returns a new id for a write to the control store: this process's client
/// id, random, and a number that no other call in this process returns.
protocol::request_id next_request_id();

/// The control store that the endpoint `endpoint` (`spawn_gcs_endpoint`,
/// of this process) forwards to now, for a message that may skip the
/// endpoint's hop; `endpoint` itself while none is attached, or when it is no
/// endpoint. Only for messages that their sender sends again on
/// `protocol::gcs_restarted`, and that need not follow what the sender sent
/// the endpoint before: one sent as the control store dies is lost, as it is
/// through the endpoint, and it may overtake messages still at the endpoint.
caf::actor attached_gcs(const caf::actor& endpoint);

/// How `ask_gcs` waits before it sends a request again.
prism::backoff gcs_retry_policy();

/// Whether `Msg` changes the control store and carries a request id, which
/// the control store uses to apply it at most once.
template <class Msg>
inline constexpr bool is_gcs_write = requires(Msg& m) {
  { m.request } -> std::same_as<protocol::request_id&>;
};

/// Sends `msg` to the control store's endpoint and returns its `Reply`.
/// A request the control store took down with it is sent again, with
/// backoff, until `gcs_request_timeout()` passes (the endpoint buffers it until
/// a new one is attached). A write (`is_gcs_write<Msg>`) without a request
/// id is given one first, and every attempt carries the same id, so that the
/// control store applies it once however often it arrives. Throws
/// `gcs_unavailable_error` when no answer comes in time, naming `what` was
/// asked; for a write it says that the outcome is unknown.
template <class Reply, class Msg>
Reply ask_gcs(caf::actor_system& sys, const caf::actor& gcs, const Msg& msg,
              const std::string& what) {
  using clock = std::chrono::steady_clock;
  auto deadline = clock::now() + gcs_request_timeout();
  Msg request = msg;
  if constexpr (is_gcs_write<Msg>)
    if (request.request.nil())
      request.request = next_request_id();
  internal::retry_backoff retries{gcs_retry_policy()};
  caf::scoped_actor self{sys};
  for (;;) {
    std::optional<Reply> reply;
    caf::error failure;
    self->request(gcs, gcs_request_timeout(), request)
        .receive([&](Reply& x) { reply = std::move(x); },
                 [&](caf::error& err) { failure = std::move(err); });
    if (reply)
      return std::move(*reply);
    if (failure == caf::sec::request_receiver_down)
      if (auto pause = retries.next(clock::now(), deadline)) {
        std::this_thread::sleep_for(*pause);
        continue;
      }
    std::string outcome;
    if constexpr (is_gcs_write<Msg>)
      outcome = "; the outcome is unknown: the change may or may not have "
                "been applied";
    throw gcs_unavailable_error(what +
                                " failed: the control store did not "
                                "answer (" +
                                sys.render(failure) + ")" + outcome);
  }
}

} // namespace prism::actors
