#include "protocol/registration.hpp"

namespace prism::protocol {

namespace {

template <class... Entries>
void add_each(caf::actor_system_config& cfg,
              caf::detail::type_list<Entries...>) {
  (cfg.add_message_type<typename Entries::type>(Entries::name), ...);
}

} // namespace

void add_message_types(caf::actor_system_config& cfg) {
  add_each(cfg, message_types{});
  // CAF 0.17.6's add_error_category<T> does not compile; render by hand.
  cfg.add_error_category(supervisor_error_category, render_supervisor_error);
}

} // namespace prism::protocol
