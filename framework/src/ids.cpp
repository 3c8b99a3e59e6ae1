#include "prism/ids.hpp"
#include "prism/internal/random_seed.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <random>

#include <pthread.h>

namespace prism {

namespace {

/// `x` in 16 lowercase hex digits (as "%016llx", without a format string
/// to parse: ids are written in logs and errors all the time).
std::string u64_hex(std::uint64_t x) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, x >>= 4)
    out[static_cast<std::size_t>(i)] = digits[x & 0xf];
  return out;
}

std::uint64_t fresh_seed() {
  auto t = std::chrono::steady_clock::now().time_since_epoch().count();
  static std::atomic<std::uint64_t> salt{0};
  return internal::random_seed() ^ static_cast<std::uint64_t>(t) ^
         (salt++ * 0x9e3779b97f4a7c15ULL);
}

/// One seeded engine per thread; ids need to be unique, not secret.
std::mt19937_64& id_engine() {
  thread_local std::mt19937_64 engine{fresh_seed()};
  return engine;
}

// A forked process (a worker forked from its program's fork server) must
// not draw the ids its parent draws next: the forking thread's engine,
// the only one the forked process has, is seeded again there.
[[maybe_unused]] const int reseeded_in_forks =
    ::pthread_atfork(nullptr, nullptr, [] { id_engine().seed(fresh_seed()); });

} // namespace

unique_id unique_id::random() {
  auto& engine = id_engine();
  unique_id id;
  do {
    id.hi = engine();
    id.lo = engine();
  } while (id.nil());
  return id;
}

std::string unique_id::hex() const {
  return u64_hex(hi) + u64_hex(lo);
}

std::string task_id::hex() const {
  return submitter.hex() + u64_hex(seq);
}

std::string object_id::hex() const {
  char buf[9];
  std::snprintf(buf, sizeof(buf), "%08x", index);
  return task.hex() + buf;
}

} // namespace prism
