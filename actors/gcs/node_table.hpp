#pragma once

// The nodes of the cluster: which are alive, what actors may still reserve
// on each, and the view of them every raylet gets.

#include <cstddef>
#include <string>
#include <unordered_map>
#include <vector>

#include <caf/system_messages.hpp>

#include "gcs/gcs_actor.hpp"
#include "prism/ids.hpp"
#include "prism/internal/resource_set.hpp"
#include "protocol/raylet_gcs.hpp"

namespace prism::actors::gcs_detail {

struct node_entry {
  protocol::node_info info;
  /// What actors may still reserve on the node.
  internal::resource_set actor_available;
  std::size_t num_actors = 0;
  /// Alive before the control store restarted, and not registered since.
  bool awaited = false;
};

struct node_table {
  std::unordered_map<node_id, node_entry> entries;
  /// How many entries are `awaited`.
  std::size_t awaited = 0;
};

/// Writes `n` to the storage.
void save_node(gcs_actor* self, const node_entry& n);

/// Tells every live raylet which nodes exist.
void broadcast_view(gcs_actor* self);

/// A raylet registers its node, with the actor instances it hosts (after a
/// restart of the control store).
void register_node(gcs_actor* self, protocol::add_node& msg);

/// Every node the control store knows, alive or dead.
std::vector<protocol::node_info> list_nodes(const gcs_state& st);

/// If `msg` tells of the raylet of a live node, that node is dead now;
/// returns whether it did.
bool raylet_down(gcs_actor* self, const caf::down_msg& msg);

} // namespace prism::actors::gcs_detail
