#pragma once

#include <caf/scheduled_actor.hpp>
#include <caf/system_messages.hpp>
#include <spdlog/logger.h>

namespace prism::actors {

/// Sets the error, default, exit and down handlers every Prism actor needs,
/// so that no stray message or error makes it quit: errors and unexpected
/// messages are logged and dropped (a request gets an error reply), an exit
/// message from a linked actor ends this one with the same reason, and a
/// down message is logged. Actors that monitor others replace the down
/// handler.
void install_default_handlers(caf::scheduled_actor* self,
                              std::shared_ptr<spdlog::logger> log);

/// A logger that lives as long as the program (a function-local static).
using lasting_logger = const std::shared_ptr<spdlog::logger>& (*)();

/// The same, for an actor of which there are many (an actor host per
/// actor): each handler holds only the function, which a handler stores
/// in place, where one holding a logger is allocated, for each handler of
/// each actor.
void install_default_handlers(caf::scheduled_actor* self, lasting_logger log);

/// What the default handler does with a message no handler of `me` takes:
/// logs its start to `log` and drops it; a request gets an error reply.
/// For a default handler of an actor's own that takes some messages itself.
caf::result<caf::message> drop_unexpected(caf::scheduled_actor* me,
                                          caf::message_view& view,
                                          spdlog::logger& log);

/// Whether `msg`, the down message `self` handles, is one CAF sent: its
/// sender is the actor it reports on (a local actor that ended, or the
/// proxy of a remote one). Any process connected to this one can send an
/// actor a message that looks like a down message, naming an actor it
/// watches; such a forgery is logged and must be dropped.
bool genuine_down(caf::scheduled_actor* self, const caf::down_msg& msg);

/// Sets `f` as the down handler of `self`, for genuine down messages only
/// (`genuine_down`).
template <class Self, class F>
void set_checked_down_handler(Self* self, F f) {
  self->set_down_handler([self, f = std::move(f)](caf::down_msg& msg) {
    if (genuine_down(self, msg))
      f(msg);
  });
}

} // namespace prism::actors
