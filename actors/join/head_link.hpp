#pragma once

#include <chrono>
#include <functional>
#include <string>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/node_id.hpp>

#include "net/network.hpp"

namespace prism::actors {

/// What a process presents at the head's door (`cluster_door.hpp`).
struct head_entry {
  /// The cluster token, "" if it has none.
  std::string token;
  /// "node", "driver" or "status", for the head's log.
  std::string role;
};

struct head_link_config {
  /// Where the head publishes its door.
  host_port head;
  /// What this process presents at the door each time it connects.
  head_entry entry;
  /// This process's endpoint of the control store, which forwards to the
  /// head's while connected and buffers messages while not.
  caf::actor endpoint;
  /// The head's control store, already connected.
  caf::actor remote;
  /// How long a dial may take, the probe and CAF's handshake each.
  std::chrono::milliseconds dial_timeout{2000};
  /// How long the head may stay unreachable before `lost` is called.
  std::chrono::milliseconds give_up_after{60000};
  /// Called once, from the link's thread, when the head stayed unreachable
  /// for `give_up_after`; the link ends then.
  std::function<void(const std::string& why)> lost;
};

/// Dials the head's control store connected in `cfg.remote` and attaches
/// this process's endpoint to it. When the connection drops (the head
/// died, or froze past the connection timeout), the endpoint buffers messages
/// and the link dials again with backoff; once the head answers, the
/// endpoint takes the new connection and tells its watchers, which register
/// again as they do after a restart of the control store. Runs on a thread
/// of its own: a dial blocks.
caf::actor spawn_head_link(caf::actor_system& sys, head_link_config cfg);

/// Connects to the head at `where`, presents `entry` at its door, and
/// returns the head's control store. Throws `gcs_unavailable_error` naming
/// the address and why not, or `permission_denied_error` if the head
/// refused the token. Blocks for at most about three times `timeout`; not
/// on a scheduler thread.
caf::actor connect_to_head(caf::actor_system& sys, const host_port& where,
                           const head_entry& entry,
                           std::chrono::milliseconds timeout);

} // namespace prism::actors
