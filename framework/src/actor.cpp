#include "prism/actor.hpp"

namespace prism {

namespace detail {

const std::string& registered_method_name(const std::string& key) {
  if (auto name = function_registry::instance().name_of(key))
    return *name;
  throw function_not_found_error(
      "the actor method is not registered; register it with PRISM_REMOTE");
}

} // namespace detail

void exit_actor() {
  if (detail::current_actor() == nullptr)
    throw invalid_argument_error("exit_actor() called outside an actor");
  throw detail::actor_exit_signal{};
}

bool was_current_actor_restarted() noexcept {
  auto ctx = detail::current_actor();
  return ctx != nullptr && ctx->num_restarts > 0;
}

} // namespace prism
