// The control store's storage (persistence/): how fast it takes acknowledged
// actor records, with and without fsync, and how long a restarted gcs needs
// to read 100,000 actors back. No Prism cluster runs; the store is used
// directly, in a scratch directory under the system's temp directory.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include "bench.hpp"
#include "control_store.hpp"
#include "gcs/task_event_store.hpp"
#include "prism/internal/chrome_trace.hpp"
#include "protocol/state.hpp"
#include "protocol/timeline.hpp"

#include <caf/all.hpp>

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

/// Appends of a record the size of one actor's (as the store's write-ahead
/// log takes it) to a file of the directory the store goes in, each made
/// durable with fdatasync before the next, per second: what the disk lets
/// any durable write do, the floor of `gcs_write_sync`.
double fsync_floor(const run_options& opts) {
  scratch_dir dir;
  std::filesystem::create_directories(dir.store());
  auto path = dir.store() + "/log";
  int fd =
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  expect(fd >= 0, "cannot open a file in the scratch directory");
  std::string record(400, 'r');
  auto n = opts.iterations(3'000);
  bool ok = true;
  auto rate = ops_per_second(n, [&] {
    for (std::size_t i = 0; i < n && ok; ++i)
      ok = ::write(fd, record.data(), record.size()) ==
               static_cast<ssize_t>(record.size()) &&
           ::fdatasync(fd) == 0;
  });
  ::close(fd);
  expect(ok, "a write or fdatasync of the floor failed");
  return rate;
}

double write_sync(const run_options& opts) {
  return write_rate(opts, true, 3'000);
}

double write_nosync(const run_options& opts) {
  return write_rate(opts, false, 100'000);
}

/// Seconds to open and recover a store of 100,000 live actors (with their
/// name index entries), each written whole as created and then started (a
/// merge), left as a crash leaves it: everything in the write-ahead log,
/// nothing flushed to table files.
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
      // As the control store writes a live actor: whole when it is
      // created, then its start merged in.
      auto a = make_actor(i);
      auto created = a;
      created.state = persistence::actor_state::pending;
      created.node = {};
      b.put_actor(created);
      b.put_actor_started(a.actor, a.node);
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

/// Milliseconds the control store's task event store takes to list the
/// first 100 of the 10,000 finished tasks of one function among the
/// 1,000,000 it keeps (each told by the one event of a task that ran and
/// ended between two batches of its owner): the filter reads every task
/// before the limit. The median of 4 lists, after one that waits for the
/// store to take every batch.
double list_1m_task_events(const run_options& opts) {
  auto n = opts.iterations(1'000'000);
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto store = actors::spawn_task_event_store(sys, n);
  caf::scoped_actor self{sys};
  protocol::task_events batch;
  auto worker = worker_id{unique_id{0xbe, 0xef}};
  std::size_t rare = 0;
  for (std::size_t i = 0; i < n; ++i) {
    // A task that ran and ended between two batches: one event.
    internal::task_event e;
    e.task = task_id{worker, i + 1};
    e.state = internal::task_state::finished;
    e.submit_us = 1'795'000'000'000'000 + static_cast<std::int64_t>(i);
    e.start_us = e.submit_us + 20;
    e.end_us = e.submit_us + 90;
    e.name = i % 100 == 0 ? "bench::rare" : "bench::common";
    rare += i % 100 == 0 ? 1 : 0;
    e.job = job_id{1};
    e.node = node_id{unique_id{1, 2}};
    e.worker = worker_id{unique_id{3, 4}};
    e.pid = 4123;
    batch.events.push_back(std::move(e));
    if (batch.events.size() >= 10'000) {
      self->send(store, std::move(batch));
      batch = {};
    }
  }
  self->send(store, std::move(batch));
  protocol::list_state ask{
      state::kind::tasks, {"name=bench::rare", "state=finished"}, 100, ""};
  std::vector<double> ms;
  for (int i = 0; i < 5; ++i) {
    auto start = std::chrono::steady_clock::now();
    protocol::state_page page;
    self->request(store, std::chrono::seconds{60}, ask)
        .receive([&](protocol::state_page& p) { page = std::move(p); },
                 [&](caf::error& err) {
                   auto what = "the store did not answer: " + sys.render(err);
                   expect(false, what.c_str());
                 });
    std::chrono::duration<double, std::milli> took =
        std::chrono::steady_clock::now() - start;
    // The first list also waits for the store to take every batch.
    if (i > 0)
      ms.push_back(took.count());
    expect(page.page.total == n && page.page.matched == rare &&
               page.page.entries.size() == std::min<std::size_t>(rare, 100),
           "the list is not the first 100 tasks of the rare function");
  }
  caf::anon_send_exit(store, caf::exit_reason::user_shutdown);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

/// Counts what is written to it, and keeps nothing.
struct counting_buffer : std::streambuf {
  std::uint64_t bytes = 0;
  int_type overflow(int_type c) override {
    if (c != traits_type::eof())
      ++bytes;
    return c;
  }
  std::streamsize xsputn(const char*, std::streamsize n) override {
    bytes += static_cast<std::uint64_t>(n);
    return n;
  }
};

/// The size of `prism timeline` for a million tasks: a task event store
/// holds them as 2 nodes of 4 worker processes ran them for one driver,
/// 100,000 a second; its pages are drawn as the command draws them.
double timeline_1m_tasks(const run_options& opts) {
  auto n = opts.iterations(1'000'000);
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  auto store = actors::spawn_task_event_store(sys, n);
  caf::scoped_actor self{sys};
  std::vector<node_id> nodes{node_id{unique_id{1, 1}},
                             node_id{unique_id{1, 2}}};
  std::vector<worker_id> workers;
  for (std::uint64_t i = 0; i < 8; ++i)
    workers.push_back(worker_id{unique_id{2, i + 1}});
  auto driver = worker_id{unique_id{0xd, 1}};
  constexpr std::int64_t t0 = 1'795'000'000'000'000;
  protocol::task_events batch;
  for (std::size_t i = 0; i < n; ++i) {
    internal::task_event e;
    e.task = task_id{driver, i + 1};
    e.state = internal::task_state::finished;
    e.submit_us = t0 + static_cast<std::int64_t>(i) * 10;
    e.start_us = e.submit_us + 40;
    e.end_us = e.submit_us + 110;
    e.name = "square";
    e.job = job_id{1};
    e.node = nodes[(i % 8) / 4];
    e.worker = workers[i % 8];
    e.pid = 4100 + static_cast<std::int32_t>(i % 8);
    batch.events.push_back(std::move(e));
    if (batch.events.size() >= internal::task_event_batch) {
      self->send(store, std::move(batch));
      batch = {};
    }
  }
  self->send(store, std::move(batch));
  counting_buffer counted;
  std::ostream out{&counted};
  internal::chrome_trace_writer writer{out, t0};
  protocol::timeline_query q;
  q.limit = 50000;
  for (;;) {
    protocol::timeline_page page;
    self->request(store, std::chrono::seconds{60}, q)
        .receive([&](protocol::timeline_page& p) { page = std::move(p); },
                 [&](caf::error& err) {
                   auto what = "the store did not answer: " + sys.render(err);
                   expect(false, what.c_str());
                 });
    for (auto& t : page.tasks)
      writer.add(internal::timeline_task{t.id, std::move(t.name), t.submit_us,
                                         std::move(t.attempts)});
    if (page.next == 0)
      break;
    q.cursor = page.next;
  }
  writer.finish();
  caf::anon_send_exit(store, caf::exit_reason::user_shutdown);
  expect(writer.tasks() == n && writer.arrows() == n,
         "the timeline does not draw every task with its arrow");
  // Scaled to a million when a smoke run draws fewer.
  return static_cast<double>(counted.bytes) / 1e6 * 1e6 /
         static_cast<double>(n);
}

} // namespace

std::vector<metric> gcs_store_metrics() {
  return {
      {"fsync_floor", "per_s", false, fsync_floor},
      {"gcs_write_sync", "per_s", false, write_sync},
      {"gcs_write_nosync", "per_s", false, write_nosync},
      {"gcs_recovery_100k_actors", "s", false, recovery_100k},
      {"list_1m_task_events_filtered_ms", "ms", false, list_1m_task_events},
      {"timeline_1m_tasks_mb", "MB", false, timeline_1m_tasks},
  };
}

} // namespace prism::bench
