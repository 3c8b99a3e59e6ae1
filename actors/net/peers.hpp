#pragma once

// Direct connections between the processes of a cluster.
//
// CAF 0.17 sends a message for a process it has no connection to through
// the process it learned that handle from. That process forwards it only if
// it has itself read a handle of the destination, which a process that only
// forwarded messages never has; and a process reached that way is never
// reported down when it dies, since no connection of the sender drops. So
// every process of a cluster listens (its *contact*, "HOST:PORT"); a message
// that hands out the handle of a third process carries that process's
// contact; and the receiver connects straight to it (`reach`) before it
// sends there.

#include <chrono>
#include <string>
#include <utility>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/atom.hpp>
#include <caf/message.hpp>
#include <caf/node_id.hpp>

#include "common/log.hpp"

namespace prism::actors {

using dial_atom = caf::atom_constant<caf::atom("dial")>;

/// Names this process's contact in `sys`: where other processes of the
/// cluster connect to it. Called once its middleman listens there.
void set_own_contact(caf::actor_system& sys, std::string contact);

/// Opens a port for other processes on `host` (any free port), over TLS if
/// `sys` speaks it, makes it the contact of `sys`, and returns it. Throws
/// `invalid_argument_error` if it cannot listen there, or if `host` is
/// beyond loopback without TLS and not `insecure` (`check_exposure`); warns
/// if it is with `insecure`. Others reach it at `advertise` if set (for a
/// wildcard `host`), else at `host`.
std::string listen_for_peers(caf::actor_system& sys, const std::string& host,
                             bool insecure = false,
                             const std::string& advertise = "");

/// The contact of `sys`, or "" if its processes take no connections (an
/// embedded cluster of threads).
std::string own_contact(caf::actor_system& sys);

/// Starts the actor of `sys` that connects to other processes by their
/// contact; `reach` finds it in the registry. Needs the middleman.
void start_dialer(caf::actor_system& sys, std::chrono::milliseconds timeout);

/// Stops the dialer of `sys` and forgets its contact: `sys` shuts down.
void stop_peers(caf::actor_system& sys);

/// Makes CAF 0.17's BASP broker of `sys` let go of what it holds, called
/// once the system's own actors are gone, before it is destroyed:
/// - the helper actors it spawns for each process it learns of through
///   another one. A helper waits minutes for that process's answer, and one
///   still waiting when `sys` goes keeps the broker and the actor system
///   alive in a cycle;
/// - the actors it publishes (a node's door, say): the broker keeps them
///   until it is destroyed, which that cycle may prevent.
void release_broker(caf::actor_system& sys);

/// The dialer of `sys`, or an invalid handle if it has none.
caf::actor dialer_of(caf::actor_system& sys);

/// Sends `msg` to `dest` from outside any actor, straight to its process:
/// at once if connected already (or `dest` is here, or has no contact),
/// else through the dialer once it connected.
void send_to_peer(caf::actor_system& sys, const caf::actor& dest,
                  const std::string& contact, caf::message msg);

/// Whether this process has a connection of its own to `process`
/// (dialed by either side), so that messages go straight there.
bool connected_to(caf::actor_system& sys, const caf::node_id& process);

/// How long the dialer waits for a connection to a process.
inline constexpr std::chrono::milliseconds dial_timeout{4000};

/// How long `reach` waits for a connection before it goes on without one.
inline constexpr std::chrono::milliseconds reach_timeout{5000};

/// Runs `then` once messages from `self` to `process` go straight
/// there: at once if `process` is this process, is connected already, or has
/// no contact; else after connecting to `contact`. Meanwhile `self` handles no
/// other message, so what it sends later cannot overtake what `then` sends.
/// If no connection comes about, `then` runs anyway (what it sends takes
/// CAF's route through another process, or is lost with a dead process; its
/// sender's own timeouts and watches apply).
template <class Self, class F>
void reach(Self* self, const caf::node_id& process, const std::string& contact,
           F then) {
  if (!process || process == self->node() || contact.empty() ||
      connected_to(self->system(), process)) {
    then();
    return;
  }
  auto dialer = dialer_of(self->system());
  if (!dialer) {
    then();
    return;
  }
  self->request(dialer, reach_timeout, dial_atom::value, process, contact)
      .await(
          [then](bool) mutable { then(); },
          [then, contact](caf::error& err) mutable {
            component_logger("peers")->warn(
                "no direct connection to {}: {}; sending through the cluster",
                contact, caf::to_string(err));
            then();
          });
}

} // namespace prism::actors
