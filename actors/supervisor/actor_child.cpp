#include "supervisor/actor_child.hpp"

#include <caf/all.hpp>

#include "common/handlers.hpp"
#include "common/log.hpp"
#include "protocol/owner_gcs.hpp"

namespace prism::actors {

namespace {

constexpr auto create_timeout = std::chrono::seconds{10};

/// The death cause the control store reports for an actor that called
/// `exit_actor` (see actor_host.cpp): a normal exit for its supervisor.
constexpr const char* exit_actor_cause =
    "the actor exited by calling exit_actor";

struct child_state {
  static inline const char* name = "actor_child";

  internal::actor_spec spec;
  caf::actor gcs;
};

using child_actor = caf::stateful_actor<child_state>;

caf::error failure(const std::string& why) {
  return caf::make_error(caf::sec::runtime_error, why);
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
    self->quit(msg.reason);
  });
  self->request(
          st.gcs, create_timeout,
          protocol::create_actor{st.spec, caf::actor_cast<caf::actor>(self)})
      .then(
          [self](detail::error_info& result) {
            if (result.code != errc::ok)
              self->quit(failure("cannot create actor '" +
                                 self->state.spec.name +
                                 "': " + result.message));
          },
          [self](caf::error& err) {
            self->quit(failure("cannot create actor '" + self->state.spec.name +
                               "': " + self->system().render(err)));
          });
  return {
      [self](const protocol::actor_update& update) {
        if (update.actor != self->state.spec.id ||
            update.state != internal::actor_state::dead)
          return;
        if (update.death_cause == exit_actor_cause)
          self->quit(caf::exit_reason::normal);
        else
          self->quit(failure(update.death_cause));
      },
  };
}

} // namespace

caf::actor spawn_actor_child(caf::actor_system& sys, internal::actor_spec spec,
                             caf::actor gcs) {
  return sys.spawn(child_behavior, std::move(spec), std::move(gcs));
}

} // namespace prism::actors
