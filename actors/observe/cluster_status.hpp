#pragma once

// What `prism status` prints and the status page's overview shows: the
// cluster's nodes with what each uses, its jobs and actors, the demands
// that wait, and the autoscaler's last word. Asked of the control store
// and, all at once, of every live node.

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include <caf/fwd.hpp>

#include "protocol/raylet_gcs.hpp"
#include "protocol/status.hpp"

namespace prism::actors {

struct cluster_status {
  /// The live nodes first.
  std::vector<protocol::node_info> nodes;
  /// What each live node that answered in time uses and waits for.
  std::map<node_id, protocol::node_resources> resources;
  protocol::cluster_summary summary;
  /// The autoscaler's status as its last pass wrote it; empty without one.
  std::string autoscaler;
  /// The status page's address as the head published it; empty: none.
  std::string status_page;
};

/// Asks `gcs` (within `timeout`) and each live node (within
/// `node_timeout`, all at once, so a frozen node costs it once). Throws
/// `gcs_unavailable_error` if the control store does not answer.
cluster_status collect_cluster_status(caf::actor_system& sys,
                                      const caf::actor& gcs,
                                      std::chrono::milliseconds timeout,
                                      std::chrono::milliseconds node_timeout);

/// Each demand shape once, with how many ask for it ("CPU: 2" -> 3).
std::map<std::string, std::size_t>
count_shapes(const std::vector<internal::resource_set>& shapes);

/// Where the head publishes its status page's address in the key-value
/// table, for `prism status`.
inline constexpr const char* status_page_namespace = "prism.status";
inline constexpr const char* status_page_key = "status_page";

} // namespace prism::actors
