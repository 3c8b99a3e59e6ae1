#pragma once

// The conversation between owners (drivers, workers, actors) and the control
// store about actors: creation, lookup by name, kills, and the updates an
// owner receives for each actor it calls.

#include <cstdint>
#include <string>

#include <caf/actor.hpp>

#include "prism/detail/runtime.hpp"
#include "prism/internal/actor_spec.hpp"

namespace prism::protocol {

/// owner -> gcs: create an actor. Answered with an `error_info` whose code is
/// `ok` when the actor is registered (its name was free); the creator's
/// owner is subscribed to the actor's updates. With `get_if_exists` (named
/// actors only), answered with an `actor_found` instead: `found` with the
/// live actor that has the name, or not found when this one was registered.
struct create_actor {
  internal::actor_spec spec;
  caf::actor owner;
  bool get_if_exists = false;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, create_actor& x) {
  return f(x.spec, x.owner, x.get_if_exists);
}

/// owner -> gcs: send me the actor's state now and whenever it changes.
struct subscribe_actor {
  actor_id actor;
  caf::actor subscriber;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, subscribe_actor& x) {
  return f(static_cast<unique_id&>(x.actor), x.subscriber);
}

/// gcs -> owner: an actor's state changed. `host` is where calls go while
/// alive; `incarnation` counts restarts. Once dead, `death_kind` says why for
/// code to act on, `death_cause` for people to read.
struct actor_update {
  actor_id actor;
  internal::actor_state state = internal::actor_state::pending;
  caf::actor host;
  std::int32_t incarnation = 0;
  std::int32_t max_task_retries = 0;
  internal::death_kind death_kind = internal::death_kind::none;
  std::string death_cause;
  /// Where `host`'s process takes connections.
  std::string host_contact;
  /// The node and process of its instance (nil and 0 while unknown).
  node_id node;
  std::int32_t pid = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, actor_update& x) {
  return f(static_cast<unique_id&>(x.actor), x.state, x.host, x.incarnation,
           x.max_task_retries, x.death_kind, x.death_cause, x.host_contact,
           static_cast<unique_id&>(x.node), x.pid);
}

/// gcs -> owner (or any subscriber): several `actor_update` at once, in
/// order.
using actor_updates = std::vector<actor_update>;

/// anyone -> gcs: find a live named actor. Answered with `actor_found`.
struct lookup_actor {
  std::string ns;
  std::string name;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, lookup_actor& x) {
  return f(x.ns, x.name);
}

struct actor_found {
  bool found = false;
  actor_id actor;
  std::uint64_t class_tag = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, actor_found& x) {
  return f(x.found, static_cast<unique_id&>(x.actor), x.class_tag);
}

/// anyone -> gcs: kill an actor; with `no_restart` false it restarts if its
/// options allow. Answered with `true` if the actor was alive or restarting.
struct kill_actor {
  actor_id actor;
  bool no_restart = true;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, kill_actor& x) {
  return f(static_cast<unique_id&>(x.actor), x.no_restart);
}

/// anyone -> gcs: where does the actor live? Answered with `actor_location`.
struct locate_actor {
  actor_id actor;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, locate_actor& x) {
  return f(static_cast<unique_id&>(x.actor));
}

struct actor_location {
  bool alive = false;
  node_id node;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, actor_location& x) {
  return f(x.alive, static_cast<unique_id&>(x.node));
}

} // namespace prism::protocol
