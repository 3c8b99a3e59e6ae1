#pragma once

// The metrics prism_bench knows, and what a metric needs to be measured.

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace prism {
class client;
}

namespace prism::bench {

/// How one run of prism_bench sizes its workloads.
struct run_options {
  /// Shrinks every iteration count a hundredfold, for a quick sanity run.
  bool smoke = false;

  /// Returns `n`, or under `smoke` `n / 100` but at least 10.
  std::size_t iterations(std::size_t n) const noexcept {
    return smoke ? std::max<std::size_t>(n / 100, 10) : n;
  }
};

/// One number prism_bench reports.
struct metric {
  /// Ray's name for the metric, e.g. "single_client_tasks_async".
  std::string name;

  /// The unit of the value, e.g. "per_s".
  std::string unit;

  /// Whether the metric needs Prism running.
  bool needs_prism = false;

  /// Runs the workload once and returns its value in `unit`, timing only the
  /// work the metric is about. Throws if the workload fails or returns wrong
  /// results.
  std::function<double(const run_options&)> run_once;

  /// Whether it runs on an embedded cluster started for it, not on the one
  /// earlier metrics used: what they left in that cluster (the 100,000 task
  /// events the recording metrics had it keep) must not count in it.
  bool own_cluster = false;
};

/// Task submission and retrieval: Ray's single- and multi-client task metrics.
std::vector<metric> task_metrics();

/// Object store calls: Ray's put and get metrics.
std::vector<metric> object_metrics();

/// Actor calls, creation and memory: Ray's actor metrics.
std::vector<metric> actor_metrics();

/// Two plain CAF actors exchanging requests: the floor under Prism's numbers.
std::vector<metric> caf_floor_metrics();

/// The floor under put and get, which send no message: a hash map of small
/// values behind a lock, on one thread.
std::vector<metric> object_floor_metrics();

/// The floors between two processes on loopback: plain CAF request/response
/// over the middleman, one at a time and pipelined, stock and set up as
/// Prism's processes are, and a raw TCP ping-pong. Each run starts a peer
/// process (this program with `--floor-peer`).
std::vector<metric> remote_floor_metrics();

/// The peer of `remote_floor_metrics`: publishes an echo actor (in an actor
/// system set up as Prism's processes are, if `tuned`) and a TCP echo
/// listener on 127.0.0.1, prints "ports CAF TCP" and serves until its
/// standard input closes. Returns the exit status.
int run_floor_peer(bool tuned);

/// Resident memory of process `pid` in MB (its VmRSS); 0 if it is gone.
double resident_mb_of(int pid);

/// Gives the heap this process freed and its allocator keeps cached back
/// to the system: glibc's `malloc_trim`, and, where jemalloc serves
/// `malloc` (as Prism links it by default), a purge of all its arenas. A
/// resident figure taken after it counts what is alive.
void return_freed_heap();

/// The median of `xs` (the upper one of an even count). REQUIRES: not
/// empty.
inline double median(std::vector<double> xs) {
  std::nth_element(xs.begin(), xs.begin() + xs.size() / 2, xs.end());
  return xs[xs.size() / 2];
}

/// How much slower `run(true)` runs than `run(false)`, in percent (0 if
/// not slower), each a throughput: the medians of five runs each way,
/// taken in turns, each way first in every other turn (one run of a
/// throughput ranges over ±10% on 2 cores).
inline double cost_pct(const std::function<double(bool)>& run) {
  constexpr int turns = 5;
  std::vector<double> with;
  std::vector<double> without;
  for (int i = 0; i < turns; ++i)
    for (bool with_it : {i % 2 == 0, i % 2 != 0})
      (with_it ? with : without).push_back(run(with_it));
  auto w = median(with);
  auto wo = median(without);
  return std::max(0.0, (wo - w) / wo * 100.0);
}

/// How much slower `workload` runs with its task events recorded than
/// without, in percent, as `cost_pct` measures it.
double recording_cost_pct(const run_options& opts,
                          double (*workload)(const run_options&));

/// The control store's storage: acknowledged actor writes with and without
/// fsync, and recovery of a store of 100,000 actors.
std::vector<metric> gcs_store_metrics();

/// Work under node kills on a local cluster of its own: nested tasks that
/// finish right or are wrong or lost, and how soon a node's death is acted
/// on. Needs Prism not running (each run starts its own cluster).
std::vector<metric> chaos_metrics();

/// Spilling: a node's store writing 1 GB in 64 MB objects past its shared
/// memory to spill files and reading them back, next to `dd` writing and
/// reading as much in the same directory.
std::vector<metric> spill_metrics();

/// Cluster mode on loopback: the driver (this program), a head and nodes as
/// processes of their own, tasks and actor calls in worker processes of this
/// program; how long a worker process takes to register, and how soon a
/// node killed or frozen is acted on. Needs Prism not running (it attaches
/// to the cluster it starts).
std::vector<metric> cluster_metrics();

/// Stops the cluster the cluster metrics started and detaches this process
/// from it. A run ends with it: the next run's embedded metrics must not
/// run on a cluster still attached.
void stop_bench_cluster();

/// Ends `job` and returns once the control store knows every actor of it
/// dead. A job's end kills its actors after `shutdown` returns: that work
/// must not run in the timed window of the next run. Throws if it takes over
/// a minute.
void end_job(client& job);

/// The autoscaler on the fake cloud (virtual time): one reconcile pass over
/// 10,000 instances and its floor, and how soon a demand for 1,000 nodes
/// settles on a cloud that lags, in virtual and in real time.
std::vector<metric> autoscaler_metrics();

/// Calls `f`, which performs `ops` operations, and returns operations per
/// second.
template <class F>
double ops_per_second(std::size_t ops, F&& f) {
  auto start = std::chrono::steady_clock::now();
  f();
  std::chrono::duration<double> elapsed =
      std::chrono::steady_clock::now() - start;
  return static_cast<double>(ops) / elapsed.count();
}

/// Throws `std::runtime_error(what)` unless `ok`: a benchmark that computes
/// wrong results measures nothing.
inline void expect(bool ok, const char* what) {
  if (!ok)
    throw std::runtime_error(what);
}

} // namespace prism::bench
