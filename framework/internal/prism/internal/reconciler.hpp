#pragma once

// The autoscaler's loop body: one pass records what the provider and the
// cluster report, moves instances through their state machine, asks the
// policy what to launch and stop, and calls the provider. It never sleeps
// and never asserts: every wait is a deadline checked on a later pass, and
// every surprise (an instance nobody asked for, one not listed yet, a
// provider that throws) is a state or a recorded failure.

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "prism/config.hpp"
#include "prism/internal/autoscaler_config.hpp"
#include "prism/internal/instance_state.hpp"
#include "prism/node_provider.hpp"

namespace prism::internal {

/// One live node of the cluster, as the control store reports it.
struct cluster_node_view {
  std::string node_id;
  /// The provider's id of the instance it runs on, as the node reported it
  /// when it joined; empty for a node the autoscaler did not launch (the
  /// head, a node started by hand).
  std::string cloud_id;
  resource_map total;
  resource_map free;
  /// Whether nothing runs on it, and since when.
  bool idle = false;
  autoscaler_time idle_since{};
};

/// What the cluster reports for one pass.
struct cluster_view {
  std::vector<cluster_node_view> nodes;
  /// The resource requests of tasks and actors that wait for a node.
  std::vector<resource_map> demand;
};

/// Where instances are kept so that they outlive a restart of the head. A
/// call that throws is retried on the next pass.
class instance_storage {
public:
  virtual ~instance_storage() = default;

  /// Writes these instances (whole), durably, before returning.
  virtual void save(const std::vector<const instance*>& changed) = 0;

  /// Forgets the instances `ids`.
  virtual void erase(const std::vector<std::string>& ids) = 0;

  /// Every instance written and not erased.
  virtual std::vector<instance> load() = 0;
};

/// A failure the autoscaler saw, for `prism status`.
struct autoscaler_failure {
  autoscaler_time at{};
  /// Empty if it concerns no node type (a listing that failed).
  std::string node_type;
  /// A short class, e.g. "capacity", "throttled", "never_joined".
  std::string cause;
  std::string message;
};

/// What the autoscaler knows and decided, as `prism status` shows it.
struct autoscaler_status {
  autoscaler_time at{};
  struct type_line {
    std::string node_type;
    int busy = 0;
    int idle = 0;
    /// Pending: wanted, launched, and listed but not joined.
    int queued = 0;
    int requested = 0;
    int allocated = 0;
    int stopping = 0;
    /// Launch failures in a row, and the end of the backoff they caused.
    int failures = 0;
    autoscaler_time backed_off_until{};
  };
  std::vector<type_line> types;
  /// The latest failures, oldest first.
  std::vector<autoscaler_failure> failures;
  /// Demand by shape, and the part of it no type can serve or that waits
  /// for a type backed off or at its maximum.
  std::vector<std::pair<resource_map, int>> demand;
  std::vector<std::pair<resource_map, int>> infeasible;
  std::vector<std::pair<resource_map, int>> waiting;
  /// Instances found so far, and passes run.
  std::uint64_t found = 0;
  std::uint64_t passes = 0;
};

/// `status` as text, in the manner of `ray status`.
std::string format_status(const autoscaler_status& status);

class reconciler {
public:
  /// Reads the instances `storage` holds (none if it is null), so that a
  /// restarted head goes on where the last one stopped; throws what
  /// `storage->load()` throws (starting without them would launch again
  /// what they stand for). `seed` seeds the jitter and the prefix of every
  /// id it makes.
  reconciler(autoscaler_config cfg, node_provider& provider,
             instance_storage* storage, std::uint64_t seed);

  /// One pass at time `now`: observe, decide, act. Never throws.
  void step(autoscaler_time now, const cluster_view& cluster);

  /// What the last pass saw and decided.
  const autoscaler_status& status() const noexcept {
    return status_;
  }

  /// Every instance it knows (terminated ones for a while too), by id.
  const std::unordered_map<std::string, instance>& instances() const noexcept {
    return instances_;
  }

  const autoscaler_config& config() const noexcept {
    return cfg_;
  }

  /// Where it says what it does, a line per change of an instance's state.
  void set_log(std::function<void(const std::string&)> log) {
    log_ = std::move(log);
  }

private:
  // -- observing -------------------------------------------------------------

  void observe_errors();
  void observe_listing();
  /// One instance of the listing, whichever of ours it is, if any.
  void observe_listed(const cloud_instance& c);
  /// One of ours listed still: seen now, at the address listed.
  void seen_again(instance& x, const cloud_instance& c);
  /// The instance of ours whose launch made `c` and that waits for it.
  instance* waiting_for(const cloud_instance& c);
  /// `owner`'s launch made `c`: it is allocated, or, if it was cancelled,
  /// due to be terminated.
  void match(instance& owner, const cloud_instance& c);
  /// An instance none of ours waits for: taken on, allocated (and stopped
  /// again if `terminate_again`).
  void add_found(const cloud_instance& c, bool terminate_again);
  /// Ours that the listing lacks (`seen` holds the cloud ids it listed):
  /// gone once missed often and long enough.
  void observe_unlisted(const std::unordered_set<std::string>& seen);
  void observe_cluster(const cluster_view& cluster);
  void enforce_deadlines();

  // -- deciding and acting ---------------------------------------------------

  void decide(const cluster_view& cluster);
  void act();
  void send_launches();
  void send_terminations();

  // -- bookkeeping -----------------------------------------------------------

  instance& add(std::string node_type, instance_state state, std::string why);
  void change(instance& x, instance_state to, std::string why);
  void stop(instance& x, std::string why);
  void listed(instance& x, const cloud_instance& c);
  void type_failed(const std::string& type, std::string cause,
                   std::string message);
  void record_failure(std::string type, std::string cause, std::string message);
  std::chrono::milliseconds draw_backoff(int failures);
  std::string next_id(const char* kind);
  void retire_terminated();

  // -- storage (reconciler_storage.cpp) --------------------------------------

  /// Reads the instances `storage_` holds, and indexes them.
  void restore();
  /// Writes what changed; false if the storage failed (kept for the next
  /// pass).
  bool persist();

  // -- status (reconciler_status.cpp) ----------------------------------------

  void build_status(const cluster_view& cluster);

  struct type_health {
    int failures = 0;
    autoscaler_time until{};
    /// The pass of its latest failure.
    autoscaler_time failed_at{};
  };

  autoscaler_config cfg_;
  node_provider& provider_;
  instance_storage* storage_;
  std::mt19937_64 random_;
  /// Makes the ids of this incarnation unique: request ids are idempotency
  /// tokens, and one reused after a restart would be taken as a retry.
  std::string prefix_;
  std::uint64_t next_ = 0;
  autoscaler_time now_{};
  std::unordered_map<std::string, instance> instances_;
  /// Instance ids by cloud id, and by request id.
  std::unordered_map<std::string, std::string> by_cloud_;
  std::unordered_map<std::string, std::vector<std::string>> by_request_;
  /// Instances changed since they were last saved.
  std::vector<std::string> dirty_;
  std::vector<std::string> erased_;
  std::map<std::string, type_health> health_;
  /// Running instances whose node is missing from the cluster, since when.
  std::unordered_map<std::string, autoscaler_time> node_missing_;
  std::deque<autoscaler_failure> failures_;
  std::vector<std::pair<resource_map, int>> infeasible_;
  std::vector<std::pair<resource_map, int>> waiting_;
  std::uint64_t found_ = 0;
  std::uint64_t passes_ = 0;
  autoscaler_status status_;
  std::function<void(const std::string&)> log_;
};

} // namespace prism::internal
