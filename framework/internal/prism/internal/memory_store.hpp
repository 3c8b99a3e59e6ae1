#pragma once

#include <atomic>
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
#include "prism/internal/thread_annotations.hpp"

namespace prism::internal {

/// The objects one driver or worker holds in memory: the ones it owns and
/// copies of borrowed ones. Thread-safe: user threads put and get, the owner
/// actor stores task results.
///
/// Each entry counts what keeps it alive: local references (refs in user
/// code), references of submitted tasks and lineage, the objects here whose
/// values contain it, and, for an object owned here, the processes that
/// borrow it (each counted as often as it registered). An entry that nothing
/// keeps alive is freed, and with it its hold on the refs its value
/// contains.
///
/// An entry of an object owned elsewhere (a borrowed entry) is registered
/// with its owner once, when it is made; when it is freed the owner hears
/// how many registrations end. The store reports both through its hook.
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

  /// What the store tells its owner actor.
  struct event {
    enum class kind : std::uint8_t {
      /// A borrowed entry was made: register this process with `owner` as
      /// a borrower of `id`.
      borrowed,
      /// An entry was freed that someone must hear of: its copy in a node's
      /// store (`location`), a `report_free` mark, or `registrations`
      /// borrower registrations with `owner` that end.
      freed,
    };
    kind what = kind::freed;
    object_id id;
    worker_id owner;
    /// Where `owner` is.
    detail::owner_address address;
    node_id location;
    bool report = false;
    std::int32_t registrations = 0;
  };

  /// Called with the store's lock held, on the thread that caused the
  /// event, in the order the events happened. It must not call back into
  /// the store.
  using hook = std::function<void(const event&)>;

  memory_store();
  ~memory_store();

  memory_store(const memory_store&) = delete;
  memory_store& operator=(const memory_store&) = delete;

  /// Sets the worker this store belongs to: refs owned by it are its own
  /// entries, all others are borrowed.
  void set_self(const worker_id& self);

  /// Sets who hears of the store's events.
  void set_hook(hook h);

  /// Entries alive in every store of this process (for leak checks).
  static std::int64_t live_entries() noexcept;

  /// Has the hook called when the entry is freed (a durable task's result,
  /// whose record in the control store goes with it).
  void report_free(const object_id& id);

  /// Adds an entry for an object that will be stored later (a task result
  /// or a fetch under way), with one local reference. Returns false if the
  /// entry existed (it then gains a reference).
  bool add_pending(const object_id& id);

  /// Adds a ready object with one local reference. The refs its value
  /// contains are held while it lives.
  void add_ready(const object_id& id, detail::value v);

  /// How the refs inside a value that arrives came to be registered with
  /// their owners.
  enum class arrival : std::uint8_t {
    /// Fetched: this store registers the ones new to it itself.
    fetched,
    /// A task result: the worker that made it registered this process with
    /// their owners before it reported the result.
    registered_by_sender,
  };

  /// Stores the value of a pending object and wakes its waiters; the refs
  /// inside it are held while it lives. Returns false (and stores nothing)
  /// if the entry was freed meanwhile.
  bool complete(const object_id& id, detail::value v,
                arrival how = arrival::fetched);

  /// Marks a pending object ready, its value (containing `refs`) in the
  /// object store of `node`.
  bool complete_remote(const object_id& id, const node_id& node,
                       const std::vector<detail::contained_ref>& refs = {},
                       arrival how = arrival::registered_by_sender);

  /// Adds a ready object held in the object store of `node`, with one local
  /// reference; its value contains `refs`, held here (a put).
  void add_remote(const object_id& id, const node_id& node,
                  const std::vector<detail::contained_ref>& refs = {});

  /// Makes a ready object held in a node's store pending again: that copy is
  /// lost, and the object is being rebuilt or is about to fail. Returns
  /// false if the entry is gone or not held in a node's store.
  bool reopen(const object_id& id);

  /// Stores the error of a pending object and wakes its waiters.
  bool fail(const object_id& id, detail::error_info err);

  /// Returns the entry's state, and its value or error when ready.
  result lookup(const object_id& id) const;

  /// A flag that ends a wait early once it is set and `wake_stopped` is
  /// called: the cancellation of the task or call that waits.
  using stop_flag = const std::atomic<bool>*;

  /// Waits until the entry is ready, `deadline` passes, or `stop` is set.
  result wait_one(const object_id& id, clock::time_point deadline,
                  stop_flag stop = nullptr);

  /// Waits until `k` of `ids` are ready, `deadline` passes, or `stop` is
  /// set; returns which are ready.
  std::vector<bool> wait_many(const std::vector<object_id>& ids, std::size_t k,
                              clock::time_point deadline,
                              stop_flag stop = nullptr);

  /// Wakes the waits whose stop flag is set (set it first).
  void wake_stopped();

  /// Runs `callback` once the entry is ready: at once, on this thread, if
  /// it is ready or there is no entry (and returns false); else later, on
  /// the thread that makes it ready, once that thread released the store's
  /// lock (and returns true). The callback does not keep the entry alive.
  /// A callback still waiting when its entry or the store goes is dropped
  /// unrun, under the lock: what it holds must not call into the store as
  /// it goes.
  bool on_ready(const object_id& id, std::function<void()> callback);

  /// Adds a local reference; creates no entry. Returns whether there was an
  /// entry to add it to.
  bool add_ref(const object_id& id);

  /// Adds a local reference to an object owned by `owner`, reached at
  /// `address`. An object owned elsewhere that has no entry here gets a
  /// pending one, registered with its owner (event `borrowed`). Returns
  /// whether the entry was made.
  bool borrow(const object_id& id, const worker_id& owner,
              const detail::owner_address& address);

  /// The owner of a borrowed object and where it is; a nil owner if the
  /// object has no entry here or is owned here.
  std::pair<worker_id, detail::owner_address>
  owner_of(const object_id& id) const;

  /// Counts `n` registrations of `borrower` for one of this store's own
  /// objects. Returns false if the object is gone.
  bool add_borrower(const object_id& id, const worker_id& borrower,
                    std::int32_t n);

  /// Ends `n` registrations of `borrower`; frees the object if nothing else
  /// keeps it. Ends that come before their registrations are kept for the
  /// registrations to cancel.
  void remove_borrower(const object_id& id, const worker_id& borrower,
                       std::int32_t n);

  /// Ends every registration of `borrower` (it died).
  void drop_borrower(const worker_id& borrower);

  /// The processes registered as borrowers of `id`, and the local, task and
  /// contained references to it (for tests).
  struct counts {
    std::int32_t local = 0;
    std::int32_t task = 0;
    std::int32_t contained = 0;
    std::size_t borrowers = 0;
  };
  counts count_of(const object_id& id) const;

  /// Drops a local reference; frees the entry when none remain.
  void release(const object_id& id);

  /// Adds or drops a reference held by a submitted task for its argument.
  /// `add_task_ref` returns false (and holds nothing) if there is no entry.
  bool add_task_ref(const object_id& id);

  /// Adds a task reference on each ref argument of `args` and each ref inside
  /// an argument value that has an entry here; returns the objects held.
  std::vector<object_id>
  add_task_refs(const std::vector<detail::task_arg>& args);
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
    /// Set with the last wake-up, for a waiter that spins before it sleeps.
    std::atomic<bool> woken{false};
    stop_flag stop = nullptr;
    /// Set for a waiter of `on_ready`, which the store owns: run instead of
    /// notifying, then deleted.
    std::function<void()> callback;

    bool stopped() const noexcept {
      return stop != nullptr && stop->load(std::memory_order_acquire);
    }
  };

  /// Waits on `w` until it is woken for good, `deadline` passes, or its
  /// stop flag is set. REQUIRES: `guard` holds mu_.
  void block(waiter& w, std::unique_lock<std::mutex>& guard,
             clock::time_point deadline) EXCLUSIVE_LOCKS_REQUIRED(mu_);

  /// What an entry shares with other processes: kept apart, and made only
  /// for an entry that shares something, so that the entries of most
  /// objects (results owned here, read here) stay small and quick to make
  /// and free under the lock, on every call.
  struct sharing {
    /// Borrowed entries: the owner, and this process's registrations with
    /// it. Nil for an object owned here.
    worker_id owner;
    detail::owner_address address;
    std::int32_t registrations = 0;
    /// Own objects: the processes that borrow it, with their registrations.
    /// A registration reaches this store from the process that handed the
    /// ref on, its end from the borrower itself, so the end can come first:
    /// the count then goes below zero until the registration cancels it. A
    /// count below zero keeps nothing alive.
    std::vector<std::pair<worker_id, std::int32_t>> borrowers;
  };

  /// Whether a process borrows the object of `sh` (a null `sh` shares
  /// nothing).
  static bool lent(const sharing* sh);

  struct entry {
    state st = state::pending;
    bool pinned = false;
    bool report_free = false;
    std::int32_t local_refs = 0;
    std::int32_t task_refs = 0;
    /// Objects here whose values contain this one.
    std::int32_t contained = 0;
    /// Null while the entry shares nothing (see `shared`).
    std::unique_ptr<sharing> share;
    /// The refs inside this entry's value, each held once.
    std::vector<object_id> contains;
    detail::value val;
    std::shared_ptr<const detail::error_info> err;
    node_id location;
    std::vector<waiter*> waiters;
  };

  using entry_map = std::unordered_map<object_id, entry>;
  using events = std::vector<event>;

  std::pair<entry_map::iterator, bool> emplace(const object_id& id);
  /// The sharing of `e`, made if it had none.
  static sharing& shared(entry& e);
  void erase(entry_map::iterator i);
  /// Deletes the `on_ready` waiters of `e` that never ran.
  static void drop_callbacks(entry& e);
  /// Whether a thread waits on `e`. A callback of `on_ready` keeps no
  /// entry alive: it is dropped with the entry (the asynchronous call that
  /// waited was cancelled and let go of its ref).
  static bool thread_waits(const entry& e);

  /// Runs, as it goes, the `on_ready` callbacks that `wake` fired: made
  /// before the lock is taken, so that they run after it is released (a
  /// callback may drop the last hold on something that calls back into
  /// the store).
  class fired_scope {
  public:
    explicit fired_scope(memory_store& store) : store_(store) {}
    ~fired_scope();
    fired_scope(const fired_scope&) = delete;
    fired_scope& operator=(const fired_scope&) = delete;

  private:
    memory_store& store_;
  };
  void wake(entry& e);
  void maybe_free(entry_map::iterator i, events& out);
  /// Marks `e` ready, its value containing `refs` (see `set_contains`),
  /// wakes its waiters and reports the events. REQUIRES: mu_ held.
  void make_ready(entry& e, const std::vector<detail::contained_ref>& refs,
                  arrival how) EXCLUSIVE_LOCKS_REQUIRED(mu_);
  /// Drops one of the references that `count` counts.
  void drop(const object_id& id, std::int32_t entry::*count);
  /// Holds each of `refs` once for the value of `holder`, and drops the
  /// holds of the value it had before.
  void set_contains(entry& holder,
                    const std::vector<detail::contained_ref>& refs, arrival how,
                    events& out);
  void emit(events& out);
  static result to_result(const entry& e);

  /// Lock order: taken before the owner directory's lock (the hook runs
  /// under this one and looks owners up there, owner_directory.hpp), never
  /// after it.
  mutable std::mutex mu_;
  entry_map entries_ GUARDED_BY(mu_);
  /// Set by `close`: the error of every entry added pending after it.
  std::shared_ptr<const detail::error_info> closed_ GUARDED_BY(mu_);
  worker_id self_ GUARDED_BY(mu_);
  hook hook_ GUARDED_BY(mu_);
  /// The waits that have a stop flag, for `wake_stopped`.
  std::vector<waiter*> stoppable_ GUARDED_BY(mu_);
  /// Callbacks `wake` fired, for the `fired_scope` of the change.
  std::vector<std::function<void()>> fired_ GUARDED_BY(mu_);
  std::atomic<bool> any_fired_{false};
};

} // namespace prism::internal
