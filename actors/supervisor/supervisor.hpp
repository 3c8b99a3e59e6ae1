#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/atom.hpp>

#include "prism/supervision.hpp"

namespace prism::actors {

/// One child of a supervisor: how to start it, when to restart it, and how to
/// stop it. A supervisor is a valid child: its `start` spawns a supervisor.
struct child_definition {
  /// Unique among the supervisor's children.
  std::string id;

  /// Spawns the child and returns its handle. Called on the supervisor's
  /// thread, so it must not block. An invalid handle or an exception is a
  /// failed start.
  std::function<caf::actor(caf::actor_system&)> start;

  restart_type restart = restart_type::permanent;

  shutdown_spec shutdown;
  /// Like `start`, but told the id of the child it starts: under
  /// simple_one_for_one each instance gets its own id. Used when set.
  std::function<caf::actor(caf::actor_system&, const std::string& id)>
      start_named;
  /// If set, the child's start completes only once the child answers
  /// `protocol::await_started`, which the supervisor asks with this timeout;
  /// no later child starts before. An error or no answer in time is a failed
  /// start (the child is killed). If empty, the child counts as started as
  /// soon as `start` returned it.
  std::optional<std::chrono::milliseconds> start_timeout;
  /// The child is a supervisor itself: `describe_tree_atom` asks it on.
  bool supervisor = false;
};

/// anyone in the supervisor's process -> supervisor: describe the tree
/// under you. Answered with JSON text: {"strategy", "intensity",
/// "period_ms", "mailbox" (messages the supervisor took in and has not
/// handled yet; those that arrived since it last looked are not counted),
/// "children":
/// [{"id", "supervisor", "running", "restart", "restarts", for a
/// supervisor child "tree": the same of its tree, and for a running child
/// actor "mailbox": the calls waiting in its host, not handed to a thread
/// yet (`protocol::queue_length_atom`)}]}, children in start order. A
/// nested supervisor that does not answer within 2 s is left without its
/// "tree", a child actor whose host does not answer within 1 s (and every
/// child actor past the first 256) without its "mailbox". The status page shows
/// it (supervisor/tree.cpp publishes it).
using describe_tree_atom = caf::atom_constant<caf::atom("desctree")>;

/// Where each running tree's description is kept in the key-value table,
/// by a key of its own, for the status page: JSON with "key", "job",
/// "namespace", "pid", "started_ms", "updated_ms" and "tree" (above).
inline constexpr const char* supervision_namespace = "prism.supervision";

/// Spawns a supervisor that starts `children` in order, each once the one
/// before has started (see `child_definition::start_timeout`), and keeps them
/// running as `flags` say (see README "Supervision trees"). It answers
/// `protocol::await_started` once every child was started once, so a
/// supervisor is a child with a `start_timeout` too. Under simple_one_for_one,
/// `children` holds exactly one definition, the template that every
/// `protocol::start_child` request instantiates.
///
/// The supervisor monitors its children (it does not link to them). Asked to
/// exit (an exit message that is not `normal`, typically from its parent), it
/// stops every child in reverse start order, then exits with the same reason.
/// Past its restart intensity it does the same and exits with
/// `protocol::supervisor_errc::intensity_exceeded`, an abnormal reason its own
/// supervisor restarts it for. If it is killed, its live children are killed
/// with it. It answers the requests of protocol/supervisor.hpp, whose types
/// `protocol::add_message_types` registers.
///
/// Throws `invalid_argument_error` on invalid flags, shutdown specs or ids, a
/// child without a `start`, or a simple_one_for_one without exactly one
/// definition.
caf::actor spawn_supervisor(caf::actor_system& sys, supervisor_flags flags,
                            std::vector<child_definition> children);

} // namespace prism::actors
