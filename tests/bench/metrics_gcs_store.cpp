// The control store's storage (persistence/): how fast it takes acknowledged
// actor records, with and without fsync, and how long a restarted gcs needs
// to read 100,000 actors back. No Prism cluster runs; the store is used
// directly, in a scratch directory under the system's temp directory.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>

#include <unistd.h>

#include "bench.hpp"
#include "control_store.hpp"

namespace prism::bench {

namespace {

using persistence::actor_record;
using persistence::control_store;
using persistence::store_options;

/// A scratch directory, removed with the store in it.
class scratch_dir {
public:
  scratch_dir() {
    static std::atomic<int> counter{0};
    root_ = std::filesystem::temp_directory_path() /
            ("prism_bench_gcs_" + std::to_string(::getpid()) + "_" +
             std::to_string(counter++) + "_" +
             std::to_string(std::random_device{}()));
    std::filesystem::create_directories(root_);
  }
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;
  ~scratch_dir() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }

  std::string store() const {
    return (root_ / "store").string();
  }

private:
  std::filesystem::path root_;
};

/// An actor as the gcs stores it: ids, a name for one in four, and a
/// creation spec of a few hundred bytes (function name and arguments).
actor_record make_actor(std::uint64_t i) {
  actor_record r;
  r.actor.hi = 0xac70'0000'0000'0000ULL | i;
  r.actor.lo = i * 0x9e3779b97f4a7c15ULL + 1;
  r.job.value = static_cast<std::uint32_t>(i % 16 + 1);
  if (i % 4 == 0) {
    r.ns = "default";
    r.name = "actor-" + std::to_string(i);
  }
  r.detached = i % 8 == 0;
  r.max_restarts = 3;
  r.state = persistence::actor_state::alive;
  r.node.hi = i % 64 + 1;
  r.node.lo = 7;
  r.owner.hi = i + 1;
  r.owner.lo = 9;
  r.creation_spec = "bench::counter::create/" + std::to_string(i) + '/';
  r.creation_spec.resize(320, static_cast<char>(i & 0x7f));
  return r;
}

double write_rate(const run_options& opts, bool sync, std::size_t n) {
  scratch_dir dir;
  store_options so;
  so.path = dir.store();
  so.sync = sync;
  auto store = control_store::open(so);
  n = opts.iterations(n);
  auto rate = ops_per_second(n, [&] {
    for (std::size_t i = 0; i < n; ++i)
      store.put_actor(make_actor(i));
  });
  expect(store.get_actor(make_actor(n - 1).actor).has_value(),
         "the last actor written is missing");
  return rate;
}

double write_sync(const run_options& opts) {
  return write_rate(opts, true, 3'000);
}

double write_nosync(const run_options& opts) {
  return write_rate(opts, false, 100'000);
}

/// Seconds to open and recover a store of 100,000 actors (with their name
/// index entries), left as a crash leaves it: everything in the write-ahead
/// log, nothing flushed to table files.
double recovery_100k(const run_options& opts) {
  scratch_dir dir;
  store_options so;
  so.path = dir.store();
  so.sync = false;
  auto n = opts.iterations(100'000);
  {
    auto store = control_store::open(so);
    persistence::write_batch b;
    for (std::size_t i = 0; i < n; ++i) {
      auto a = make_actor(i);
      b.put_actor(a);
      if (!a.name.empty())
        b.put_named_actor(a.ns, a.name, a.actor);
      if (b.size() >= 1'000) {
        store.write(b);
        b.clear();
      }
    }
    store.write(b);
    store.close();
  }
  so.sync = true;
  auto start = std::chrono::steady_clock::now();
  auto store = control_store::open(so);
  auto rec = store.recover();
  std::chrono::duration<double> elapsed =
      std::chrono::steady_clock::now() - start;
  expect(rec.tables.actors.size() == n, "recovery lost actors");
  expect(rec.tables.named_actors.size() == (n + 3) / 4,
         "recovery lost named actors");
  expect(rec.report.empty(), "recovery repaired a sound store");
  return elapsed.count();
}

} // namespace

std::vector<metric> gcs_store_metrics() {
  return {
      {"gcs_write_sync", "per_s", false, write_sync},
      {"gcs_write_nosync", "per_s", false, write_nosync},
      {"gcs_recovery_100k_actors", "s", false, recovery_100k},
  };
}

} // namespace prism::bench
