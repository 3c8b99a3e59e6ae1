#pragma once

// What the autoscaler asks of a cloud (or of this host): start and stop
// instances that run Prism nodes, and say which exist. Every call returns at
// once; what a launch or a termination did shows up later, in the listing and
// in the errors polled. A provider may lag and lie for a while, as clouds
// do: the autoscaler treats "not visible yet" as a state, never as an error.

#include <string>
#include <vector>

namespace prism {

/// One instance a provider has and has not terminated yet.
struct cloud_instance {
  /// The provider's id for it, e.g. "i-0abc" or a process id.
  std::string id;
  /// The node type it was launched as (a name from the autoscaler's config).
  std::string node_type;
  /// The request id of the launch that made it; empty if the provider does
  /// not know (an instance made by somebody else).
  std::string request_id;
  /// Where it can be reached; empty while it has no address yet.
  std::string address;
};

/// What a provider's listing returned.
struct instance_listing {
  /// False if the listing itself failed (throttled, say): `instances` then
  /// says nothing, and nobody counts as missing from it.
  bool ok = true;
  std::vector<cloud_instance> instances;
  /// Why it failed, if it did.
  std::string error;
};

/// How a provider took a launch or terminate call.
enum class provider_answer {
  /// Taken: it happens, or an error polled later says why it did not.
  accepted,
  /// Refused before anything happened (throttled, bad request): nothing was
  /// done, and the caller may try again later.
  rejected,
  /// Not known (the reply was lost, the call timed out): it may have
  /// happened. Calling again with the same request id is safe.
  unknown,
};

/// The answer to one launch or terminate call.
struct provider_reply {
  provider_answer answer = provider_answer::accepted;
  /// Why, unless accepted.
  std::string message;
};

/// A launch or termination that failed after it was accepted.
struct provider_error {
  enum class what_failed { launch, terminate };
  what_failed failed = what_failed::launch;
  /// The request id of the failed call.
  std::string request_id;
  /// For a launch: its node type, and how many of its instances were not
  /// made (a partial launch made the others).
  std::string node_type;
  int count = 0;
  /// For a termination: the instances it did not terminate.
  std::vector<std::string> instance_ids;
  /// A short class of cause, e.g. "capacity", "quota", "not_found".
  std::string cause;
  /// The provider's own words.
  std::string message;
};

/// A source of instances for the autoscaler. Calls come from one thread at a
/// time and must not block for long: start the work and return.
///
/// Promises a provider must keep:
/// - A launch or terminate call with a request id it has seen before does
///   nothing more than the first call did (request ids are idempotency
///   tokens): a retried launch never makes duplicates.
/// - Every instance it lists carries the node type and the request id of the
///   launch that made it, if it made it.
/// It may: list an instance late, drop it from a listing for a while, list
/// it without an address, keep listing it after it was terminated, refuse
/// calls, and fail launches in part.
class node_provider {
public:
  virtual ~node_provider() = default;

  /// Starts `count` instances of `node_type`, tagged with `request_id`.
  virtual provider_reply launch(const std::string& node_type, int count,
                                const std::string& request_id) = 0;

  /// Starts terminating the instances `ids`. It is not an error if one is
  /// already terminated.
  virtual provider_reply terminate(const std::vector<std::string>& ids,
                                   const std::string& request_id) = 0;

  /// The instances not terminated yet, as the provider sees them now.
  virtual instance_listing non_terminated() = 0;

  /// The failures of accepted calls since the last poll.
  virtual std::vector<provider_error> poll_errors() = 0;
};

} // namespace prism
