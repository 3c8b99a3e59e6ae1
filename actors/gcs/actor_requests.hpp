#pragma once

// What owners, subscribers and actor hosts ask of the actor table.

#include <caf/response_promise.hpp>

#include "gcs/gcs_actor.hpp"
#include "protocol/gcs_raylet_actors.hpp"
#include "protocol/gcs_restart.hpp"
#include "protocol/owner_gcs.hpp"

namespace prism::actors::gcs_detail {

/// An owner creates an actor: it is registered (under its name, if any) and
/// placed; answered once durable. The same request again is done already.
caf::response_promise create_actor(gcs_actor* self,
                                   protocol::create_actor& msg);

/// An actor host reports its instance constructed: the actor is alive, or
/// the instance is stale and ends.
void accept_started_instance(gcs_actor* self, protocol::actor_started& msg);

/// An actor's instance could not start on its node, or its process died: it
/// is lost, and the actor restarts if it may.
void instance_failed(gcs_actor* self, const protocol::actor_instance_lost& msg);

/// An actor's instance ended for good (it exited or failed to construct).
void end_actor(gcs_actor* self, const protocol::actor_ended& msg);

/// Subscribes to an actor's updates; the subscriber gets its state now.
void subscribe_actor(gcs_actor* self, protocol::subscribe_actor& msg);

/// An owner subscribes again after a restart of the control store, and
/// claims the non-detached actors it owns.
void resubscribe_actors(gcs_actor* self, protocol::resubscribe_actors& msg);

/// The actor of a name, once every change before is durable.
caf::response_promise lookup_actor(gcs_actor* self,
                                   const protocol::lookup_actor& msg);

/// Kills an actor, for good or to restart it; answers whether it was alive.
caf::response_promise kill_actor(gcs_actor* self,
                                 const protocol::kill_actor& msg);

/// Where an actor lives, if it is alive.
protocol::actor_location locate_actor(const gcs_state& st,
                                      const protocol::locate_actor& msg);

} // namespace prism::actors::gcs_detail
