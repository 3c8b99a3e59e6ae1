#include "common/default_handlers.hpp"

#include <caf/all.hpp>

namespace prism::actors {

void install_default_handlers(caf::scheduled_actor* self,
                              std::shared_ptr<spdlog::logger> log) {
  self->set_error_handler([log](caf::scheduled_actor* me, caf::error& err) {
    log->warn("{}: error message ignored: {}", me->name(),
              me->system().render(err));
  });
  self->set_default_handler(
      [log](caf::scheduled_actor* me,
            caf::message_view& view) -> caf::result<caf::message> {
        log->warn("{}: unexpected message dropped: {}", me->name(),
                  caf::to_string(view.copy_content_to_message()));
        if (me->current_message_id().is_request())
          return caf::sec::unexpected_message;
        return caf::delegated<caf::message>{};
      });
  self->set_exit_handler([](caf::scheduled_actor* me, caf::exit_msg& msg) {
    me->quit(msg.reason);
  });
  self->set_down_handler([log](caf::scheduled_actor* me, caf::down_msg& msg) {
    log->info("{}: watched actor went down: {}", me->name(),
              me->system().render(msg.reason));
  });
}

} // namespace prism::actors
