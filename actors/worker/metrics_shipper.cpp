#include "worker/metrics_shipper.hpp"

#include <caf/all.hpp>

#include "common/default_handlers.hpp"
#include "common/log.hpp"
#include "prism/internal/user_metrics.hpp"
#include "protocol/metrics.hpp"

namespace prism::actors {

namespace {

/// Time to ship what changed.
using ship_atom = caf::atom_constant<caf::atom("ship")>;

struct shipper_state {
  static inline const char* name = "metrics_shipper";
  caf::actor raylet;
  worker_id worker;
  std::chrono::milliseconds interval{1000};
};

using shipper_actor = caf::stateful_actor<shipper_state>;

void ship(shipper_actor* self) {
  auto& st = self->state;
  auto changed = internal::user_metric_registry::global().take_changed();
  if (!changed.empty())
    self->send(st.raylet,
               protocol::user_metrics{st.worker, std::move(changed)});
  self->delayed_send(self, st.interval, ship_atom::value);
}

caf::behavior metrics_shipper(shipper_actor* self, caf::actor raylet,
                              worker_id worker,
                              std::chrono::milliseconds interval) {
  auto& st = self->state;
  st.raylet = std::move(raylet);
  st.worker = worker;
  st.interval = interval;
  install_default_handlers(self, component_logger("worker"));
  self->monitor(st.raylet);
  set_checked_down_handler(self, [self](caf::down_msg&) { self->quit(); });
  self->delayed_send(self, st.interval, ship_atom::value);
  return {
      [self](ship_atom) { ship(self); },
  };
}

} // namespace

caf::actor spawn_metrics_shipper(caf::actor_system& sys, caf::actor raylet,
                                 worker_id worker,
                                 std::chrono::milliseconds interval) {
  return sys.spawn(metrics_shipper, std::move(raylet), worker, interval);
}

} // namespace prism::actors
