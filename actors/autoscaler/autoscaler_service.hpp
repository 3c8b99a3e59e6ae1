#pragma once

// The autoscaler as it runs in the head: a thread of its own that, every
// `interval`, asks the control store and each node what there is and what
// waits, runs one reconcile pass (framework/.../reconciler.hpp), keeps the
// instances in the control store, and writes its status there for `prism
// status`. Its requests are blocking with timeouts, on its own thread,
// never on a scheduler thread.

#include <array>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include "prism/internal/autoscaler_config.hpp"
#include "prism/internal/instance_state.hpp"
#include "prism/internal/thread_annotations.hpp"
#include "prism/node_provider.hpp"

namespace prism::internal {
class reconciler;
} // namespace prism::internal

namespace prism::actors {

/// Where the autoscaler keeps its instances and its status in the control
/// store's key-value table.
inline constexpr const char* autoscaler_namespace = "prism.autoscaler";
inline constexpr const char* autoscaler_status_key = "status";

struct autoscaler_settings {
  internal::autoscaler_config cfg;
  /// For the local provider: the `prism` command, the head's address,
  /// where node logs go, and environment for its nodes.
  std::string program;
  std::string head_address;
  std::string log_dir;
  std::map<std::string, std::string> node_environment;
};

/// Makes the provider `cfg.provider` names. Throws `invalid_argument_error`
/// for a provider it does not know.
std::unique_ptr<node_provider>
make_node_provider(const autoscaler_settings& settings);

class autoscaler_service {
public:
  /// Starts the loop against the control store `gcs` (an actor in this
  /// process), with `provider`.
  autoscaler_service(caf::actor_system& sys, caf::actor gcs,
                     autoscaler_settings settings,
                     std::unique_ptr<node_provider> provider);

  /// Ends the loop (a pass under way finishes first).
  ~autoscaler_service();

  autoscaler_service(const autoscaler_service&) = delete;
  autoscaler_service& operator=(const autoscaler_service&) = delete;

  /// Its instances by state ("running": 3), as of its last pass; every
  /// state, those with none included.
  std::vector<std::pair<std::string, std::uint64_t>> instances_by_state() const;

private:
  void run();
  /// Keeps `r`'s instances by state for `instances_by_state`.
  void count_instances(const internal::reconciler& r);

  caf::actor_system& sys_;
  caf::actor gcs_;
  autoscaler_settings settings_;
  std::unique_ptr<node_provider> provider_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::array<std::uint64_t, internal::num_instance_states>
      by_state_ GUARDED_BY(mu_){};
  bool stopping_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

} // namespace prism::actors
