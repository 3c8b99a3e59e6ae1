#pragma once

// The head's door: the one actor a head publishes on its port. It hands the
// control store's endpoint to a process that presents the cluster token.

#include <chrono>
#include <string>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

namespace prism::actors {

/// Spawns the door to `endpoint`. With an empty `token` it admits every
/// process (a cluster without a token); else only one that presents
/// `token`, compared in constant time. Each refusal is logged with the
/// process's role and contact, never a token.
caf::actor spawn_cluster_door(caf::actor_system& sys, caf::actor endpoint,
                              std::string token);

/// Presents `token` at `door` as a `role` ("node", "driver", "status") and
/// returns the control store's endpoint. Throws `permission_denied_error`
/// if the head refuses the token, `gcs_unavailable_error` if it does not
/// answer within `timeout`. Blocks: not on a scheduler thread.
caf::actor enter_cluster(caf::actor_system& sys, const caf::actor& door,
                         const std::string& token, const std::string& role,
                         std::chrono::milliseconds timeout);

/// The text of the head's refusal of a token; the error a client sees.
inline constexpr const char* token_refused =
    "the head refused this process's cluster token";

} // namespace prism::actors
