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
/// Ship what changed now, and answer once the raylet has it.
using ship_now_atom = caf::atom_constant<caf::atom("shipnow")>;

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

caf::result<bool> ship_now(shipper_actor* self,
                           std::chrono::milliseconds timeout) {
  auto& st = self->state;
  auto changed = internal::user_metric_registry::global().take_changed();
  auto rp = self->make_response_promise<bool>();
  // Messages of one sender arrive in order: the raylet's answer comes
  // after it took every shipment before.
  self->request(st.raylet, timeout,
                protocol::user_metrics{st.worker, std::move(changed)})
      .then([rp](bool) mutable { rp.deliver(true); },
            [rp](const caf::error&) mutable { rp.deliver(false); });
  return rp;
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
      [self](ship_now_atom, std::int64_t timeout_ms) {
        return ship_now(self, std::chrono::milliseconds{timeout_ms});
      },
      // The raylet's answer to a shipment sent without a request.
      [](bool) {},
  };
}

} // namespace

caf::actor spawn_metrics_shipper(caf::actor_system& sys, caf::actor raylet,
                                 worker_id worker,
                                 std::chrono::milliseconds interval) {
  return sys.spawn(metrics_shipper, std::move(raylet), worker, interval);
}

bool ship_metrics_now(caf::actor_system& sys, const caf::actor& shipper,
                      std::chrono::milliseconds timeout) {
  caf::scoped_actor self{sys};
  bool shipped = false;
  // The shipper's own request times out first.
  self->request(shipper, timeout * 2, ship_now_atom::value,
                static_cast<std::int64_t>(timeout.count()))
      .receive([&](bool ok) { shipped = ok; }, [](const caf::error&) {});
  return shipped;
}

} // namespace prism::actors
