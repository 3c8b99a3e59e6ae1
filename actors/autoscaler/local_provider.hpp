#pragma once

// The local-process node provider: each instance is a `prism start
// --address HEAD --block` process on this host, a node of the node type's
// resources that joins the head. Real processes, real joins: what the
// examples and the end-to-end tests scale with.

#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <sys/types.h>

#include "prism/config.hpp"
#include "prism/internal/thread_annotations.hpp"
#include "prism/node_provider.hpp"

namespace prism::actors {

/// The label a node started by a provider joins with: the provider's id of
/// its instance. The autoscaler matches nodes to instances by it.
inline constexpr const char* instance_label = "prism.instance_id";

/// The environment variables that give a node `prism start`s its instance
/// id, and tell a provider that finds the process later its node type and
/// request id.
inline constexpr const char* instance_id_variable = "PRISM_INSTANCE_ID";
inline constexpr const char* node_type_variable = "PRISM_NODE_TYPE";
inline constexpr const char* request_id_variable = "PRISM_REQUEST_ID";

struct local_provider_settings {
  /// The `prism` command, and the head its nodes join.
  std::string program;
  std::string head_address;
  /// What each node type offers, from the autoscaler's config.
  std::map<std::string, resource_map> types;
  /// Where each node's output goes ("<dir>/autoscaler-<id>.log").
  std::string log_dir;
  /// Environment variables set for every node (TLS files, say).
  std::map<std::string, std::string> environment;
  /// A node that has not exited this long after SIGTERM gets SIGKILL.
  std::chrono::milliseconds kill_after{10000};
};

class local_process_provider : public node_provider {
public:
  /// Also takes over the nodes a provider of an earlier head of the same
  /// address started on this host and that still run (found by their
  /// environment), so that a restarted head neither loses nor duplicates
  /// them.
  explicit local_process_provider(local_provider_settings settings);

  /// Leaves its nodes running: a head that restarts finds them again in
  /// the cluster, and a node whose head is gone for good ends by itself.
  ~local_process_provider() override = default;

  provider_reply launch(const std::string& node_type, int count,
                        const std::string& request_id) override;
  provider_reply terminate(const std::vector<std::string>& ids,
                           const std::string& request_id) override;
  instance_listing non_terminated() override;
  std::vector<provider_error> poll_errors() override;

  /// The process id of instance `id`, or 0 (for tests that kill one).
  pid_t pid_of(const std::string& id) const;

private:
  struct node_process {
    pid_t pid = 0;
    std::string node_type;
    std::string request_id;
    bool terminating = false;
    std::chrono::steady_clock::time_point sigterm_at{};
    /// It exited (and was reaped), and whether a listing showed it yet.
    bool exited = false;
    bool listed = false;
    /// Started by an earlier head, not by this process: so polled, not reaped.
    bool inherited = false;
  };

  /// Takes over the nodes of an earlier head (see the constructor).
  void inherit_running() EXCLUSIVE_LOCKS_REQUIRED(mu_);

  /// Starts one node; returns its pid, or 0 with `why` set.
  pid_t spawn(const std::string& id, const std::string& node_type,
              const std::string& request_id, std::string& why) const;
  void reap() EXCLUSIVE_LOCKS_REQUIRED(mu_);

  local_provider_settings settings_;
  /// Begins the ids of this provider's instances; another head's differ.
  std::string prefix_;
  mutable std::mutex mu_;
  std::map<std::string, node_process> nodes_ GUARDED_BY(mu_);
  std::set<std::string> seen_requests_ GUARDED_BY(mu_);
  std::vector<provider_error> errors_ GUARDED_BY(mu_);
  std::uint64_t next_ GUARDED_BY(mu_) = 0;
};

} // namespace prism::actors
