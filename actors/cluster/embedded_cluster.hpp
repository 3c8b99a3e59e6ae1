#pragma once

#include <memory>
#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

#include "owner/owner_client.hpp"
#include "owner/owner_directory.hpp"
#include "prism/config.hpp"

namespace prism::actors {

/// A whole cluster inside one process: the control store, one node (raylet
/// and workers) and the driver's owner. `prism::init` makes one.
class embedded_cluster {
public:
  /// Starts the cluster. Throws `prism::error` if a component does not come
  /// up.
  explicit embedded_cluster(const config& cfg);

  /// Stops every component: blocked `get`s fail, running tasks finish, and
  /// every actor is gone when this returns.
  ~embedded_cluster();

  embedded_cluster(const embedded_cluster&) = delete;
  embedded_cluster& operator=(const embedded_cluster&) = delete;

  const std::shared_ptr<owner_client>& driver() const {
    return driver_;
  }

  /// Kills a worker as a crash would; false if no node has it.
  bool kill_worker(const worker_id& id);

  /// Live workers on all nodes.
  std::size_t num_workers();

private:
  void stop();

  std::unique_ptr<caf::actor_system_config> sys_cfg_;
  std::unique_ptr<caf::actor_system> sys_;
  std::shared_ptr<owner_directory> directory_;
  caf::actor gcs_;
  std::vector<caf::actor> raylets_;
  caf::actor driver_owner_;
  std::shared_ptr<internal::memory_store> driver_store_;
  std::shared_ptr<owner_client> driver_;
  job_id job_;
};

} // namespace prism::actors
