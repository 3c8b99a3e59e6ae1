#include "join/head_link.hpp"

#include <algorithm>
#include <set>

#include <caf/all.hpp>
#include <caf/io/middleman.hpp>

#include "common/default_handlers.hpp"
#include "common/log.hpp"
#include "join/cluster_door.hpp"
#include "net/peers.hpp"
#include "prism/error.hpp"
#include "protocol/cluster_door.hpp"
#include "protocol/gcs_restart.hpp"

namespace prism::actors {

namespace {

using redial_atom = caf::atom_constant<caf::atom("hl_dial")>;
using clock_type = std::chrono::steady_clock;

constexpr auto first_backoff = std::chrono::milliseconds{100};
constexpr auto max_backoff = std::chrono::milliseconds{2000};

struct head_link_state {
  static inline const char* name = "head_link";

  head_link_config cfg;
  std::shared_ptr<spdlog::logger> log;
  std::chrono::milliseconds backoff{first_backoff};
  /// When the head became unreachable; meaningful while `cfg.remote` is
  /// invalid.
  clock_type::time_point lost_at;
  std::string last_failure;
};

using head_link_actor = caf::stateful_actor<head_link_state>;

void attach(head_link_actor* self, caf::actor remote) {
  auto& st = self->state;
  st.cfg.remote = std::move(remote);
  st.backoff = first_backoff;
  self->monitor(st.cfg.remote);
  self->send(st.cfg.endpoint, protocol::gcs_attach{st.cfg.remote});
}

void retry_later(head_link_actor* self, std::string why) {
  auto& st = self->state;
  if (clock_type::now() - st.lost_at >= st.cfg.give_up_after) {
    auto text =
        "the head at " + address_of(st.cfg.head) + " stayed unreachable for " +
        std::to_string(st.cfg.give_up_after.count()) + " ms; last: " + why;
    st.log->error("{}", text);
    if (st.cfg.lost)
      st.cfg.lost(text);
    self->quit(caf::exit_reason::user_shutdown);
    return;
  }
  if (why != st.last_failure)
    st.log->info("the head at {} does not answer yet ({}); dialing again",
                 address_of(st.cfg.head), why);
  st.last_failure = std::move(why);
  self->delayed_send(self, st.backoff, redial_atom::value);
  st.backoff = std::min(st.backoff * 2, max_backoff);
}

// Presents this process's entry at the head's `door`, and attaches to the
// control store it hands out.
void enter(head_link_actor* self, const caf::actor& door) {
  auto& st = self->state;
  self->request(door, st.cfg.dial_timeout,
                protocol::enter_cluster{st.cfg.entry.token, st.cfg.entry.role,
                                        own_contact(self->system())})
      .then(
          [self](caf::actor& remote) {
            if (!remote) {
              retry_later(self, "its door handed out no control store");
              return;
            }
            self->state.log->info("connected to the head at {} again",
                                  address_of(self->state.cfg.head));
            attach(self, std::move(remote));
          },
          [self](caf::error& err) {
            retry_later(self, "its door: " + self->system().render(err));
          });
}

void dial(head_link_actor* self) {
  auto& st = self->state;
  if (st.cfg.remote)
    return;
  // Blocks this actor's own thread, never a scheduler thread.
  auto why = probe_peer(self->system(), st.cfg.head, st.cfg.dial_timeout);
  if (!why.empty()) {
    retry_later(self, std::move(why));
    return;
  }
  self->request(connection_manager(self->system()), st.cfg.dial_timeout,
                caf::connect_atom::value, st.cfg.head.host, st.cfg.head.port)
      .then(
          [self](const caf::node_id&, caf::strong_actor_ptr& ptr,
                 const std::set<std::string>&) {
            if (!ptr) {
              retry_later(self, "it publishes no door");
              return;
            }
            enter(self, caf::actor_cast<caf::actor>(std::move(ptr)));
          },
          [self](caf::error& err) {
            retry_later(self, self->system().render(err));
          });
}

caf::behavior head_link_behavior(head_link_actor* self, head_link_config cfg) {
  auto& st = self->state;
  st.cfg = std::move(cfg);
  st.log = component_logger("cluster");
  install_default_handlers(self, st.log);
  set_checked_down_handler(self, [self](caf::down_msg& msg) {
    auto& st = self->state;
    if (!st.cfg.remote || msg.source != st.cfg.remote.address())
      return;
    st.log->warn("lost the connection to the head at {} ({}); dialing again",
                 address_of(st.cfg.head), self->system().render(msg.reason));
    st.cfg.remote = nullptr;
    st.lost_at = clock_type::now();
    st.last_failure.clear();
    dial(self);
  });
  auto remote = std::move(st.cfg.remote);
  attach(self, std::move(remote));
  return {
      [self](redial_atom) { dial(self); },
  };
}

} // namespace

caf::actor spawn_head_link(caf::actor_system& sys, head_link_config cfg) {
  return sys.spawn<caf::detached>(head_link_behavior, std::move(cfg));
}

caf::actor connect_to_head(caf::actor_system& sys, const host_port& where,
                           const head_entry& entry,
                           std::chrono::milliseconds timeout) {
  auto fail = [&](const std::string& why) {
    return gcs_unavailable_error("cannot reach the Prism head at " +
                                 address_of(where) + ": " + why);
  };
  std::string why;
  auto door = dial_published(sys, where, timeout, why);
  if (!door)
    throw fail(why.empty() ? "it publishes no door" : why);
  try {
    return enter_cluster(sys, door, entry.token, entry.role, timeout);
  } catch (const permission_denied_error& e) {
    throw permission_denied_error("cannot join the Prism head at " +
                                  address_of(where) + ": " + e.what());
  } catch (const gcs_unavailable_error& e) {
    throw fail(e.what());
  }
}

} // namespace prism::actors
