#pragma once

// The conversation between the control store (gcs) and raylets and drivers.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <caf/actor.hpp>

#include "prism/ids.hpp"
#include "prism/internal/resource_set.hpp"
#include "protocol/gcs_restart.hpp"

namespace prism::protocol {

/// raylet -> gcs: a node joins the cluster. Answered with `node_added`.
/// A raylet that registers again with a restarted control store lists the
/// actor instances it hosts.
struct add_node {
  node_id node;
  internal::resource_set resources;
  caf::actor raylet;
  std::vector<hosted_actor> hosted;
  /// Where the raylet's process takes connections.
  std::string contact;
  /// What the node says of itself, e.g. the provider's id of the instance
  /// it runs on ("prism.instance_id"), for the autoscaler.
  std::map<std::string, std::string> labels;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, add_node& x) {
  return f(static_cast<unique_id&>(x.node), x.resources, x.raylet, x.hosted,
           x.contact, x.labels);
}

/// gcs -> raylet: the node is registered.
struct node_added {
  node_id node;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, node_added& x) {
  return f(static_cast<unique_id&>(x.node));
}

/// gcs -> raylet: the node was declared dead and may not come back (it
/// froze past the connection timeout, or its connection dropped and came
/// back). The raylet ends with its workers and actors; the process may join
/// again as a new node.
struct node_refused {
  node_id node;
  std::string reason;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, node_refused& x) {
  return f(static_cast<unique_id&>(x.node), x.reason);
}

/// What the gcs knows of a node.
struct node_info {
  node_id node;
  internal::resource_set resources;
  caf::actor raylet;
  bool alive = true;
  /// Where the raylet's process takes connections.
  std::string contact;
  /// The labels it joined with (see `add_node`).
  std::map<std::string, std::string> labels;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, node_info& x) {
  return f(static_cast<unique_id&>(x.node), x.resources, x.raylet, x.alive,
           x.contact, x.labels);
}

/// gcs -> raylets: the nodes of the cluster now, sent whenever one joins or
/// dies, so that a raylet can send work it cannot run to a node that can.
struct cluster_view {
  std::vector<node_info> nodes;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, cluster_view& x) {
  return f(x.nodes);
}

/// The program a job's worker processes run: the driver's executable, by
/// path on the driver's host and by content.
struct job_program {
  std::string path;
  /// Its arguments, argv[0] included.
  std::vector<std::string> argv;
  /// SHA-256 of its bytes, lower-case hex; empty for a job without one (a
  /// driver in the process of the cluster, whose nodes run its program).
  std::string sha256;
  std::uint64_t size = 0;

  friend bool operator==(const job_program&, const job_program&) = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, job_program& x) {
  return f(x.path, x.argv, x.sha256, x.size);
}

/// driver -> gcs: start a job. Answered with a `job_started`.
struct start_job {
  worker_id driver;
  std::string ns;
  job_program program;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, start_job& x) {
  return f(static_cast<unique_id&>(x.driver), x.ns, x.program);
}

/// raylet -> gcs: the program of `job`. Answered with its `job_program`,
/// empty if the job is unknown or has none.
struct get_job_program {
  job_id job;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, get_job_program& x) {
  return f(x.job);
}

/// gcs -> driver: the new job's id.
struct job_started {
  job_id job;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, job_started& x) {
  return f(x.job);
}

/// driver -> gcs: the job ended.
struct finish_job {
  job_id job;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, finish_job& x) {
  return f(x.job);
}

/// driver's owner -> gcs: I drive `job`. The control store watches the
/// owner: one that goes down with its job still running (its process
/// killed or crashed, or lost with its host) ends the job, as `finish_job`
/// would. Sent again after a restart of the control store; a running job
/// whose driver does not send it within the grace period ends too.
struct watch_driver {
  job_id job;
  caf::actor owner;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, watch_driver& x) {
  return f(x.job, x.owner);
}

/// anyone -> gcs: list the nodes. Answered with `std::vector<node_info>`.
struct list_nodes {
  std::uint32_t unused = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, list_nodes& x) {
  return f(x.unused);
}

} // namespace prism::protocol
