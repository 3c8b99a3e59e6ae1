// The actors the control store places on this node: each instance runs in an
// actor host of its own, which takes the instance's resources from the node
// until it ends.

#include "raylet/raylet_state.hpp"
#include "worker/actor_host.hpp"

namespace prism::actors::raylet_internal {

void start_actor_host(raylet_actor* self, protocol::host_actor& msg) {
  if (runs_processes(self)) {
    host_in_process(self, msg);
    return;
  }
  auto& st = self->state;
  auto resources = msg.spec.resources;
  auto hc_actor = msg.spec.id;
  if (!st.actor_clients)
    st.actor_clients = std::make_shared<actor_client_settings>(
        st.cfg.node, self_handle(self), st.cfg.gcs, st.cfg.directory,
        st.cfg.max_inline_bytes);
  actor_host_config hc;
  hc.client = st.actor_clients->of(msg.spec.ns);
  hc.spec = std::move(msg.spec);
  hc.incarnation = msg.incarnation;
  hc.pool = st.cfg.actor_pool;
  auto host = spawn_actor_host(self->system(), std::move(hc));
  self->monitor(host);
  st.available.subtract(resources);
  st.hosts.emplace(host.address(),
                   hosted_instance{.host = host,
                                   .resources = held_resources(resources),
                                   .actor = hc_actor,
                                   .incarnation = msg.incarnation,
                                   .worker = worker_id{}});
}

void drop_instance(raylet_actor* self, const protocol::drop_instance& msg) {
  auto& st = self->state;
  if (drop_unstarted_host(self, msg)) {
    st.log->debug("actor {} (instance {}) died before it started: not started",
                  msg.actor.hex(), msg.incarnation);
    schedule(self);
    return;
  }
  // Started, and its report not yet read by the control store: killed here
  // at once (the control store would kill it on its report), its resources
  // freed when its end is seen.
  for (auto& [addr, h] : st.hosts)
    if (h.actor == msg.actor && h.incarnation == msg.incarnation) {
      self->send_exit(h.host, caf::exit_reason::kill);
      return;
    }
}

bool host_gone(raylet_actor* self, const caf::down_msg& msg) {
  auto& st = self->state;
  auto h = st.hosts.find(msg.source);
  if (h == st.hosts.end())
    return false;
  if (h->second.resources)
    st.available.add(*h->second.resources);
  auto gone = std::move(h->second);
  st.hosts.erase(h);
  if (!gone.worker.nil()) {
    // A host in a worker process of its own: its process exits with it (one
    // that lingers is killed). A process shared by actors lives on: its own
    // watch says if it died. An end other than a normal one (the process
    // died, or the host was killed) the control store hears from here too:
    // its own watch of the host reaches it through this node, and CAF 0.17
    // sends no word when a process behind another one dies. Whichever word
    // comes second finds the instance handled.
    if (auto w = st.pool.find(gone.worker)) {
      if (w->shares_actors)
        instance_ended_in(self, *w);
      else
        worker_disconnected(self, *w);
    }
    if (msg.reason != caf::exit_reason::normal)
      self->send(st.cfg.gcs, protocol::actor_instance_lost{
                                 gone.actor, gone.incarnation,
                                 "its host ended (" +
                                     self->system().render(msg.reason) + ")"});
  }
  schedule(self);
  return true;
}

void register_again(raylet_actor* self, const protocol::gcs_restarted& msg) {
  // A new control store knows this node and its actors only from
  // storage: register again, with the instances hosted here, and have
  // each host confirm it is running.
  auto& st = self->state;
  auto again = registration(self);
  for (auto& [addr, h] : st.hosts) {
    auto w = h.worker.nil() ? nullptr : st.pool.find(h.worker);
    again.hosted.push_back(protocol::hosted_actor{
        h.actor, h.incarnation, h.host,
        w != nullptr && !w->contact.empty() ? w->contact : st.contact});
    self->send(h.host, msg);
  }
  self->send(st.cfg.gcs, std::move(again));
}

} // namespace prism::actors::raylet_internal
