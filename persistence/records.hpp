#pragma once

// The records of the control store's tables, as plain values. How they are
// encoded on disk (protobuf, see records.proto) is the store's business.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <prism/ids.hpp>

namespace prism::persistence {

/// Table `jobs`: one driver's session.
struct job_record {
  job_id job;
  worker_id driver;
  std::string ns;
  bool finished = false;
  /// When the job started, in milliseconds since the Unix epoch.
  std::int64_t start_ms = 0;
  /// The program its worker processes run: path and arguments on the
  /// driver's host, SHA-256 (hex) and size of its bytes. Empty for a job
  /// whose driver runs in the process of the cluster.
  std::string program_path;
  std::vector<std::string> program_args;
  std::string program_sha256;
  std::uint64_t program_size = 0;

  friend bool operator==(const job_record&, const job_record&) = default;
};

/// Table `nodes`: one raylet and what it offers.
struct node_record {
  node_id node;
  std::map<std::string, double> resources;
  bool alive = true;

  friend bool operator==(const node_record&, const node_record&) = default;
};

/// An actor's lifecycle: pending -> alive -> restarting -> alive ... -> dead.
enum class actor_state : std::uint8_t { pending, alive, restarting, dead };

/// Returns "pending", "alive", "restarting" or "dead".
const char* to_string(actor_state s) noexcept;

/// Why an actor died, for code to act on (`death_cause` says it in words):
/// the kinds of `prism::internal::death_kind`, in the same order. `none`
/// while it lives, and in records written before kinds were stored.
enum class death_kind : std::uint8_t {
  none,
  exited,
  killed,
  constructor_failed,
  out_of_restarts,
  owner_died,
  job_ended,
  lost,
};

/// One restart of an actor: the instance it replaced was lost.
struct restart_record {
  /// Which restart it was (1 for the first).
  std::int32_t restart = 0;
  std::int64_t unix_ms = 0;
  /// Where the lost instance ran.
  node_id node;
  std::string cause;

  friend bool operator==(const restart_record&,
                         const restart_record&) = default;
};

/// Table `actors`: one actor for its whole life, with what it takes to
/// re-create it.
struct actor_record {
  actor_id actor;
  job_id job;
  /// Empty for an anonymous actor.
  std::string name;
  std::string ns;
  bool detached = false;
  /// -1 restarts forever.
  std::int32_t max_restarts = 0;
  std::int32_t num_restarts = 0;
  actor_state state = actor_state::pending;
  /// Why the actor died; empty unless `state == actor_state::dead`.
  std::string death_cause;
  persistence::death_kind death_kind = persistence::death_kind::none;
  /// Where the actor runs or last ran; nil while pending.
  node_id node;
  worker_id owner;
  /// Opaque bytes the actors layer serializes; enough to re-create the actor.
  std::string creation_spec;
  /// Its last restarts, oldest first.
  std::vector<restart_record> restarts;

  friend bool operator==(const actor_record&, const actor_record&) = default;
};

/// Table `lineage`: how to make a durable task's result again after its
/// owner died. Kept until the task's job ends.
struct lineage_record {
  object_id object;
  job_id job;
  /// Opaque bytes the actors layer serializes: the task as its owner ran it,
  /// its arguments resolved to values.
  std::string task_spec;

  friend bool operator==(const lineage_record&,
                         const lineage_record&) = default;
};

/// Table `named_actors`: the actor that holds a name in a namespace.
struct named_actor_entry {
  std::string ns;
  std::string name;
  actor_id actor;

  friend bool operator==(const named_actor_entry&,
                         const named_actor_entry&) = default;
};

/// Table `kv`: the user key-value table. Keys are scoped by namespace; values
/// are opaque bytes.
struct kv_entry {
  std::string ns;
  std::string key;
  std::string value;

  friend bool operator==(const kv_entry&, const kv_entry&) = default;
};

/// Table `requests`: a client's write that the control store applied, with
/// its answer, so that the same write arriving again (a retry) is answered
/// alike instead of applied twice. Written in the same atomic batch as the
/// change; the oldest are forgotten.
struct applied_request {
  /// Counts up in the order the writes were applied.
  std::uint64_t order = 0;
  /// The client's random id and its number for the write.
  unique_id client;
  std::uint64_t seq = 0;
  bool result = false;

  friend bool operator==(const applied_request&,
                         const applied_request&) = default;
};

} // namespace prism::persistence
