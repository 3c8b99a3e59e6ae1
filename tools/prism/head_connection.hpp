#pragma once

// How a `prism` command that asks the cluster (status, logs) reaches it:
// the head at an address, through its door, with the cluster token.

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scoped_actor.hpp>

#include "net/network.hpp"

namespace prism::tools {

/// `address`, or PRISM_ADDRESS, or the head started on this host. Throws
/// `invalid_argument_error` if there is none.
std::string resolve_address(std::string address);

/// A command's connection to the head.
class head_connection {
public:
  /// Connects to the head at `address` (see `resolve_address`) as command
  /// `who`. Throws `prism::error` if it does not answer or refuses.
  head_connection(std::string address, const std::string& who);

  caf::actor_system& system() {
    return *sys_;
  }

  /// The control store (its endpoint in the head's process).
  const caf::actor& gcs() const {
    return gcs_;
  }

  const actors::host_port& where() const {
    return where_;
  }

  /// Asks the control store `msg` and returns its `Reply`. Throws
  /// `gcs_unavailable_error` saying `what` failed if none comes within
  /// `timeout`.
  template <class Reply, class Msg>
  Reply ask(const Msg& msg, const std::string& what,
            std::chrono::milliseconds timeout = std::chrono::seconds{30}) {
    std::optional<Reply> reply;
    std::string failure;
    caf::scoped_actor self{*sys_};
    self->request(gcs_, timeout, msg)
        .receive([&](Reply& x) { reply = std::move(x); },
                 [&](caf::error& err) { failure = sys_->render(err); });
    if (!reply)
      fail(what, failure);
    return std::move(*reply);
  }

private:
  [[noreturn]] static void fail(const std::string& what,
                                const std::string& failure);

  actors::host_port where_;
  caf::actor_system_config cfg_;
  std::unique_ptr<caf::actor_system> sys_;
  caf::actor gcs_;
};

} // namespace prism::tools
