#pragma once

// The actors of the cluster: each one's state, instance and subscribers,
// their names, who owns them, and the dead ones still remembered.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_addr.hpp>
#include <caf/atom.hpp>
#include <caf/system_messages.hpp>

#include "gcs/gcs_actor.hpp"
#include "prism/ids.hpp"
#include "prism/internal/actor_spec.hpp"
#include "protocol/owner_gcs.hpp"
#include "protocol/raylet_gcs.hpp"
#include "records.hpp"

namespace prism::actors::gcs_detail {

using internal::actor_state;

/// Time to forget the dead actors past the limit.
using forget_atom = caf::atom_constant<caf::atom("forget")>;

/// One restart of an actor, for `prism get actor`: the instance it
/// replaced was lost. Stored with the actor.
using restart_note = persistence::restart_record;

/// How many restarts of an actor are remembered, the last ones.
inline constexpr std::size_t max_restart_notes = 32;

/// What an actor has only at times, held apart from its entry: most
/// actors never have any of it.
struct actor_extras {
  /// Where its host's process takes connections: a host in a worker
  /// process (one in the control store's own process takes none).
  std::string host_contact;
  /// Its last restarts, oldest first.
  std::vector<restart_note> restarts;
  /// The spec as the control store held it, kept only when it did not
  /// decode: written back as it was, not as the part of it that `spec`
  /// holds. Otherwise each write encodes `spec`, which costs a
  /// microsecond and spares every actor a copy of its spec.
  std::optional<std::string> unreadable_spec;
};

/// An actor the control store knows, alive or dead (up to
/// `gcs_max_dead_actors` of those). Kept in 360 bytes: with its id and the
/// map's link, 384, jemalloc's size of that, not 448 (the static_assert
/// below), for live and dead actors alike; what most actors never have is
/// held apart (`actor_extras`).
struct actor_entry {
  internal::actor_spec spec;
  caf::actor host;
  /// The node the actor lives on or is being started on.
  node_id node;
  std::string death_cause;
  std::vector<caf::actor> subscribers;
  /// Null until it has some (`extras_of`).
  std::unique_ptr<actor_extras> extras;
  /// The process of its instance, or of its last one; 0 if it did not say
  /// (recovered from storage).
  std::int32_t pid = 0;
  std::int32_t incarnation = 0;
  /// Changed only by `set_state`; set once by `restore_state` when the
  /// actor is recovered from storage.
  actor_state state = actor_state::pending;
  bool placed = false;
  internal::death_kind death_kind = internal::death_kind::none;
  /// Recovered from storage and not yet found alive or lost: no update is
  /// published for it meanwhile, so that its callers carry on undisturbed.
  bool recovering = false;
};

static_assert(sizeof(actor_entry) <= 360,
              "an actor's entry no longer fits jemalloc's 384-byte size with "
              "its map node");

/// The extras of `a`, made now if it has none.
inline actor_extras& extras_of(actor_entry& a) {
  if (!a.extras)
    a.extras = std::make_unique<actor_extras>();
  return *a.extras;
}

/// Where the host of `a` takes connections; empty if nowhere.
inline const std::string& host_contact(const actor_entry& a) {
  static const std::string none;
  return a.extras ? a.extras->host_contact : none;
}

struct actor_table {
  std::unordered_map<actor_id, actor_entry> entries;
  std::map<std::pair<std::string, std::string>, actor_id> named;
  std::unordered_map<caf::actor_addr, actor_id> by_host;
  /// Non-detached actors by the owner they share fate with.
  std::unordered_map<caf::actor_addr, std::vector<actor_id>> by_owner;
  /// Actors no node can host now, placed when one can.
  std::vector<actor_id> unplaced;
  /// Dead actors, those that died first in front; past `max_dead` the first
  /// are forgotten.
  std::deque<actor_id> dead;
  std::size_t max_dead = 100000;
  bool forget_scheduled = false;
};

/// Moves `a` to `to` if the actor table allows it
/// (internal::actor_transitions) and returns true. Otherwise logs the
/// impossible change, which is counted, leaves `a` as it is and returns
/// false: the caller applies nothing of the change. Every change of an
/// actor's state goes through here.
[[nodiscard]] bool set_state(gcs_actor* self, actor_entry& a, actor_state to);

/// Gives `a`, just made from its record in storage, the state the record
/// holds: where its life in this control store begins, not a change, so no
/// table is checked.
void restore_state(actor_entry& a, actor_state stored);

/// What subscribers of `a` learn of it.
protocol::actor_update update_of(const actor_entry& a);

/// What a subscriber of an actor the control store does not know learns.
protocol::actor_update unknown_actor_update(const actor_id& id);

/// Writes `a` to the storage.
void save_actor(gcs_actor* self, const actor_entry& a);

/// Writes that `a`, whose record was last written whole while it was pending
/// and had never restarted, is now alive on `a.node`: the change alone
/// (`write_batch::put_actor_started`), not the whole record.
void save_actor_started(gcs_actor* self, const actor_entry& a);

/// Tells every subscriber of `a` its state, once durable.
void publish(gcs_actor* self, const actor_entry& a);

/// Adds `who` to the subscribers of `a`, unless it is one or `a` is dead.
void add_subscriber(actor_entry& a, const caf::actor& who);

/// Notes that the non-detached actor `id` shares fate with `owner`.
void add_owned(gcs_actor* self, const caf::actor& owner, const actor_id& id);

/// Keeps dead actor `id` among the remembered ones; past the limit, those
/// that died first are forgotten soon after (not here: callers may be
/// walking the table).
void remember_dead(gcs_actor* self, const actor_id& id);

/// Forgets the dead actors that died first, past the limit.
void forget_dead(gcs_actor* self);

/// `a` is dead for `kind`, said by `cause`; ends its instance.
void mark_dead(gcs_actor* self, actor_entry& a, internal::death_kind kind,
               const std::string& cause);

/// The instance of `a` is gone: restart it if it may, else it is dead.
void instance_lost(gcs_actor* self, actor_entry& a, const std::string& why);

/// The node `node` died: the instances it hosted are lost with it, whether
/// or not word of their hosts' ends arrives (a host in a worker process
/// behind that node sends none).
void instances_lost_with_node(gcs_actor* self, const node_id& node,
                              const std::string& why);

/// Takes `host` as the instance of `a`, without saving the change; false
/// if it is stale.
bool take_instance(gcs_actor* self, actor_entry& a, const caf::actor& host,
                   std::int32_t incarnation, const node_id& node,
                   const std::string& contact);

/// Takes `host` as the live instance of `a` (reported after a restart of
/// the control store); false if it is stale.
bool reattach_instance(gcs_actor* self, actor_entry& a, const caf::actor& host,
                       std::int32_t incarnation, const node_id& node,
                       const std::string& contact);

/// Reattaches the instances a registering node hosts; those unknown or
/// stale end.
void reattach_hosted(gcs_actor* self, const protocol::add_node& msg);

/// If `msg` tells of an actor's instance, it is gone; returns whether it
/// did.
bool host_down(gcs_actor* self, const caf::down_msg& msg);

/// The actors that share fate with `owner` die with it.
void owner_gone(gcs_actor* self, const caf::actor_addr& owner);

} // namespace prism::actors::gcs_detail
