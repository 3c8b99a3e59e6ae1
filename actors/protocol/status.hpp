#pragma once

// What `prism status` (tools/) and the test fixtures ask of a cluster: the
// control store's jobs and actors, and each node's resources and waiting
// demands.

#include <cstdint>
#include <string>
#include <vector>

#include "prism/ids.hpp"
#include "prism/internal/resource_set.hpp"

namespace prism::protocol {

/// anyone -> raylet: what the node has, what is free now, and what waits.
/// Answered with `node_resources`.
struct query_resources {
  std::uint32_t unused = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, query_resources& x) {
  return f(x.unused);
}

struct node_resources {
  node_id node;
  internal::resource_set total;
  internal::resource_set available;
  /// Requests waiting at this node that no live node can ever fit, one
  /// entry per request (the autoscaler sizes the cluster by them).
  std::vector<internal::resource_set> infeasible;
  /// Requests waiting at this node for resources that are busy now, one
  /// entry per request.
  std::vector<internal::resource_set> waiting;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, node_resources& x) {
  return f(static_cast<unique_id&>(x.node), x.total, x.available, x.infeasible,
           x.waiting);
}

/// anyone -> gcs: the jobs and actors of the cluster. Answered with
/// `cluster_summary`.
struct query_summary {
  std::uint32_t unused = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, query_summary& x) {
  return f(x.unused);
}

struct job_summary {
  job_id job;
  std::string ns;
  bool running = false;
  /// Unix time of its start, in milliseconds.
  std::int64_t start_ms = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, job_summary& x) {
  return f(x.job, x.ns, x.running, x.start_ms);
}

struct cluster_summary {
  std::vector<job_summary> jobs;
  /// Actors by state: pending (not placed yet), alive, restarting, and
  /// dead (those the control store still remembers).
  std::uint64_t actors_pending = 0;
  std::uint64_t actors_alive = 0;
  std::uint64_t actors_restarting = 0;
  std::uint64_t actors_dead = 0;
  /// The resources of actors no live node can host now, one entry per
  /// actor.
  std::vector<internal::resource_set> unplaced_actors;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, cluster_summary& x) {
  return f(x.jobs, x.actors_pending, x.actors_alive, x.actors_restarting,
           x.actors_dead, x.unplaced_actors);
}

} // namespace prism::protocol
