// Spilling: a node's store writing objects it cannot hold to disk, and
// reading them back into its shared memory, next to what `dd` moves
// through the same directory in the same run.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "bench.hpp"
#include "prism/internal/object_arena.hpp"
#include "raylet/node_object_store.hpp"
#include "raylet/spill_directory.hpp"

namespace prism::bench {

namespace {

namespace fs = std::filesystem;
using clock = std::chrono::steady_clock;

constexpr std::uint64_t mib = 1024 * 1024;
/// Objects of this size, 1 GB of them (10 MB under --smoke).
constexpr std::uint64_t object_mib = 64;

std::uint64_t total_mib(const run_options& opts) {
  return opts.smoke ? object_mib : 1024;
}

/// A directory of its own where spill files go, under the session
/// directory's disk (the default spill directory's), removed at the end.
struct spill_place {
  std::string path;

  spill_place() {
    const char* session = std::getenv("PRISM_SESSION_DIR");
    auto base = fs::path{session != nullptr ? session : "/tmp"};
    path =
        (base / ("prism-bench-spill-" + unique_id::random().hex().substr(0, 8)))
            .string();
    fs::create_directories(path);
  }

  ~spill_place() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

/// Seconds `command` took to run in a shell; throws if it failed.
double timed_command(const std::string& command) {
  auto start = clock::now();
  if (std::system(command.c_str()) != 0)
    throw std::runtime_error{"'" + command + "' failed"};
  return std::chrono::duration<double>(clock::now() - start).count();
}

/// MB/s of `dd` writing the same bytes, in 1 MiB blocks, to a file of the
/// directory spills go to (into the page cache, as spilling writes).
double dd_write(const run_options& opts) {
  spill_place dir;
  auto n = total_mib(opts);
  auto took = timed_command("dd if=/dev/zero of=" + dir.path +
                            "/dd.bin bs=1M count=" + std::to_string(n) +
                            " status=none");
  return static_cast<double>(n) / took;
}

/// MB/s of `dd` reading such a file back, just written.
double dd_read(const run_options& opts) {
  spill_place dir;
  auto n = total_mib(opts);
  timed_command("dd if=/dev/zero of=" + dir.path +
                "/dd.bin bs=1M count=" + std::to_string(n) + " status=none");
  auto took = timed_command("dd if=" + dir.path +
                            "/dd.bin of=/dev/null bs=1M status=none");
  return static_cast<double>(n) / took;
}

/// A store of 128 MiB of shared memory, spilling to `dir`.
actors::node_object_store spilling_store(const spill_place& dir) {
  actors::node_object_store::settings s;
  s.arena = internal::object_arena::create(
      128 * mib + internal::object_arena::header_bytes, unique_id::random());
  s.spill =
      actors::spill_directory::open(dir.path, node_id{unique_id::random()});
  return actors::node_object_store{s};
}

std::vector<detail::value> values_to_keep(const run_options& opts) {
  std::vector<detail::value> values;
  for (std::uint64_t m = 0; m < total_mib(opts); m += object_mib) {
    detail::value v;
    v.bytes = std::make_shared<detail::byte_buffer>(object_mib * mib,
                                                    static_cast<char>(m));
    values.push_back(std::move(v));
  }
  return values;
}

object_id nth_object(std::size_t i) {
  static const worker_id maker{unique_id::random()};
  return object_id{task_id{maker, i + 1}, 1};
}

/// Keeps every value in a store that holds two of them: the rest spill.
void keep_all(actors::node_object_store& store,
              const std::vector<detail::value>& values) {
  for (std::size_t i = 0; i < values.size(); ++i)
    expect(store.keep(nth_object(i), values[i], 1).empty(),
           "the store refused a value");
}

/// MB/s of a store keeping 1 GB in 64 MB objects in 128 MiB of shared
/// memory: each copied in, and the ones before it written to spill files.
double spill(const run_options& opts) {
  spill_place dir;
  auto store = spilling_store(dir);
  auto values = values_to_keep(opts);
  // Its memory faulted in first, as a node's is after its first objects.
  keep_all(store, {values.front(), values.front()});
  store.clear();
  auto start = clock::now();
  keep_all(store, values);
  auto took = std::chrono::duration<double>(clock::now() - start).count();
  expect(store.spilled_now() + 2 >= values.size(), "too little spilled");
  return static_cast<double>(total_mib(opts)) / took;
}

/// MB/s of reading 1 GB of spilled 64 MB objects back into the store's
/// shared memory, one after the other (each pushes an earlier one out,
/// which is on disk already: nothing more is written).
double restore(const run_options& opts) {
  spill_place dir;
  auto store = spilling_store(dir);
  auto values = values_to_keep(opts);
  keep_all(store, values);
  values.clear();
  auto start = clock::now();
  for (std::size_t i = 0; i < total_mib(opts) / object_mib; ++i) {
    auto bytes = store.in_arena(nth_object(i));
    expect(bytes.size() == object_mib * mib &&
               bytes.data()[0] == static_cast<char>(i * object_mib),
           "a value read back is not the one kept");
  }
  auto took = std::chrono::duration<double>(clock::now() - start).count();
  return static_cast<double>(total_mib(opts)) / took;
}

} // namespace

std::vector<metric> spill_metrics() {
  return {
      {"dd_write_floor_1gb", "MB_per_s", false, dd_write},
      {"dd_read_floor_1gb", "MB_per_s", false, dd_read},
      {"spill_1gb_mb_s", "MB_per_s", false, spill},
      {"restore_1gb_mb_s", "MB_per_s", false, restore},
  };
}

} // namespace prism::bench
