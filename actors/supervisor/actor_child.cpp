#include "supervisor/actor_child.hpp"

#include <vector>

#include <caf/all.hpp>

#include "common/default_handlers.hpp"
#include "common/log.hpp"
#include "net/peers.hpp"
#include "protocol/owner_gcs.hpp"
#include "protocol/supervisor.hpp"

namespace prism::actors {

namespace {

constexpr auto create_timeout = std::chrono::seconds{10};

struct child_state {
  static inline const char* name = "actor_child";

  internal::actor_spec spec;
  caf::actor gcs;
  /// The actor has been alive: its constructor ran.
  bool started = false;
  /// Requests (`await_started`) waiting for the actor to be alive.
  std::vector<caf::response_promise> start_waiters;
  /// The host of its instance while it is alive, and where the host's
  /// process takes connections.
  caf::actor host;
  std::string host_contact;
};

/// How long the actor's host may take to say how many calls wait in it.
constexpr auto host_answer_timeout = std::chrono::milliseconds{800};

using child_actor = caf::stateful_actor<child_state>;

caf::error failure(const std::string& why) {
  return caf::make_error(caf::sec::runtime_error, why);
}

// Exits with `reason`; a start still awaited has failed.
void end(child_actor* self, caf::error reason) {
  auto& st = self->state;
  for (auto& rp : st.start_waiters)
    rp.deliver(protocol::make_error(protocol::supervisor_errc::start_failed,
                                    st.spec.name));
  st.start_waiters.clear();
  self->quit(std::move(reason));
}

void on_update(child_actor* self, const protocol::actor_update& update) {
  auto& st = self->state;
  if (update.actor != st.spec.id)
    return;
  if (update.state == internal::actor_state::alive) {
    st.host = update.host;
    st.host_contact = update.host_contact;
  } else {
    st.host = nullptr;
  }
  if (update.state == internal::actor_state::alive && !st.started) {
    st.started = true;
    for (auto& rp : st.start_waiters)
      rp.deliver(caf::unit);
    st.start_waiters.clear();
    return;
  }
  if (update.state != internal::actor_state::dead)
    return;
  // Only an actor that ended itself finished its work; the kind says so,
  // whatever the words of the cause.
  if (update.death_kind == internal::death_kind::exited)
    end(self, caf::exit_reason::normal);
  else
    end(self, failure(update.death_cause));
}

caf::result<void> on_await_started(child_actor* self) {
  auto& st = self->state;
  if (st.started)
    return caf::unit;
  auto rp = self->make_response_promise();
  st.start_waiters.push_back(rp);
  return rp;
}

// Asks the actor's host how many calls wait in it, straight from this
// process.
caf::result<std::uint64_t> on_queue_length(child_actor* self) {
  auto& st = self->state;
  if (!st.host)
    return failure("actor '" + st.spec.name + "' is not alive");
  auto rp = self->make_response_promise<std::uint64_t>();
  auto host = st.host;
  reach(self, host.node(), st.host_contact, [self, host, rp]() mutable {
    self->request(host, host_answer_timeout, protocol::queue_length_atom::value)
        .then([rp](std::uint64_t n) mutable { rp.deliver(n); },
              [rp](caf::error& err) mutable { rp.deliver(std::move(err)); });
  });
  return rp;
}

caf::behavior child_behavior(child_actor* self, internal::actor_spec spec,
                             caf::actor gcs) {
  static const auto log = component_logger("supervisor");
  auto& st = self->state;
  st.spec = std::move(spec);
  st.gcs = std::move(gcs);
  install_default_handlers(self, log);
  self->set_exit_handler([self](caf::exit_msg& msg) {
    self->send(self->state.gcs,
               protocol::kill_actor{self->state.spec.id, true});
    end(self, msg.reason);
  });
  self->request(
          st.gcs, create_timeout,
          protocol::create_actor{st.spec, caf::actor_cast<caf::actor>(self)})
      .then(
          [self](detail::error_info& result) {
            if (result.code != errc::ok)
              end(self,
                  failure("cannot create actor '" + self->state.spec.name +
                          "': " + result.message));
          },
          [self](caf::error& err) {
            end(self, failure("cannot create actor '" + self->state.spec.name +
                              "': " + self->system().render(err)));
          });
  return {
      [self](const protocol::actor_update& update) { on_update(self, update); },
      [self](const protocol::actor_updates& updates) {
        for (const auto& update : updates)
          on_update(self, update);
      },
      [self](protocol::await_started) { return on_await_started(self); },
      [self](protocol::queue_length_atom) { return on_queue_length(self); },
  };
}

} // namespace

caf::actor spawn_actor_child(caf::actor_system& sys, internal::actor_spec spec,
                             caf::actor gcs) {
  return sys.spawn(child_behavior, std::move(spec), std::move(gcs));
}

} // namespace prism::actors
