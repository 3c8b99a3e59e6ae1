// The raylet actor: its start, its end, and its behaviour, which hands each
// message to the file of its job (see raylet_state.hpp).

#include "raylet/raylet.hpp"

#include <system_error>

#include <caf/all.hpp>

#include "common/default_handlers.hpp"
#include "common/log.hpp"
#include "net/network.hpp"
#include "protocol/raylet_worker.hpp"
#include "raylet/raylet_state.hpp"

namespace prism::actors {

namespace raylet_internal {

protocol::add_node registration(raylet_actor* self) {
  auto& st = self->state;
  return protocol::add_node{st.cfg.node, st.cfg.resources, self_handle(self),
                            {},          st.contact,       st.cfg.labels};
}

namespace {

void process_down(raylet_actor* self, const caf::down_msg& msg) {
  auto& st = self->state;
  unmap_all(self, msg.source);
  if (host_gone(self, msg))
    return;
  if (auto w = st.pool.find(msg.source)) {
    if (runs_processes(self))
      worker_disconnected(self, *w);
    else
      worker_gone(self, w->id,
                  "the worker exited: " + self->system().render(msg.reason));
  } else if (st.watched_owners.count(msg.source) > 0) {
    owner_gone(self, msg.source);
  } else {
    // Its series settle at the next retirement.
    st.metric_drivers.erase(msg.source);
  }
}

// Whether the sender is the host of an instance process of this node that
// ships the instance's metrics as `worker`.
bool ships_for_instance(raylet_actor* self, const worker_id& worker) {
  auto sender = self->current_sender();
  if (sender == nullptr)
    return false;
  for (const auto& [token, p] : self->state.instance_processes)
    if (p.metrics_id == worker && same_actor(p.requester, sender))
      return true;
  return false;
}

// Takes the metrics a worker process of this node, an instance process
// through its host, or a driver whose home
// it is, shipped; each sender's series count against its metrics' bounds.
// Answers true once taken (or refused), so that a driver's last shipment
// can be waited for.
bool take_user_metrics(raylet_actor* self, const protocol::user_metrics& msg) {
  auto& st = self->state;
  if (st.pool.find(msg.worker) == nullptr &&
      !ships_for_instance(self, msg.worker)) {
    auto sender = self->current_sender();
    if (sender == nullptr)
      return true;
    auto driver = st.metric_drivers.find(sender->address());
    if (driver == st.metric_drivers.end()) {
      if (st.metric_drivers.size() >= max_metric_drivers) {
        if (!st.metric_drivers_full)
          st.log->warn("drops the metrics of driver {} and later ones: this "
                       "node takes those of {} drivers at most",
                       msg.worker.hex(), max_metric_drivers);
        st.metric_drivers_full = true;
        return true;
      }
      driver = st.metric_drivers.emplace(sender->address(), msg.worker).first;
      self->monitor(caf::actor_cast<caf::actor>(sender));
    }
    if (driver->second != msg.worker)
      return true; // One shipper, one id.
  }
  st.user_metrics.apply(msg.worker.hex(), msg.series);
  return true;
}

void go_down(raylet_actor* self, const caf::exit_msg& msg) {
  // Going down takes every worker of the node with it, and their owners.
  auto& st = self->state;
  for (auto& id : st.pool.ids()) {
    kill_owner_of(self, id, msg.reason);
    if (auto w = st.pool.find(id); w != nullptr && w->pid != 0)
      st.cfg.launcher->kill(w->pid);
  }
  for (auto& h : st.pool.handles())
    self->send_exit(h, msg.reason);
  for (auto& [addr, h] : self->state.hosts)
    self->send_exit(h.host, msg.reason);
  self->quit(msg.reason);
}

// Where the node's store keeps objects: its arena or its bound, and its
// spill directory, unless that cannot be opened.
node_object_store::settings store_settings(const raylet_state& st) {
  node_object_store::settings s;
  s.arena = st.cfg.object_arena;
  s.capacity = st.cfg.store_capacity;
  if (st.cfg.spill_dir.empty())
    return s;
  try {
    s.spill = spill_directory::open(st.cfg.spill_dir, st.cfg.node);
    if (s.spill->swept() > 0)
      st.log->info("object store: deleted {} spill file(s) of nodes gone "
                   "from {}",
                   s.spill->swept(), s.spill->path());
  } catch (const std::system_error& e) {
    st.log->warn("object store: objects it cannot hold in memory are "
                 "refused, not spilled: {}",
                 e.what());
  }
  return s;
}

// Opens the port other nodes read large objects of this store from, on the
// host this process takes connections on: not on a TLS cluster, whose
// bytes all go over its encrypted connections.
void open_bulk_port(raylet_actor* self) {
  auto& st = self->state;
  if (st.contact.empty() || uses_tls(self->system()))
    return;
  try {
    st.bulk = std::make_unique<bulk_server>(
        parse_host_port(st.contact, "the node's contact").host);
    st.log->debug("object store: bulk reads on port {}", st.bulk->port());
  } catch (const std::exception& e) {
    st.log->warn("object store: other nodes read its objects over the "
                 "cluster connection only: {}",
                 e.what());
  }
}

// Takes up the node: its resources, its first workers, and its place in the
// control store's view of the cluster.
void start(raylet_actor* self, raylet_config cfg) {
  auto& st = self->state;
  st.cfg = std::move(cfg);
  st.log = component_logger("raylet");
  st.objects = node_object_store{store_settings(st)};
  st.contact = own_contact(self->system());
  open_bulk_port(self);
  st.here = internal::cluster_node{st.cfg.node, st.cfg.resources, true};
  st.available = st.cfg.resources;
  install_default_handlers(self, st.log);
  set_checked_down_handler(
      self, [self](caf::down_msg& msg) { process_down(self, msg); });
  self->set_exit_handler([self](caf::exit_msg& msg) { go_down(self, msg); });
  if (runs_processes(self)) {
    // Processes start per job, on demand.
    self->send(st.cfg.door, protocol::door_target{self_handle(self)});
    reap_idle_workers(self);
    // Only processes can be killed to free memory.
    check_memory(self);
    if (st.cfg.output)
      st.cfg.output->on_pending([me = self->address()] {
        if (auto r = caf::actor_cast<caf::actor>(me))
          caf::anon_send(r, output_atom::value);
      });
  } else {
    for (std::uint32_t i = 0; i < st.cfg.prestart_workers; ++i)
      start_worker(self);
  }
  self->send(st.cfg.gcs, registration(self));
  self->send(st.cfg.gcs, protocol::watch_gcs{self_handle(self)});
  if (st.cfg.report_interval.count() > 0)
    self->delayed_send(self, st.cfg.report_interval, report_atom::value);
}

caf::behavior raylet_behavior(raylet_actor* self, raylet_config cfg) {
  start(self, std::move(cfg));
  return {
      [self](protocol::lease_request& req) { request_lease(self, req); },
      [self](const protocol::lease_return& msg) {
        lease_returned(self, msg.lease_id);
      },
      [self](const protocol::cancel_kill& msg) {
        kill_for_cancel(
            self, msg.lease_id,
            caf::actor_cast<caf::actor_addr>(self->current_sender()));
      },
      [self](const protocol::worker_blocked& msg) {
        lend_cpu(self, msg.worker);
      },
      [self](const protocol::worker_unblocked& msg) {
        reclaim_cpu(self, msg.worker);
      },
      [self](const protocol::worker_hello& msg) {
        return worker_hello(self, msg);
      },
      [self](const protocol::worker_ready& msg) {
        return worker_ready(self, msg);
      },
      [self](const protocol::worker_launched& msg) {
        worker_launched(self, msg);
      },
      [self](const protocol::worker_exited& msg) { worker_exited(self, msg); },
      [self](const protocol::start_instance_process& msg) {
        return start_instance_process(self, msg);
      },
      [self](const protocol::instance_process_launched& msg) {
        instance_process_launched(self, msg);
      },
      [self](const protocol::instance_process_exited& msg) {
        instance_process_exited(self, msg);
      },
      [self](const protocol::check_worker_process& msg) {
        check_worker_process(self, msg.worker);
      },
      [self](protocol::reap_idle_atom) { reap_idle_workers(self); },
      [self](protocol::forget_program_atom, job_id job) {
        forget_program_if_unused(self, job);
      },
      [self](protocol::program_checked& msg) { program_checked(self, msg); },
      [self](const protocol::kill_worker& msg) {
        return kill_worker(self, msg.worker, "killed by fault injection");
      },
      [self](const protocol::query_resources&) { return node_resources(self); },
      [self](const protocol::query_node_metrics&) {
        return node_metrics(self);
      },
      [self](report_atom) { report_node(self); },
      [self](const protocol::user_metrics& msg) {
        return take_user_metrics(self, msg);
      },
      [self](const protocol::count_workers&) {
        return static_cast<std::uint64_t>(self->state.pool.size());
      },
      [self](protocol::view_size_atom) { return live_node_count(self); },
      [self](protocol::host_actor& msg) { start_actor_host(self, msg); },
      [self](protocol::host_actors& batch) {
        for (auto& msg : batch)
          start_actor_host(self, msg);
      },
      [self](hand_atom) { hand_queued_instances(self); },
      [self](output_atom) { send_output(self); },
      [self](output_atom, job_id job, std::uint64_t seq) {
        output_taken(self, job, seq);
      },
      [self](const protocol::flush_output& msg) {
        return flush_output(self, msg.job);
      },
      [self](const protocol::read_logs& msg) { return read_logs(self, msg); },
      [self](const protocol::list_state& msg) {
        return list_node_state(self, msg);
      },
      [self](const protocol::get_state& msg) {
        return get_node_state(self, msg);
      },
      [self](const protocol::summarize_state& msg) {
        return summarize_node_state(self, msg);
      },
      [self](const protocol::drop_instance& msg) { drop_instance(self, msg); },
      [self](const protocol::finish_job& msg) { finish_job(self, msg.job); },
      [self](protocol::cluster_view& msg) {
        view_changed(self, std::move(msg.nodes));
      },
      [self](const protocol::gcs_restarted& msg) { register_again(self, msg); },
      [self](const protocol::node_added& msg) {
        self->state.log->debug("node {} registered", msg.node.hex());
      },
      [self](const protocol::node_refused& msg) {
        self->state.log->warn("node {} is refused: {}", msg.node.hex(),
                              msg.reason);
        go_down(self,
                caf::exit_msg{self->address(),
                              caf::make_error(caf::sec::runtime_error,
                                              "refused by the control store: " +
                                                  msg.reason)});
      },
      [self](protocol::seal_result& msg) { return keep_result(self, msg); },
      [self](protocol::store_object& msg) { return store_sent(self, msg); },
      [self](const protocol::pull_object& msg) {
        return read_stored(self, msg);
      },
      [self](const protocol::map_object& msg) { return map_stored(self, msg); },
      [self](const protocol::unmap_object& msg) { unmap(self, msg.pin); },
      [self](const protocol::create_object& msg) {
        return create_stored(self, msg);
      },
      [self](protocol::seal_object& msg) { return seal_stored(self, msg); },
      [self](const protocol::free_object& msg) { free_stored(self, msg); },
      [self](room_atom) { try_waiting_keeps(self); },
      [self](memory_atom) { check_memory(self); },
      [self](const protocol::drop_objects&) { return drop_objects(self); },
      [self](const protocol::count_objects&) { return object_usage(self); },
  };
}

} // namespace

} // namespace raylet_internal

caf::actor spawn_raylet(caf::actor_system& sys, raylet_config cfg) {
  return sys.spawn(raylet_internal::raylet_behavior, std::move(cfg));
}

namespace {

struct door_state {
  static inline const char* name = "worker_door";
  caf::actor raylet;
};

} // namespace

caf::actor spawn_worker_door(caf::actor_system& sys) {
  // The logger is an argument: CAF 0.17 spawns a function without one
  // through a null pointer.
  auto door = [](caf::stateful_actor<door_state>* self,
                 std::shared_ptr<spdlog::logger> log) -> caf::behavior {
    install_default_handlers(self, log);
    set_checked_down_handler(self, [self](caf::down_msg&) {
      self->quit(caf::exit_reason::user_shutdown);
    });
    auto not_yet = [] {
      return caf::make_error(caf::sec::request_receiver_down,
                             "the node is not ready for workers");
    };
    return {
        [self](protocol::door_target& msg) {
          self->state.raylet = std::move(msg.raylet);
          self->monitor(self->state.raylet);
        },
        [self,
         not_yet](protocol::worker_hello& msg) -> caf::result<caf::message> {
          if (!self->state.raylet)
            return not_yet();
          return self->delegate(self->state.raylet, std::move(msg));
        },
        [self,
         not_yet](protocol::worker_ready& msg) -> caf::result<caf::message> {
          if (!self->state.raylet)
            return not_yet();
          return self->delegate(self->state.raylet, std::move(msg));
        },
    };
  };
  return sys.spawn(door, component_logger("raylet"));
}

} // namespace prism::actors
