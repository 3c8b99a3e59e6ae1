#pragma once

// A node provider for tests and benchmarks: a cloud on a virtual clock,
// deterministic for a seed, that misbehaves on purpose the ways real clouds
// do (listings that lag and drop instances, lookups that miss, throttling,
// partial and lost launches, capacity errors, nodes that never join,
// preemption, slow or failed terminations). It also plays the cluster: the
// nodes its instances run join after a boot delay and leave when they end.

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "prism/config.hpp"
#include "prism/internal/instance_state.hpp"
#include "prism/node_provider.hpp"

namespace prism::internal {

/// How badly the fake cloud behaves. Chances are per call (or, for
/// preemption, per second of a running instance); delays are drawn evenly
/// from zero to the maximum. All zero: a healthy cloud that still takes
/// `boot_min`..`boot_max` to boot.
struct fake_cloud_faults {
  /// A new instance is listed only after this long.
  std::chrono::milliseconds min_invisible{0};
  std::chrono::milliseconds max_invisible{0};
  /// The chance that a listing leaves out an instance younger than
  /// `young`, and the chance it leaves out any instance.
  double drop_young = 0;
  std::chrono::milliseconds young{30000};
  double drop_any = 0;
  /// A lookup by id (a termination) misses an instance for this long after
  /// its launch: "InvalidInstanceID.NotFound".
  std::chrono::milliseconds max_lookup_lag{0};
  /// A listed instance has no address for this long after its launch.
  std::chrono::milliseconds min_no_address{0};
  std::chrono::milliseconds max_no_address{0};
  /// A terminated instance stays listed this long.
  std::chrono::milliseconds max_linger{0};
  /// The chance a call (launch, terminate, listing) is refused.
  double throttle = 0;
  /// The chance a launch makes only some of its instances.
  double partial_launch = 0;
  /// The chance a launch answers "unknown", whether it happened or was
  /// throttled.
  double lost_reply = 0;
  /// The chance per second that somebody else launches an instance (no
  /// request id) of a random node type.
  double foreign_per_s = 0;
  /// Per node type: the chance a launch fails for lack of capacity.
  std::map<std::string, double> no_capacity;
  /// The chance an instance boots but its node never joins.
  double never_joins = 0;
  /// The chance per second that a running instance is preempted.
  double preempt_per_s = 0;
  /// A termination takes this long; and the chance it fails.
  std::chrono::milliseconds max_terminate_delay{0};
  double terminate_fails = 0;
  /// From launch to its node joining the cluster.
  std::chrono::milliseconds boot_min{5000};
  std::chrono::milliseconds boot_max{30000};
};

/// A joined node as the fake cloud reports it to the cluster.
struct fake_node {
  std::string cloud_id;
  std::string node_type;
  resource_map resources;
};

class fake_cloud : public node_provider {
public:
  /// A cloud of the node types `types` (name to resources) starting at
  /// `start`. REQUIRES: the `boot_min` <= `boot_max`.
  fake_cloud(std::uint64_t seed, fake_cloud_faults faults,
             std::map<std::string, resource_map> types, autoscaler_time start);

  // -- the virtual clock -----------------------------------------------------

  /// Moves the clock to `now` (never back): terminations end, preemptions
  /// happen.
  void advance_to(autoscaler_time now);

  autoscaler_time now() const noexcept {
    return now_;
  }

  // -- node_provider ---------------------------------------------------------

  provider_reply launch(const std::string& node_type, int count,
                        const std::string& request_id) override;
  provider_reply terminate(const std::vector<std::string>& ids,
                           const std::string& request_id) override;
  instance_listing non_terminated() override;
  std::vector<provider_error> poll_errors() override;

  // -- the cluster it plays --------------------------------------------------

  /// The nodes in the cluster now: instances running, booted, and not of
  /// the ones that never join.
  std::vector<fake_node> joined() const;

  /// Ends instance `id` at once, as a preemption does.
  void preempt(const std::string& id);

  // -- the truth, for invariants ---------------------------------------------

  /// Instances running now (whatever any listing says).
  std::size_t running() const;

  /// Instances made, and instances asked for, by request id.
  const std::map<std::string, int>& made_per_request() const noexcept {
    return made_;
  }
  const std::map<std::string, int>& asked_per_request() const noexcept {
    return asked_;
  }

  /// Changes how it misbehaves from now on.
  fake_cloud_faults& faults() noexcept {
    return faults_;
  }

private:
  struct machine {
    std::string id;
    std::string node_type;
    std::string request_id;
    autoscaler_time launched{};
    autoscaler_time visible{};
    autoscaler_time found{};
    autoscaler_time addressed{};
    autoscaler_time joins{};
    bool never_joins = false;
    /// Running until `ends` (if `ending`); listed until `unlisted`.
    bool ending = false;
    autoscaler_time ends{};
    bool ended = false;
    autoscaler_time unlisted{};
  };

  bool chance(double p);
  std::chrono::milliseconds upto(std::chrono::milliseconds max);
  std::chrono::milliseconds between(std::chrono::milliseconds min,
                                    std::chrono::milliseconds max);
  void end(machine& m, autoscaler_time at);
  void make(const std::string& node_type, const std::string& request_id);

  std::mt19937_64 random_;
  fake_cloud_faults faults_;
  std::map<std::string, resource_map> types_;
  autoscaler_time now_;
  std::uint64_t next_ = 0;
  std::map<std::string, machine> machines_;
  std::map<std::string, int> made_;
  std::map<std::string, int> asked_;
  std::unordered_map<std::string, bool> terminations_seen_;
  std::vector<provider_error> errors_;
};

} // namespace prism::internal
