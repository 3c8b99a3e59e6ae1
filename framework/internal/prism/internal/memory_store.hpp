#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "prism/detail/runtime.hpp"
#include "prism/ids.hpp"

namespace prism::internal {

/// The objects one driver or worker holds in memory: the ones it owns and
/// copies of borrowed ones. Thread-safe: user threads put and get, the owner
/// actor stores task results. Each entry counts its local references; an
/// entry nobody references any more is freed.
///
/// A ready entry holds its value or error here, or, for an object kept in a
/// node's object store, only the node (`location`): its owner reads it from
/// there.
class memory_store {
public:
  using clock = std::chrono::steady_clock;

  enum class state : std::uint8_t { missing, pending, ready };

  /// What `lookup` found.
  struct result {
    state st = state::missing;
    detail::value val;
    std::shared_ptr<const detail::error_info> err;
    /// The node whose object store holds the value; nil if it is here.
    node_id location;
  };

  /// Called, with the store's lock held, for each freed entry whose value is
  /// in a node's object store. It must not call back into the store.
  using free_hook = std::function<void(const object_id&, const node_id&)>;

  /// Sets the hook called when an entry held in a node's store, or one
  /// marked with `report_free`, is freed.
  void on_free(free_hook hook);

  /// Has the hook called when the entry is freed (a durable task's result,
  /// whose record in the control store goes with it).
  void report_free(const object_id& id);

  /// Adds an entry for an object that will be stored later (a task result
  /// or a fetch under way), with one local reference. Returns false if the
  /// entry existed (it then gains a reference).
  bool add_pending(const object_id& id);

  /// Adds a ready object with one local reference.
  void add_ready(const object_id& id, detail::value v);

  /// Stores the value of a pending object and wakes its waiters. Returns
  /// false (and stores nothing) if the entry was freed meanwhile.
  bool complete(const object_id& id, detail::value v);

  /// Marks a pending object ready, its value in the object store of `node`.
  bool complete_remote(const object_id& id, const node_id& node);

  /// Adds a ready object held in the object store of `node`, with one local
  /// reference.
  void add_remote(const object_id& id, const node_id& node);

  /// Makes a ready object held in a node's store pending again: that copy is
  /// lost, and the object is being rebuilt or is about to fail. Returns
  /// false if the entry is gone or not held in a node's store.
  bool reopen(const object_id& id);

  /// Stores the error of a pending object and wakes its waiters.
  bool fail(const object_id& id, detail::error_info err);

  /// Returns the entry's state, and its value or error when ready.
  result lookup(const object_id& id) const;

  /// Waits until the entry is ready or `deadline` passes.
  result wait_one(const object_id& id, clock::time_point deadline);

  /// Waits until `k` of `ids` are ready or `deadline` passes; returns which
  /// are ready.
  std::vector<bool> wait_many(const std::vector<object_id>& ids, std::size_t k,
                              clock::time_point deadline);

  /// Adds a local reference; creates no entry.
  void add_ref(const object_id& id);

  /// Drops a local reference; frees the entry when none remain.
  void release(const object_id& id);

  /// Adds or drops a reference held by a submitted task for its argument.
  void add_task_ref(const object_id& id);
  void release_task_ref(const object_id& id);

  /// Pins the entry: a reference to it left the process.
  void pin(const object_id& id);

  /// Number of entries (for tests and leak checks).
  std::size_t size() const;

  /// Fails every pending entry with `err` (at shutdown), so no waiter hangs.
  void fail_all_pending(const detail::error_info& err);

  /// Fails every pending entry with `err`, and every entry added pending
  /// from now on: nothing will complete them (their owner is gone).
  void close(const detail::error_info& err);

  /// Whether `close` was called.
  bool closed() const;

private:
  struct waiter {
    std::condition_variable cv;
    std::size_t remaining = 0;
  };

  struct entry {
    state st = state::pending;
    bool pinned = false;
    bool report_free = false;
    std::int32_t local_refs = 0;
    std::int32_t task_refs = 0;
    detail::value val;
    std::shared_ptr<const detail::error_info> err;
    node_id location;
    std::vector<waiter*> waiters;
  };

  void wake(entry& e);
  void maybe_free(std::unordered_map<object_id, entry>::iterator i);
  static result to_result(const entry& e);

  mutable std::mutex mu_;
  std::unordered_map<object_id, entry> entries_; // guarded by mu_
  /// Set by `close`: the error of every entry added pending after it.
  std::shared_ptr<const detail::error_info> closed_; // guarded by mu_
  free_hook on_free_;                                // guarded by mu_
};

} // namespace prism::internal
