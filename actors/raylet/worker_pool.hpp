#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_addr.hpp>

#include "prism/ids.hpp"

namespace prism::actors {

/// The workers of one node and the job each is bound to. A worker is bound to
/// the job of its first lease and only ever runs that job's tasks.
class worker_pool {
public:
  struct worker {
    worker_id id;
    caf::actor handle;
    /// Its owner actor, which takes the cancellations of its tasks.
    caf::actor control;
    /// Where its process takes connections; empty for a worker thread (it
    /// is in the raylet's process).
    std::string contact;
    /// Bound job; 0 while unbound.
    job_id job;
    /// The lease the worker serves; 0 while idle.
    std::uint64_t lease_id = 0;

    // -- a worker process ----------------------------------------------------

    /// Its pid; 0 for a worker thread of the raylet's process.
    int pid = 0;
    /// Started and not registered yet: `handle` is invalid, and it is not
    /// idle.
    bool starting = false;
    /// The one-time token it registers with.
    std::string token;
    /// Its connection dropped; its exit report is due.
    bool disconnected = false;
    /// Why the raylet killed it, if it did: its exit report says this.
    std::string killed_for;
    /// Started to host one actor instance: never idle, never leased.
    bool hosts_actor = false;
    /// Of those, one that hosts any number of its job's actors that ask for
    /// a shared process (`isolation::shared`).
    bool shares_actors = false;
    /// The instances it hosts or is to host once it registers (a shared
    /// host only).
    std::size_t actors = 0;
    /// When it last became idle.
    std::chrono::steady_clock::time_point idle_since;
    /// When its process was started.
    std::chrono::steady_clock::time_point started_at;
    /// Its process was forked from its program's fork server.
    bool forked = false;
    /// Of those, one forked and prepared ahead of its launch.
    bool spare = false;
  };

  /// Adds a started worker thread as idle and unbound.
  void add(worker w);

  /// Adds a worker process that starts for the job `w.job`: it is not idle
  /// until `registered`.
  void add_starting(worker w);

  /// A starting worker process registered with `handle`: it is idle now,
  /// unless it hosts an actor.
  void registered(const worker_id& id, caf::actor handle, caf::actor control,
                  std::string contact);

  /// Workers that run tasks (not the processes that host actors).
  std::size_t task_workers() const;

  /// Worker processes starting, of `job` or of any job.
  std::size_t starting(job_id job) const;
  std::size_t starting() const;

  /// The starting worker process with `token`, or nullptr.
  worker* find_token(const std::string& token);

  /// The idle workers, the longest idle first.
  std::vector<worker*> idle_oldest_first();

  /// Takes an idle worker of `job`, or else an idle unbound one, and binds
  /// it to `job` under `lease_id`. Returns nullptr if there is none.
  worker* pop(job_id job, std::uint64_t lease_id);

  /// Puts a leased worker back among the idle ones.
  void release(const worker_id& id);

  /// Removes a worker (it died or was stopped); returns what it was.
  std::optional<worker> remove(worker_id id);

  /// Returns an idle worker bound to a job other than `job`, to stop so a
  /// new one can start; nullptr if none.
  worker* idle_of_other_job(job_id job);

  /// Removes the idle workers bound to `job` and returns them.
  std::vector<worker> remove_idle_of(job_id job);

  worker* find(const worker_id& id);

  /// Finds the worker behind an actor address (for down messages).
  worker* find(const caf::actor_addr& addr);

  std::size_t size() const noexcept {
    return workers_.size();
  }

  /// The handles of the workers that run (not the starting ones).
  std::vector<caf::actor> handles() const;

  /// Every worker's id.
  std::vector<worker_id> ids() const;

  /// Calls `f(const worker&)` for every worker.
  template <class F>
  void for_each(F&& f) const {
    for (const auto& [id, w] : workers_)
      f(w);
  }

  /// The processes that host `job`'s shared actors, leaving out those whose
  /// connection dropped or that were killed.
  std::vector<worker*> shared_hosts_of(job_id job);

  /// Every process that hosts shared actors, leaving out the same.
  std::vector<worker*> shared_hosts();

private:
  std::unordered_map<worker_id, worker> workers_;
  std::vector<worker_id> idle_;
};

} // namespace prism::actors
