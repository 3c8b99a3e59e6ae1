#pragma once

#include <caf/scheduled_actor.hpp>
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

} // namespace prism::actors
