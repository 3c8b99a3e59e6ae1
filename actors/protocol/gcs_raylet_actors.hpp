#pragma once

// The conversation between the control store, the raylets that host actors,
// and the actor hosts themselves.

#include <cstdint>
#include <string>
#include <vector>

#include <caf/actor.hpp>

#include "prism/detail/runtime.hpp"
#include "prism/internal/actor_spec.hpp"

namespace prism::protocol {

/// gcs -> raylet: start an instance of the actor on this node.
struct host_actor {
  internal::actor_spec spec;
  std::int32_t incarnation = 0;
  /// raylet -> worker process: the instance of an actor of its own process
  /// runs in an instance process (worker/instance_wire.hpp), which its
  /// host has its node start; the host shares its process with others.
  bool instance_process = false;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, host_actor& x) {
  return f(x.spec, x.incarnation, x.instance_process);
}

/// gcs -> raylet: several `host_actor` at once, in order. raylet -> worker
/// process: the instances to host in it (one, or its job's shared ones),
/// answered with their hosts (`std::vector<caf::actor>`), in order.
using host_actors = std::vector<host_actor>;

/// gcs -> raylet: the instance of `host_actor` with this incarnation is no
/// longer wanted: the actor died (killed, or its owner died) before the
/// instance was reported started. Not started yet, it never starts; its
/// process, if starting, is stopped once it registers.
struct drop_instance {
  actor_id actor;
  std::int32_t incarnation = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, drop_instance& x) {
  return f(static_cast<unique_id&>(x.actor), x.incarnation);
}

/// actor host -> gcs: the instance is constructed and takes calls.
struct actor_started {
  actor_id actor;
  std::int32_t incarnation = 0;
  caf::actor host;
  node_id node;
  /// Where the host's process takes connections.
  std::string contact;
  /// The host's process.
  std::int32_t pid = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, actor_started& x) {
  return f(static_cast<unique_id&>(x.actor), x.incarnation, x.host,
           static_cast<unique_id&>(x.node), x.contact, x.pid);
}

/// worker process -> gcs: several `actor_started` of its hosts at once.
using actors_started = std::vector<actor_started>;

/// raylet -> gcs: the instance is lost: the process that was to host it did
/// not start or register, or the process that hosted it died. The actor
/// restarts if it may. (The control store's own watch of a host in a worker
/// process behind another node is not enough: CAF 0.17 tells no one when a
/// process reached through another one dies.)
struct actor_instance_lost {
  actor_id actor;
  std::int32_t incarnation = 0;
  std::string why;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, actor_instance_lost& x) {
  return f(static_cast<unique_id&>(x.actor), x.incarnation, x.why);
}

/// actor host -> gcs: the instance ends for good: its factory threw
/// (`constructor_failed`), or a method called `exit_actor` (`exited`).
struct actor_ended {
  actor_id actor;
  std::int32_t incarnation = 0;
  internal::death_kind kind = internal::death_kind::none;
  std::string cause;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, actor_ended& x) {
  return f(static_cast<unique_id&>(x.actor), x.incarnation, x.kind, x.cause);
}

} // namespace prism::protocol
