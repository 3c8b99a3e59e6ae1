#pragma once

// The life of one autoscaler instance (a node the autoscaler asked a
// provider for, or found), as one table of allowed transitions. Every change
// goes through `change_state`, which checks the table and writes the change
// into the instance's history: an impossible change is refused and counted,
// never an abort.

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "prism/internal/state_machine.hpp"

namespace prism::internal {

/// Time as the autoscaler keeps it: milliseconds since the Unix epoch, from
/// the wall clock in a cluster, from a virtual clock in tests. Persisted, so
/// deadlines outlive a restart of the head.
using autoscaler_time = std::chrono::sys_time<std::chrono::milliseconds>;

enum class instance_state : std::uint8_t {
  /// Wanted; not asked of the provider yet.
  queued,
  /// Asked for (a launch with its request id); the provider lists nothing
  /// for it yet.
  requested,
  /// The provider lists it; its node has not joined the cluster yet.
  allocated,
  /// Its node is in the cluster.
  running,
  /// Asked to terminate (or to be cancelled); still listed.
  stopping,
  /// Gone. Final.
  terminated,
  /// Its launch failed or never showed; it ends as terminated.
  allocation_failed,
  /// Its termination failed or hangs; it is retried.
  termination_failed,
};

inline constexpr std::size_t num_instance_states = 8;

/// A short, stable name, e.g. "allocation_failed".
const char* to_string(instance_state s) noexcept;

/// One allowed change and when it happens.
using instance_transition = state_transition<instance_state>;

/// Every allowed change. Nothing leaves `terminated`.
inline constexpr std::array<instance_transition, 15> instance_transitions{{
    {instance_state::queued, instance_state::requested,
     "its launch was sent to the provider"},
    {instance_state::queued, instance_state::terminated,
     "it was cancelled, or could not be launched before its deadline"},
    {instance_state::requested, instance_state::allocated,
     "the provider lists it"},
    {instance_state::requested, instance_state::allocation_failed,
     "its launch failed, or nothing was listed for it before its deadline"},
    {instance_state::requested, instance_state::stopping,
     "it was cancelled before the provider listed it"},
    {instance_state::allocated, instance_state::running,
     "its node joined the cluster"},
    {instance_state::allocated, instance_state::stopping,
     "it is not needed, or its node did not join before its deadline"},
    {instance_state::allocated, instance_state::terminated,
     "the provider stopped listing it (preempted, or ended elsewhere)"},
    {instance_state::running, instance_state::stopping,
     "it is idle, above a maximum, or its node left the cluster"},
    {instance_state::running, instance_state::terminated,
     "the provider stopped listing it (preempted, or ended elsewhere)"},
    {instance_state::stopping, instance_state::terminated,
     "the provider no longer lists it"},
    {instance_state::stopping, instance_state::termination_failed,
     "its termination failed, or it was still listed past its deadline"},
    {instance_state::termination_failed, instance_state::stopping,
     "its termination is retried"},
    {instance_state::termination_failed, instance_state::terminated,
     "the provider no longer lists it"},
    {instance_state::allocation_failed, instance_state::terminated,
     "its failure was recorded"},
}};

using instance_state_machine = state_machine<instance_transitions>;

/// Whether `from -> to` is in the table.
constexpr bool allowed(instance_state from, instance_state to) noexcept {
  return instance_state_machine::allowed(from, to);
}

/// Whether the instance is wanted and not yet in the cluster.
constexpr bool is_pending(instance_state s) noexcept {
  return s == instance_state::queued || s == instance_state::requested ||
         s == instance_state::allocated;
}

/// Whether the instance counts toward a node type's size: pending or
/// running.
constexpr bool is_active(instance_state s) noexcept {
  return is_pending(s) || s == instance_state::running;
}

/// One change in an instance's history.
struct instance_event {
  autoscaler_time at;
  instance_state from;
  instance_state to;
  std::string why;
};

/// One instance and everything the autoscaler knows of it.
struct instance {
  /// The autoscaler's own id for it ("inst-…"), never reused.
  std::string id;
  std::string node_type;
  instance_state state = instance_state::queued;
  /// When it entered `state`.
  autoscaler_time since{};
  /// The request id of its launch, and how many instances that launch asked
  /// for (a retried launch asks for the same).
  std::string request_id;
  int request_count = 0;
  /// The provider's id and address, once listed.
  std::string cloud_id;
  std::string address;
  /// The cluster's id of its node, once it joined.
  std::string node_id;
  /// Launch calls sent for its request, and terminate calls for it.
  int launch_attempts = 0;
  int terminate_attempts = 0;
  /// A call for it (the launch of its request, its termination) is due.
  bool call_due = false;
  /// When its last call was sent.
  autoscaler_time called_at{};
  /// A termination that failed is sent again at this time.
  autoscaler_time retry_at{};
  /// When a listing last showed it, and how many listings in a row did not
  /// show it since.
  autoscaler_time seen_at{};
  int missed_listings = 0;
  /// Whether its node runs nothing, and since when (while running).
  bool idle = false;
  autoscaler_time idle_since{};
  /// Nobody asked for it: the provider listed it first.
  bool found = false;
  /// Its changes, oldest first: the first and the latest
  /// `max_instance_history - 1` are kept.
  std::vector<instance_event> history;
};

/// A new instance in `state` (queued when wanted, allocated when found),
/// its history begun with `why`.
instance new_instance(std::string id, std::string node_type,
                      instance_state state, autoscaler_time now,
                      std::string why);

/// How many changes of one instance its history keeps.
inline constexpr std::size_t max_instance_history = 32;

/// Moves `x` to `to` if the table allows it: records the change (with `why`)
/// in its history, sets `since` to `now` and returns true. Otherwise leaves
/// `x` as it is, counts the attempt, and returns false.
bool change_state(instance& x, instance_state to, autoscaler_time now,
                  std::string why);

/// How many changes `change_state` refused in this process.
std::uint64_t illegal_instance_transitions() noexcept;

} // namespace prism::internal
