#include "common/default_handlers.hpp"

#include <caf/all.hpp>

#include "common/log.hpp"

namespace prism::actors {

namespace {

/// Installs the handlers; `log()` gives the logger, and `log` is copied
/// into each of them.
template <class Log>
void install_handlers(caf::scheduled_actor* self, Log log) {
  self->set_error_handler([log](caf::scheduled_actor* me, caf::error& err) {
    log()->warn("{}: error message ignored: {}", me->name(),
                me->system().render(err));
  });
  self->set_default_handler(
      [log](caf::scheduled_actor* me, caf::message_view& view) {
        return drop_unexpected(me, view, *log());
      });
  self->set_exit_handler([](caf::scheduled_actor* me, caf::exit_msg& msg) {
    me->quit(msg.reason);
  });
  self->set_down_handler([log](caf::scheduled_actor* me, caf::down_msg& msg) {
    if (genuine_down(me, msg))
      log()->info("{}: watched actor went down: {}", me->name(),
                  me->system().render(msg.reason));
  });
}

} // namespace

void install_default_handlers(caf::scheduled_actor* self,
                              std::shared_ptr<spdlog::logger> log) {
  install_handlers(self, [log = std::move(log)] { return log.get(); });
}

void install_default_handlers(caf::scheduled_actor* self, lasting_logger log) {
  install_handlers(self, log);
}

caf::result<caf::message> drop_unexpected(caf::scheduled_actor* me,
                                          caf::message_view& view,
                                          spdlog::logger& log) {
  // A peer may send anything of any size: the log shows its start.
  auto text = caf::to_string(view.copy_content_to_message());
  if (text.size() > 200)
    text = text.substr(0, 200) + "... (" + std::to_string(text.size()) +
           " characters)";
  log.warn("{}: unexpected message dropped: {}", me->name(), text);
  if (me->current_message_id().is_request())
    return caf::sec::unexpected_message;
  return caf::delegated<caf::message>{};
}

bool genuine_down(caf::scheduled_actor* self, const caf::down_msg& msg) {
  auto sender = self->current_sender();
  if (sender != nullptr && sender->address() == msg.source)
    return true;
  component_logger("security")
      ->warn("{}: dropped a forged down message from {} (it names {})",
             self->name(),
             sender != nullptr ? caf::to_string(sender->address())
                               : std::string{"nobody"},
             caf::to_string(msg.source));
  return false;
}

} // namespace prism::actors
