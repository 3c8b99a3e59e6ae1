#include "prism/internal/backoff.hpp"
#include "prism/internal/random_seed.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>

#include <pthread.h>

namespace prism::internal {

namespace {

/// Past this many retries in a row the pause is at its cap anyway; counting
/// on would only make `backoff_delay` loop longer.
constexpr int max_doublings = 64;

std::mt19937_64& thread_engine() {
  thread_local std::mt19937_64 gen{random_seed()};
  return gen;
}

// A forked process draws its own jitter, not its parent's next.
[[maybe_unused]] const int reseeded_in_forks = ::pthread_atfork(
    nullptr, nullptr, [] { thread_engine().seed(random_seed()); });

double thread_random() {
  return std::uniform_real_distribution<double>{0.0, 1.0}(thread_engine());
}

} // namespace

std::chrono::milliseconds backoff_delay(const backoff& policy, int consecutive,
                                        double unit_random) {
  // Doubling stops at the cap, so a long run of retries cannot overflow.
  auto delay = policy.min;
  for (int i = 1; i < consecutive && delay < policy.max; ++i)
    delay = delay.count() > policy.max.count() / 2 ? policy.max : delay * 2;
  delay = std::min(delay, policy.max);
  auto scale = 1.0 - policy.jitter * std::clamp(unit_random, 0.0, 1.0);
  return std::chrono::milliseconds{
      std::llround(static_cast<double>(delay.count()) * scale)};
}

retry_backoff::retry_backoff(backoff policy, random_source random)
    : policy_(policy), random_(std::move(random)) {
  if (!random_)
    random_ = thread_random;
}

std::chrono::milliseconds retry_backoff::next() {
  if (retries_ < max_doublings)
    ++retries_;
  return backoff_delay(policy_, retries_, random_());
}

std::optional<std::chrono::milliseconds>
retry_backoff::next(time_point now, time_point deadline) {
  if (now >= deadline)
    return std::nullopt;
  auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - now);
  return std::min(next(), left);
}

retry_backoff::random_source retry_backoff::seeded(std::uint64_t seed) {
  auto gen = std::make_shared<std::mt19937_64>(seed);
  return [gen] {
    return std::uniform_real_distribution<double>{0.0, 1.0}(*gen);
  };
}

} // namespace prism::internal
