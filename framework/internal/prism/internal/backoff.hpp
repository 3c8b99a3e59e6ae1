#pragma once

// How long to wait between the attempts of an operation that is retried:
// exponential backoff with jitter, ended by a deadline. Every retry in Prism
// (a supervisor's restarts, the control store's keeper, requests to the
// control store) waits as this says. No threads and no clock of its own: the
// caller passes the time in and does the waiting.

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>

#include "prism/supervision.hpp"

namespace prism::internal {

/// Returns the pause before the `consecutive`-th retry in a row
/// (`consecutive >= 1`): `min * 2^(consecutive-1)` capped at `max`, times
/// `1 - jitter * unit_random`. REQUIRES: `unit_random` in [0, 1).
std::chrono::milliseconds backoff_delay(const backoff& policy, int consecutive,
                                        double unit_random);

/// The pauses between the attempts of one retried operation: the first retry
/// waits about `policy.min`, each next one twice as long up to `policy.max`,
/// each shortened at random by up to `policy.jitter` of itself so that many
/// clients that failed together do not retry together.
///
///   retry_backoff retries{backoff{5ms, 1s, 0.5}};
///   while (!try_once())
///     if (auto pause = retries.next(clock::now(), deadline))
///       std::this_thread::sleep_for(*pause);
///     else
///       give_up();
class retry_backoff {
public:
  using clock = std::chrono::steady_clock;
  using time_point = clock::time_point;

  /// Returns numbers uniformly distributed in [0, 1); draws the jitter.
  using random_source = std::function<double()>;

  /// An empty `random` draws from a generator of the calling thread, seeded
  /// at random.
  explicit retry_backoff(backoff policy, random_source random = {});

  /// Returns the pause before the next attempt and counts the retry.
  std::chrono::milliseconds next();

  /// Returns the pause before the next attempt, cut to what is left until
  /// `deadline`, and counts the retry; nothing once `now` is at or past
  /// `deadline` (give up).
  std::optional<std::chrono::milliseconds> next(time_point now,
                                                time_point deadline);

  /// Starts again from `policy.min`, as after an operation that succeeded.
  void reset() noexcept {
    retries_ = 0;
  }

  /// How many retries were counted since the start or the last `reset`
  /// (counting stops at 64: by then every pause is at the cap).
  int retries() const noexcept {
    return retries_;
  }

  /// A random source from a generator seeded with `seed`, for reproducible
  /// jitter.
  static random_source seeded(std::uint64_t seed);

private:
  backoff policy_;
  random_source random_;
  int retries_ = 0;
};

} // namespace prism::internal
