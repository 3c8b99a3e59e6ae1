#pragma once

// How a `prism` command that asks the cluster (status, logs) reaches it:
// the head at an address, through its door, with the cluster token.

#include <memory>
#include <string>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

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

private:
  actors::host_port where_;
  caf::actor_system_config cfg_;
  std::unique_ptr<caf::actor_system> sys_;
  caf::actor gcs_;
};

} // namespace prism::tools
