#pragma once

// How the control store comes back after it died: the endpoint that gives it
// a stable address, and what raylets, actor hosts and owners tell a new
// control store so that it knows again what it knew.

#include <cstdint>
#include <vector>

#include <caf/actor.hpp>

#include "prism/ids.hpp"

namespace prism::protocol {

/// cluster -> gcs endpoint: `gcs` is the control store now; messages that
/// waited for it go to it, and the watchers hear `gcs_restarted`.
struct gcs_attach {
  caf::actor gcs;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, gcs_attach& x) {
  return f(x.gcs);
}

/// raylet or owner -> gcs endpoint: tell me when a new control store takes
/// over, so that I can tell it what I hold.
struct watch_gcs {
  caf::actor watcher;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, watch_gcs& x) {
  return f(x.watcher);
}

/// gcs endpoint -> watchers, raylet -> its actor hosts: a new control store
/// recovered from storage and knows no live handles yet.
struct gcs_restarted {
  std::uint64_t generation = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, gcs_restarted& x) {
  return f(x.generation);
}

/// One actor instance a raylet hosts, reported when its node registers again.
struct hosted_actor {
  actor_id actor;
  std::int32_t incarnation = 0;
  caf::actor host;
  /// Where the host's process takes connections.
  std::string contact;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, hosted_actor& x) {
  return f(static_cast<unique_id&>(x.actor), x.incarnation, x.host, x.contact);
}

/// owner -> gcs, after a restart: send me updates of these actors again; the
/// ones I created and that are not detached share my fate again.
struct resubscribe_actors {
  worker_id owner_id;
  caf::actor owner;
  std::vector<actor_id> actors;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, resubscribe_actors& x) {
  return f(static_cast<unique_id&>(x.owner_id), x.owner, x.actors);
}

} // namespace prism::protocol
