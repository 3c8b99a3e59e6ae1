#pragma once

// Seeds for Prism's random engines (ids, retry jitter, supervision), drawn
// from the kernel. Not std::random_device: each one constructed asks the
// processor whether it has a hardware generator (cpuid), which a virtual
// machine traps, about 25 µs on this project's machines; every new thread
// and every forked worker process seeds engines.

#include <chrono>
#include <cstdint>

#include <sys/random.h>

namespace prism::internal {

/// 64 random bits from `getrandom`; if the kernel cannot give them yet
/// (early boot), bits of the clock, which differ between processes and
/// calls well enough for a seed.
inline std::uint64_t random_seed() noexcept {
  std::uint64_t seed = 0;
  if (::getrandom(&seed, sizeof(seed), GRND_NONBLOCK) ==
      static_cast<ssize_t>(sizeof(seed)))
    return seed;
  auto t = std::chrono::steady_clock::now().time_since_epoch().count();
  return static_cast<std::uint64_t>(t) * 0x9e3779b97f4a7c15ULL;
}

} // namespace prism::internal
