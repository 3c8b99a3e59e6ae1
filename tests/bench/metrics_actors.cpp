// Ray's actor metrics: calls to one actor from one caller (sync, async, with
// concurrency), from one caller to many actors, from many callers to their
// own actors (with and without an argument), actor creation, and the memory
// that 100,000 idle actors take.

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <fstream>
#include <future>
#include <string>
#include <vector>

#include <dlfcn.h>
#include <malloc.h>
#include <unistd.h>

#include <prism/prism.hpp>

#include "bench.hpp"

namespace prism::bench {

namespace {

/// The actor of Ray's microbenchmark: a method that does nothing.
class bench_actor {
public:
  static bench_actor* create() {
    return new bench_actor;
  }

  int small_value() {
    return 0;
  }

  int small_value_arg(int x) {
    return x;
  }
};

PRISM_REMOTE(bench_actor::create, &bench_actor::small_value,
             &bench_actor::small_value_arg);

/// A service whose calls wait without a thread: an asynchronous method.
class waiting_actor {
public:
  static waiting_actor* create() {
    return new waiting_actor;
  }

  /// Waits `ms` without a thread: the metric times such waits.
  future<int> wait_ms(int ms) {
    co_await sleep_for(std::chrono::milliseconds{ms});
    co_return ms;
  }
};

PRISM_REMOTE(waiting_actor::create, &waiting_actor::wait_ms);

/// Callers (threads) and actors of the n:n and 1:n metrics.
constexpr std::size_t fan = 4;

using handle = actor_handle<bench_actor>;

// Returns once the actor runs calls.
void await_ready(const handle& h) {
  expect(get(h.task(&bench_actor::small_value).remote()) == 0,
         "the actor returned a value other than 0");
}

void call_async(const handle& h, std::size_t n) {
  std::vector<object_ref<int>> refs;
  refs.reserve(n);
  for (std::size_t i = 0; i < n; ++i)
    refs.push_back(h.task(&bench_actor::small_value).remote());
  for (auto& r : refs)
    expect(get(r) == 0, "the actor returned a value other than 0");
}

// Runs `f(i)` for i in [0, fan) on threads of their own.
template <class F>
void on_threads(F f) {
  std::vector<std::future<void>> running;
  for (std::size_t i = 0; i < fan; ++i)
    running.push_back(std::async(std::launch::async, [&f, i] { f(i); }));
  for (auto& r : running)
    r.get();
}

// Creates `n` actors and returns once each takes calls.
std::vector<handle> ready_actors(std::size_t n) {
  std::vector<handle> actors;
  for (std::size_t i = 0; i < n; ++i)
    actors.push_back(actor(bench_actor::create).remote());
  for (auto& h : actors)
    await_ready(h);
  return actors;
}

// Creates `n` actors owned by `job`, then calls each once from that job and
// waits for all the answers: creation and first call, pipelined.
std::vector<handle> create_owned_by(const client& job, std::size_t n) {
  std::vector<handle> actors;
  actors.reserve(n);
  for (std::size_t i = 0; i < n; ++i)
    actors.push_back(job.actor(bench_actor::create).remote());
  std::vector<object_ref<int>> refs;
  refs.reserve(n);
  for (auto& h : actors)
    refs.push_back(job.task(h, &bench_actor::small_value).remote());
  for (auto& r : refs)
    expect(job.get(r) == 0, "the actor returned a value other than 0");
  return actors;
}

// -- metrics ------------------------------------------------------------------

double calls_sync(const run_options& opts) {
  auto h = actor(bench_actor::create).remote();
  await_ready(h);
  auto n = opts.iterations(20'000);
  return ops_per_second(n, [&] {
    for (std::size_t i = 0; i < n; ++i)
      await_ready(h);
  });
}

double calls_async(const run_options& opts) {
  auto h = actor(bench_actor::create).remote();
  await_ready(h);
  auto n = opts.iterations(200'000);
  return ops_per_second(n, [&] { call_async(h, n); });
}

double calls_concurrent(const run_options& opts) {
  auto h = actor(bench_actor::create).max_concurrency(16).remote();
  await_ready(h);
  auto n = opts.iterations(100'000);
  return ops_per_second(n, [&] { call_async(h, n); });
}

double one_to_n_async(const run_options& opts) {
  auto actors = ready_actors(fan);
  auto n = opts.iterations(200'000) / fan * fan;
  return ops_per_second(n, [&] {
    std::vector<object_ref<int>> refs;
    refs.reserve(n);
    for (std::size_t i = 0; i < n; ++i)
      refs.push_back(actors[i % fan].task(&bench_actor::small_value).remote());
    for (auto& r : refs)
      expect(get(r) == 0, "the actor returned a value other than 0");
  });
}

double n_to_n_async(const run_options& opts) {
  auto actors = ready_actors(fan);
  auto per = opts.iterations(200'000) / fan;
  return ops_per_second(per * fan, [&] {
    on_threads([&](std::size_t i) { call_async(actors[i], per); });
  });
}

double n_to_n_with_arg_async(const run_options& opts) {
  auto actors = ready_actors(fan);
  auto per = opts.iterations(200'000) / fan;
  return ops_per_second(per * fan, [&] {
    on_threads([&](std::size_t i) {
      std::vector<object_ref<int>> refs;
      refs.reserve(per);
      for (std::size_t k = 0; k < per; ++k)
        refs.push_back(actors[i]
                           .task(&bench_actor::small_value_arg)
                           .remote(static_cast<int>(k)));
      for (std::size_t k = 0; k < per; ++k)
        expect(get(refs[k]) == static_cast<int>(k),
               "the actor returned a wrong value");
    });
  });
}

// Actors created and ready to take calls, per second. A job of its own owns
// them, so that ending it frees them for the next run.
double creation(const run_options& opts) {
  auto n = opts.iterations(20'000);
  auto job = client::connect();
  auto rate = ops_per_second(n, [&] { create_owned_by(job, n); });
  end_job(job);
  return rate;
}

double resident_mb() {
  auto mb = resident_mb_of(static_cast<int>(::getpid()));
  if (mb == 0)
    throw std::runtime_error("cannot read VmRSS from /proc/self/status");
  return mb;
}

// Milliseconds for one actor (its calls one at a time, on a pool of 2
// threads) to serve 10,000 concurrent calls that each wait 100 ms: an
// asynchronous method gives its thread back while it waits, so they all
// wait at once (one thread per call would take 500 s with 2 threads).
double async_10k_waiting_ms(const run_options& opts) {
  auto n = opts.iterations(10'000);
  auto h = actor(waiting_actor::create).remote();
  expect(get(h.task(&waiting_actor::wait_ms).remote(0)) == 0,
         "the waiting actor did not answer");
  auto start = std::chrono::steady_clock::now();
  std::vector<object_ref<int>> refs;
  refs.reserve(n);
  for (std::size_t i = 0; i < n; ++i)
    refs.push_back(h.task(&waiting_actor::wait_ms).remote(100));
  for (auto& r : refs)
    expect(get(r) == 100, "a waiting call returned another value");
  std::chrono::duration<double, std::milli> took =
      std::chrono::steady_clock::now() - start;
  kill(h);
  return took.count();
}

// Resident memory of the whole process with 100,000 idle actors alive. Heap
// that earlier metrics freed, and that malloc keeps cached, goes back to the
// system first, so that the figure counts what is alive.
double rss_100k(const run_options& opts) {
  auto n = opts.iterations(100'000);
  auto job = client::connect();
  auto actors = create_owned_by(job, n);
  return_freed_heap();
  auto mb = resident_mb();
  end_job(job);
  return mb;
}

// Milliseconds to list, through `prism::state`, the first 100 dead actors
// of a job among its 100,000 of which 1 in 100 is dead (and those earlier
// metrics left): the filter applies to all of them before the limit. The
// median of 9 lists.
double list_100k_filtered_ms(const run_options& opts) {
  auto n = opts.iterations(100'000);
  auto job = client::connect();
  auto actors = create_owned_by(job, n);
  std::size_t dead = 0;
  for (std::size_t i = 0; i < n; i += 100, ++dead)
    job.kill(actors[i]);
  state::list_options o;
  // This job's: dead actors of earlier metrics' jobs are remembered too.
  o.filters = {"state=DEAD", "class_name=bench_actor",
               "job_id=" + std::to_string(job.job().value)};
  o.limit = 100;
  // Kills are told to the control store on their own: wait until it has all.
  for (int i = 0; state::list(state::kind::actors, o).matched < dead; ++i)
    expect(i < 1000, "the control store never saw every actor killed");
  std::vector<double> ms;
  for (int i = 0; i < 9; ++i) {
    auto start = std::chrono::steady_clock::now();
    auto page = state::list(state::kind::actors, o);
    std::chrono::duration<double, std::milli> took =
        std::chrono::steady_clock::now() - start;
    expect(page.matched == dead && page.total >= n &&
               page.entries.size() == std::min<std::size_t>(dead, 100),
           "the list is not the first 100 of the dead actors");
    ms.push_back(took.count());
  }
  job.shutdown();
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

} // namespace

std::vector<metric> actor_metrics() {
  return {
      {"1_1_actor_calls_sync", "per_s", true, calls_sync},
      {"1_1_actor_calls_async", "per_s", true, calls_async},
      {"actor_call_events_cost_pct", "pct", true,
       [](const run_options& opts) {
         return recording_cost_pct(opts, calls_async);
       }},
      {"1_1_actor_calls_concurrent", "per_s", true, calls_concurrent},
      {"1_n_actor_calls_async", "per_s", true, one_to_n_async},
      {"n_n_actor_calls_async", "per_s", true, n_to_n_async},
      {"n_n_actor_calls_with_arg_async", "per_s", true, n_to_n_with_arg_async},
      {"actor_creation", "per_s", true, creation},
      {"async_actor_10k_waiting_calls_ms", "ms", true, async_10k_waiting_ms},
      {"actors_100k_rss_mb", "MB", true, rss_100k, true},
      {"list_100k_actors_filtered_ms", "ms", true, list_100k_filtered_ms},
  };
}

void end_job(client& job) {
  auto id = job.job().value;
  job.shutdown();
  state::list_options o;
  o.filters = {"state!=DEAD", "job_id=" + std::to_string(id)};
  o.limit = 1;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes{1};
  while (state::list(state::kind::actors, o).matched > 0)
    expect(std::chrono::steady_clock::now() < deadline,
           "the actors of an ended job did not end within a minute");
}

void return_freed_heap() {
  malloc_trim(0);
  // jemalloc keeps freed pages for a while (its decay); found at run time,
  // so that a build with the system's allocator needs no jemalloc.
  using mallctl_fn =
      int (*)(const char*, void*, std::size_t*, void*, std::size_t);
  if (auto* mallctl =
          reinterpret_cast<mallctl_fn>(::dlsym(RTLD_DEFAULT, "mallctl"))) {
    // MALLCTL_ARENAS_ALL: every arena.
    mallctl("arena.4096.purge", nullptr, nullptr, nullptr, 0);
  }
}

double resident_mb_of(int pid) {
  std::ifstream status{"/proc/" + std::to_string(pid) + "/status"};
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0)
      return std::stod(line.substr(6)) / 1024.0;
  return 0;
}

} // namespace prism::bench
