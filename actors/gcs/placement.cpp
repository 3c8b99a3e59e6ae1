#include "gcs/placement.hpp"

#include <vector>

#include <caf/all.hpp>

#include "gcs/gcs_state.hpp"
#include "prism/internal/actor_placement.hpp"

namespace prism::actors::gcs_detail {

void release_node(gcs_actor* self, actor_entry& a) {
  if (!a.placed)
    return;
  a.placed = false;
  auto& nodes = self->state.nodes.entries;
  if (auto n = nodes.find(a.node); n != nodes.end()) {
    n->second.actor_available.add(a.spec.resources);
    --n->second.num_actors;
  }
}

void occupy_node(gcs_actor* self, actor_entry& a) {
  a.placed = true;
  auto& nodes = self->state.nodes.entries;
  if (auto n = nodes.find(a.node); n != nodes.end()) {
    n->second.actor_available.subtract(a.spec.resources);
    ++n->second.num_actors;
  }
}

namespace {

/// The nodes as placement sees them, in the table's order.
std::vector<internal::placement_candidate> candidates(const node_table& t) {
  std::vector<internal::placement_candidate> result;
  result.reserve(t.entries.size());
  for (auto& [id, n] : t.entries)
    result.push_back(internal::placement_candidate{
        n.info.node, n.info.alive, n.actor_available, n.num_actors});
  return result;
}

} // namespace

void place(gcs_actor* self, actor_entry& a) {
  auto& st = self->state;
  auto choice = internal::place_actor(candidates(st.nodes), a.spec.resources);
  if (choice.verdict == internal::placement_verdict::wait) {
    st.log->warn("no node can host actor {} needing {{{}}}; it stays pending "
                 "until one joins",
                 a.spec.id.hex(), a.spec.resources.to_string());
    st.actors.unplaced.push_back(a.spec.id);
    return;
  }
  auto& host = st.nodes.entries.at(choice.node);
  a.node = choice.node;
  occupy_node(self, a);
  send_when_durable(
      self, host.info.raylet,
      caf::make_message(protocol::host_actor{a.spec, a.incarnation}));
}

void place_unplaced(gcs_actor* self) {
  auto& st = self->state.actors;
  auto waiting = std::move(st.unplaced);
  st.unplaced.clear();
  for (auto& id : waiting)
    if (auto a = st.entries.find(id); a != st.entries.end() &&
                                      a->second.state != actor_state::dead &&
                                      !a->second.placed)
      place(self, a->second);
}

void count_placed_actors(gcs_actor* self, node_entry& n) {
  n.actor_available = n.info.resources;
  n.num_actors = 0;
  for (auto& [id, a] : self->state.actors.entries)
    if (a.placed && a.node == n.info.node) {
      n.actor_available.subtract(a.spec.resources);
      ++n.num_actors;
    }
}

void place_again_actors_starting_on(gcs_actor* self, const node_id& node) {
  // Actors that were being started there will never report: they are
  // placed again, and no restart is used up, since that instance never ran
  // (a host that went down before its node did may have been placed there
  // again just now). The others' hosts go down with the node and are
  // handled one by one.
  for (auto& [id, a] : self->state.actors.entries)
    if (a.placed && a.node == node && !a.host && a.state != actor_state::dead) {
      if (a.recovering) {
        settle(self, a, "its node died");
        continue;
      }
      release_node(self, a);
      place(self, a);
    }
}

} // namespace prism::actors::gcs_detail
