#pragma once

// The nodes of the cluster: which are alive, what actors may still reserve
// on each, and the view of them every raylet gets.

#include <chrono>
#include <cstddef>
#include <string>
#include <unordered_map>
#include <vector>

#include <caf/system_messages.hpp>

#include "gcs/gcs_actor.hpp"
#include "prism/ids.hpp"
#include "prism/internal/node_state.hpp"
#include "prism/internal/resource_set.hpp"
#include "protocol/metrics.hpp"
#include "protocol/raylet_gcs.hpp"

namespace prism::actors::gcs_detail {

using internal::node_state;

struct node_entry {
  /// What raylets and `list_nodes` learn of it; `info.alive` is whether
  /// `state` is alive, kept so by `set_state` and `restore_state`.
  protocol::node_info info;
  /// What actors may still reserve on the node.
  internal::resource_set actor_available;
  std::size_t num_actors = 0;
  /// A node joins alive. Changed only by `set_state`; set once by
  /// `restore_state` when the node is recovered from storage.
  node_state state = node_state::alive;
  /// When it last reported (`protocol::node_report`) or registered, and
  /// what it reported: its heartbeat.
  std::chrono::steady_clock::time_point last_report{};
  internal::resource_set reported_available;
  std::uint64_t objects = 0;
  std::uint64_t object_bytes = 0;
};

struct node_table {
  std::unordered_map<node_id, node_entry> entries;
  /// How many entries are awaited.
  std::size_t awaited = 0;
};

/// Moves `n` to `to` if the node table allows it
/// (internal::node_transitions) and returns true. Otherwise logs the
/// impossible change, which is counted, leaves `n` as it is and returns
/// false: the caller applies nothing of the change. Every change of a
/// node's state goes through here.
[[nodiscard]] bool set_state(gcs_actor* self, node_entry& n, node_state to);

/// Gives `n`, just made from its record in storage, the state it begins
/// with: awaited if the record says it was alive, else dead. Not a change,
/// so no table is checked.
void restore_state(gcs_actor* self, node_entry& n, bool stored_alive);

/// Writes `n` to the storage.
void save_node(gcs_actor* self, const node_entry& n);

/// Tells every live raylet which nodes exist.
void broadcast_view(gcs_actor* self);

/// A raylet registers its node, with the actor instances it hosts (after a
/// restart of the control store).
void register_node(gcs_actor* self, protocol::add_node& msg);

/// A live node reports that it is there, and what it has free.
void node_reported(gcs_actor* self, const protocol::node_report& msg);

/// Every node the control store knows, alive or dead.
std::vector<protocol::node_info> list_nodes(const gcs_state& st);

/// If `msg` tells of the raylet of a live node, that node is dead now;
/// returns whether it did.
bool raylet_down(gcs_actor* self, const caf::down_msg& msg);

} // namespace prism::actors::gcs_detail
