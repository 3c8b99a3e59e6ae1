#include "join/cluster_door.hpp"

#include <caf/all.hpp>

#include "common/default_handlers.hpp"
#include "common/log.hpp"
#include "common/secret.hpp"
#include "net/peers.hpp"
#include "prism/error.hpp"
#include "protocol/cluster_door.hpp"

namespace prism::actors {

namespace {

/// Why a process that presented `presented` is refused, "" if it is not.
std::string refusal(const std::string& token, const std::string& presented) {
  if (token.empty() || same_secret(token, presented))
    return "";
  return presented.empty() ? "it presented no cluster token"
                           : "it presented a wrong cluster token";
}

caf::behavior door(caf::event_based_actor* self, caf::actor endpoint,
                   std::string token) {
  auto log = component_logger("cluster");
  install_default_handlers(self, log);
  return {
      [self, endpoint, token,
       log](const protocol::enter_cluster& msg) -> caf::result<caf::actor> {
        auto why = refusal(token, msg.token);
        if (why.empty())
          return endpoint;
        auto sender = self->current_sender();
        log->warn("refused a {} at {} (process {}): {}",
                  msg.role.empty() ? std::string{"process"} : msg.role,
                  msg.contact.empty() ? std::string{"?"} : msg.contact,
                  sender ? caf::to_string(sender->node()) : std::string{"?"},
                  why);
        return caf::make_error(caf::sec::invalid_argument,
                               std::string{token_refused} + ": " + why +
                                   " (PRISM_AUTH_TOKEN, or a token file: see "
                                   "README, Security)");
      },
  };
}

} // namespace

caf::actor spawn_cluster_door(caf::actor_system& sys, caf::actor endpoint,
                              std::string token) {
  return sys.spawn(door, std::move(endpoint), std::move(token));
}

caf::actor enter_cluster(caf::actor_system& sys, const caf::actor& door,
                         const std::string& token, const std::string& role,
                         std::chrono::milliseconds timeout) {
  caf::scoped_actor self{sys};
  caf::actor endpoint;
  std::string why;
  self->request(door, timeout,
                protocol::enter_cluster{token, role, own_contact(sys)})
      .receive([&](caf::actor& e) { endpoint = std::move(e); },
               [&](caf::error& err) {
                 auto& context = err.context();
                 why = context.match_elements<std::string>()
                           ? context.get_as<std::string>(0)
                           : sys.render(err);
               });
  if (endpoint)
    return endpoint;
  if (why.rfind(token_refused, 0) == 0)
    throw permission_denied_error(why);
  throw gcs_unavailable_error("the head did not let this process in: " + why);
}

} // namespace prism::actors
