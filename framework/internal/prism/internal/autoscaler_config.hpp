#pragma once

// The autoscaler's configuration: node types and their sizes, limits,
// timeouts and the provider. Read from a JSON file (see README
// "Autoscaler"); every field but `node_types` has a default.

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "prism/config.hpp"
#include "prism/supervision.hpp"

namespace prism::internal {

/// One kind of node the autoscaler may launch.
struct node_type_config {
  /// Its name, as providers and status know it, e.g. "cpu8".
  std::string name;
  /// What one node of this type offers, e.g. {CPU: 8, memory: 3.2e10}.
  resource_map resources;
  /// Nodes of this type kept at all times, and the most there may be.
  int min_workers = 0;
  int max_workers = 10;
};

struct autoscaler_config {
  std::vector<node_type_config> node_types;
  /// The most nodes of all types together (the head not counted).
  int max_workers = 100;
  /// A node that ran nothing this long is stopped (never below a type's
  /// `min_workers`).
  std::chrono::milliseconds idle_timeout{60000};
  /// The most instances pending (wanted, launched, not yet joined) at once.
  int max_pending = 20;
  /// A wanted instance not launched within this long is given up (its
  /// type stayed backed off, say); a new one is wanted if still needed.
  std::chrono::milliseconds queued_timeout{300000};
  /// A launch whose instances the provider does not list within this long
  /// is sent again, with the same request id, up to `max_launch_attempts`
  /// times in all; then it has failed.
  std::chrono::milliseconds request_timeout{60000};
  int max_launch_attempts = 3;
  /// A listed instance whose node does not join within this long is
  /// terminated.
  std::chrono::milliseconds join_timeout{600000};
  /// A terminated instance still listed after this long has failed to
  /// terminate; its termination is sent again after a backoff.
  std::chrono::milliseconds stop_timeout{120000};
  /// An instance counts as gone only once this many listings in a row
  /// missed it and it was listed at least `gone_grace` ago: listings lag.
  int missed_listings = 3;
  std::chrono::milliseconds gone_grace{60000};
  /// A running instance whose node has been missing from the cluster this
  /// long has lost its node (one restarting control store, or one pass in
  /// which the node did not answer, is not that).
  std::chrono::milliseconds node_grace{10000};
  /// The pause after a node type's launch failed, doubling with each
  /// failure in a row, drawn at random below it (full jitter). While it
  /// lasts, demand goes to other node types.
  backoff type_backoff{std::chrono::seconds{5}, std::chrono::seconds{300}, 1.0};
  /// How often the autoscaler reconciles.
  std::chrono::milliseconds interval{1000};
  /// Which provider, and its options (strings, as the provider reads them).
  std::string provider = "local";
  std::map<std::string, std::string> provider_options;

  /// The type named `name`, or nullptr.
  const node_type_config* type(const std::string& name) const;
};

/// Reads a configuration from JSON text. Throws `invalid_argument_error`
/// naming the field at fault: unknown fields, wrong types, a node type
/// without a name or with a negative resource, min above max, no node type.
autoscaler_config parse_autoscaler_config(const std::string& json);

/// Reads the JSON file at `path` (see `parse_autoscaler_config`); an
/// unreadable file is an `invalid_argument_error` too.
autoscaler_config load_autoscaler_config(const std::string& path);

} // namespace prism::internal
