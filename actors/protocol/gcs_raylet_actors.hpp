#pragma once

// The conversation between the control store, the raylets that host actors,
// and the actor hosts themselves.

#include <cstdint>
#include <string>

#include <caf/actor.hpp>

#include "prism/detail/runtime.hpp"
#include "prism/internal/actor_spec.hpp"

namespace prism::protocol {

/// gcs -> raylet: start an instance of the actor on this node.
struct host_actor {
  internal::actor_spec spec;
  std::int32_t incarnation = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, host_actor& x) {
  return f(x.spec, x.incarnation);
}

/// actor host -> gcs: the instance is constructed and takes calls.
struct actor_started {
  actor_id actor;
  std::int32_t incarnation = 0;
  caf::actor host;
  node_id node;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, actor_started& x) {
  return f(static_cast<unique_id&>(x.actor), x.incarnation, x.host,
           static_cast<unique_id&>(x.node));
}

/// actor host -> gcs: the instance ends for good: its factory threw
/// (`constructor_failed`), or a method called `exit_actor` (`exited`).
struct actor_ended {
  actor_id actor;
  std::int32_t incarnation = 0;
  internal::death_kind kind = internal::death_kind::none;
  std::string cause;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, actor_ended& x) {
  return f(static_cast<unique_id&>(x.actor), x.incarnation, x.kind, x.cause);
}

} // namespace prism::protocol
