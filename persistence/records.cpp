#include "records.hpp"

namespace prism::persistence {

const char* to_string(actor_state s) noexcept {
  switch (s) {
  case actor_state::pending:
    return "pending";
  case actor_state::alive:
    return "alive";
  case actor_state::restarting:
    return "restarting";
  case actor_state::dead:
    return "dead";
  }
  return "unknown";
}

} // namespace prism::persistence
