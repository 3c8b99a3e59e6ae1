#include "gcs/node_table.hpp"

#include <caf/all.hpp>

#include "gcs/gcs_state.hpp"

namespace prism::actors::gcs_detail {

// -- state --------------------------------------------------------------------

bool set_state(gcs_actor* self, node_entry& n, node_state to) {
  auto& st = self->state;
  auto from = n.state;
  if (!internal::transition(n.state, to)) {
    st.log->error("node {}: impossible change {} -> {}, ignored",
                  n.info.node.hex(), internal::to_string(from),
                  internal::to_string(to));
    return false;
  }
  if (from == node_state::awaited)
    --st.nodes.awaited;
  n.info.alive = to == node_state::alive;
  return true;
}

void restore_state(gcs_actor* self, node_entry& n, bool stored_alive) {
  n.state = stored_alive ? node_state::awaited : node_state::dead;
  n.info.alive = false;
  if (stored_alive)
    ++self->state.nodes.awaited;
}

// -- the view of the cluster --------------------------------------------------

void save_node(gcs_actor* self, const node_entry& n) {
  if (!self->state.durability.storage)
    return;
  persistence::write_batch b;
  b.put_node(persistence::node_record{n.info.node, n.info.resources.to_map(),
                                      n.info.alive});
  commit(self, std::move(b));
}

// Tells every live raylet which nodes exist, so that each can send work it
// cannot run to a node that can.
void broadcast_view(gcs_actor* self) {
  protocol::cluster_view view;
  for (auto& [id, n] : self->state.nodes.entries)
    // A node still awaited after a restart is neither known alive nor dead
    // yet: left out, work pinned to it waits instead of being refused.
    if (n.state != node_state::awaited)
      view.nodes.push_back(n.info);
  for (auto& [id, n] : self->state.nodes.entries)
    if (n.state == node_state::alive)
      self->send(n.info.raylet, view);
}

// -- joining and leaving ------------------------------------------------------

void node_reported(gcs_actor* self, const protocol::node_report& msg) {
  auto i = self->state.nodes.entries.find(msg.node);
  if (i == self->state.nodes.entries.end() ||
      i->second.state != node_state::alive)
    return; // Not registered yet, or fenced: its next registration counts.
  auto& n = i->second;
  n.last_report = std::chrono::steady_clock::now();
  n.reported_available = msg.available;
  n.objects = msg.objects;
  n.object_bytes = msg.object_bytes;
}

void register_node(gcs_actor* self, protocol::add_node& msg) {
  auto& st = self->state;
  if (auto i = st.nodes.entries.find(msg.node);
      i != st.nodes.entries.end() && i->second.state == node_state::dead) {
    // Fenced: its actors restarted elsewhere and its tasks were retried;
    // nothing it reports may be applied now.
    st.log->warn("node {} was declared dead and is refused: it may join "
                 "again as a new node",
                 msg.node.hex());
    self->send(msg.raylet,
               protocol::node_refused{msg.node,
                                      "the control store declared this node "
                                      "dead; it may join again as a new node"});
    return;
  }
  // A node new to the table joins alive; one registering again (its
  // registration repeated after a restart of the control store) stays so.
  auto& n = st.nodes.entries[msg.node];
  bool was_awaited = n.state == node_state::awaited;
  if (was_awaited && !set_state(self, n, node_state::alive))
    return;
  self->monitor(msg.raylet);
  st.log->info("node {} joined with {{{}}}", msg.node.hex(),
               msg.resources.to_string());
  n.info = protocol::node_info{msg.node, msg.resources, msg.raylet,
                               true,     msg.contact,   msg.labels};
  n.last_report = std::chrono::steady_clock::now();
  n.reported_available = msg.resources;
  count_placed_actors(self, n);
  save_node(self, n);
  reattach_hosted(self, msg);
  self->send(msg.raylet, protocol::node_added{msg.node});
  if (was_awaited)
    settle_missing(self, msg.node,
                   "its instance was gone when its node registered again");
  if (st.recovery.active && st.nodes.awaited == 0)
    settle_missing(self, node_id{},
                   "its node did not come back after the control store "
                   "restarted");
  broadcast_view(self);
  place_unplaced(self);
}

std::vector<protocol::node_info> list_nodes(const gcs_state& st) {
  std::vector<protocol::node_info> result;
  for (auto& [id, node] : st.nodes.entries)
    result.push_back(node.info);
  return result;
}

namespace {

void node_gone(gcs_actor* self, node_entry& n, const std::string& why) {
  if (!set_state(self, n, node_state::dead))
    return;
  self->state.log->warn("node {} is dead: {}", n.info.node.hex(), why);
  save_node(self, n);
  broadcast_view(self);
  place_again_actors_starting_on(self, n.info.node);
  instances_lost_with_node(self, n.info.node, why);
}

} // namespace

bool raylet_down(gcs_actor* self, const caf::down_msg& msg) {
  for (auto& [id, node] : self->state.nodes.entries)
    if (node.state == node_state::alive &&
        node.info.raylet.address() == msg.source) {
      node_gone(self, node, self->system().render(msg.reason));
      return true;
    }
  return false;
}

} // namespace prism::actors::gcs_detail
