#pragma once

// Carries out where actors are hosted: asks `internal::place_actor` for a
// node, reserves the actor's resources there and tells its raylet; counts
// what each node's actors take.

#include "gcs/gcs_actor.hpp"
#include "prism/ids.hpp"

namespace prism::actors::gcs_detail {

struct actor_entry;
struct node_entry;

/// Gives the resources `a` reserved back to its node.
void release_node(gcs_actor* self, actor_entry& a);

/// Counts `a` against the resources of its node.
void occupy_node(gcs_actor* self, actor_entry& a);

/// Hosts `a` on a node that can, once durable; if none can now, it waits
/// among the unplaced actors.
void place(gcs_actor* self, actor_entry& a);

/// Places the actors that waited for a node, where one can host them now.
void place_unplaced(gcs_actor* self);

/// Sets what actors may still reserve on `n`, and how many it hosts, from
/// the actors placed there.
void count_placed_actors(gcs_actor* self, node_entry& n);

/// `node` died: the actors being started there are placed again.
void place_again_actors_starting_on(gcs_actor* self, const node_id& node);

} // namespace prism::actors::gcs_detail
