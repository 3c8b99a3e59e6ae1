#pragma once

// Rebuilding the tables from storage, and the grace period after a restart
// in which nodes, actor instances and owners report back.

#include <string>
#include <unordered_set>

#include <caf/atom.hpp>

#include "gcs/gcs.hpp"
#include "gcs/gcs_actor.hpp"
#include "prism/ids.hpp"

namespace prism::actors::gcs_detail {

struct actor_entry;

/// The grace period after a restart is over.
using grace_atom = caf::atom_constant<caf::atom("grace_end")>;

struct recovery_state {
  /// In the grace period after a restart.
  bool active = false;
  /// Non-detached actors whose owner has not reported back yet.
  std::unordered_set<actor_id> unclaimed;
};

/// Rebuilds the tables from storage. After a cluster start nothing in them
/// is alive: detached actors are placed again, the rest are dead. After a
/// restart nodes, actor instances and owners are given the grace period to
/// report back.
void recover(gcs_actor* self, const gcs_config& cfg);

/// The grace period is over: what did not report back is dead.
void end_grace(gcs_actor* self);

/// A recovered actor was not found alive: start it again. Only an instance
/// that had been running uses up a restart.
void settle(gcs_actor* self, actor_entry& a, const std::string& why);

/// Settles every recovered actor not found yet (on `node`, or anywhere if
/// `node` is nil).
void settle_missing(gcs_actor* self, const node_id& node,
                    const std::string& why);

} // namespace prism::actors::gcs_detail
