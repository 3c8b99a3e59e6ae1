#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include "owner/actor_routes.hpp"
#include "owner/owner_directory.hpp"
#include "owner/run_control.hpp"
#include "prism/detail/runtime.hpp"
#include "prism/internal/memory_store.hpp"

namespace prism::actors {

/// The API side of an owner: what `prism::task`, `put`, `get` and `wait` call
/// on a driver's or worker's threads. Objects live in a memory store shared
/// with the owner actor; tasks go to the owner actor as messages. `put` and
/// `get` of ready objects touch no actor at all.
class owner_client : public detail::runtime {
public:
  struct config {
    worker_id self;
    node_id node;
    job_id job;
    /// Where the owner actor, started on first use (an actor that never
    /// submits a task or makes an object needs none), is registered.
    std::shared_ptr<owner_directory> directory;
    caf::actor raylet;
    caf::actor gcs;
    std::string ns;
    std::shared_ptr<internal::memory_store> store;
    /// `put` values larger than this go to the object store of `node`.
    std::size_t max_inline_bytes = 100 * 1024;
    /// The owner drives `job`: the control store ends the job if the
    /// owner goes down (`protocol::watch_driver`).
    bool driver = false;
    /// A worker's: the cancellation of the tasks it runs.
    std::shared_ptr<run_control> runs;
  };

  owner_client(caf::actor_system& sys, config cfg);

  ~owner_client() override;

  // -- runtime interface ----------------------------------------------------

  detail::ref_ptr submit_task(const std::string& function,
                              std::vector<detail::task_arg> args,
                              const detail::task_options& opts) override;

  detail::ref_ptr put(detail::value v) override;

  detail::value get(const detail::ref_token& ref,
                    detail::wait_duration timeout) override;

  std::vector<bool> wait(const std::vector<const detail::ref_token*>& refs,
                         std::size_t num_returns,
                         detail::wait_duration timeout) override;

  actor_id create_actor(const std::string& factory, std::uint64_t class_tag,
                        std::vector<detail::task_arg> args,
                        const detail::actor_options& opts) override;

  detail::ref_ptr submit_actor_task(const actor_id& actor,
                                    const std::string& method,
                                    std::vector<detail::task_arg> args,
                                    const detail::call_options& opts) override;

  std::optional<actor_id> find_actor(const std::string& name,
                                     const std::string* ns,
                                     std::uint64_t class_tag) override;

  void cancel(const detail::ref_token& ref, bool force,
              bool recursive) override;

  void kill_actor(const actor_id& actor, bool no_restart) override;

  bool kv_put(const std::string& ns, const std::string& key,
              const std::string& value, bool overwrite) override;

  std::optional<std::string> kv_get(const std::string& ns,
                                    const std::string& key) override;

  bool kv_del(const std::string& ns, const std::string& key) override;

  std::vector<std::string> kv_keys(const std::string& ns,
                                   const std::string& prefix) override;

  state::page list_state(state::kind k,
                         const state::list_options& options) override;
  std::optional<state::entry> get_state(state::kind k,
                                        const std::string& id) override;
  std::vector<state::count>
  summarize_state(state::kind k, const std::string& group_key) override;

  detail::ref_ptr borrow(const object_id& id, const worker_id& owner,
                         const detail::owner_address& address) override;

  void hold(const object_id& id, const worker_id& owner,
            const detail::owner_address& address) override;

  void release(const object_id& id) override;

  job_id current_job() const override {
    return job_;
  }

  worker_id self() const override {
    return cfg_.self;
  }

  node_id node() const override {
    return cfg_.node;
  }

  task_id current_task() const override {
    return current_task_;
  }

  std::int32_t current_attempt() const override {
    return current_attempt_;
  }

  // -- worker side ----------------------------------------------------------

  /// Sets the task this client's thread runs (workers only); nested tasks
  /// and puts are made on its behalf, under its job.
  void begin_task(const task_id& id, job_id job, std::int32_t attempt) {
    current_task_ = id;
    job_ = job;
    current_attempt_ = attempt;
    blocked_ = false;
  }

  void end_task() {
    current_task_ = task_id{};
    current_attempt_ = 0;
  }

  /// A result with `refs` inside goes to the owner actor `to` of worker
  /// `to_id`: registers `to_id` as a borrower of each ref with its owner
  /// first (directly in the store for this process's own objects), so that
  /// the objects outlive this process's references to them.
  void register_borrower(const std::vector<detail::contained_ref>& refs,
                         const worker_id& to_id, const caf::actor& to);

  /// Runs `callback` once the object of `ref` is ready in this client's
  /// store (a borrowed one is fetched from its owner meanwhile): at once if
  /// it is, else on the thread that makes it ready (see
  /// `memory_store::on_ready`).
  void when_ready(const detail::ref_token& ref, std::function<void()> callback);

  /// Drops the references that encoding a result took on `refs`.
  void release_refs(const std::vector<detail::contained_ref>& refs);

  /// Whether this client runs inside a worker, which lends its CPU back to
  /// the raylet while a task waits in `get`.
  void set_in_worker(bool on) {
    in_worker_ = on;
  }

  const std::shared_ptr<internal::memory_store>& store() const {
    return cfg_.store;
  }

  /// The owner actor, spawned on first use.
  const caf::actor& owner_handle();

  /// The address of the owner actor (spawned on first use), which the refs
  /// this client makes carry.
  const detail::owner_address& own_address();

  /// Ends the owner actor if it was started: it shares fate with the worker
  /// or actor this client belongs to.
  void stop_owner();

  /// The namespace of the job this client works for: a driver's, an
  /// actor's, or (in a worker) that of the job of the task it runs, looked
  /// up in the control store once per job.
  std::string ns();

  /// The actor system this client's actors run in.
  caf::actor_system& system() const {
    return sys_;
  }

  /// The control store, as this client reaches it.
  const caf::actor& gcs() const {
    return cfg_.gcs;
  }

  /// Fails everything still waiting (at shutdown), so that no `get` hangs.
  void fail_all(const detail::error_info& err);

  /// When this process records task events: has the owner send every
  /// event it kept, the changes of its tasks in flight too, and waits (a
  /// few seconds at most) until the control store has them. Returns
  /// whether it has.
  bool flush_task_events();

  /// Whether the owner actor has ended (its store is closed): the worker or
  /// actor this client belongs to is being killed.
  bool owner_ended() const {
    return cfg_.store->closed();
  }

private:
  /// `ns`, or the job's namespace if `ns` is empty.
  std::string ns_or_job(const std::string& ns) {
    return ns.empty() ? this->ns() : ns;
  }

  task_id next_task_id();
  /// Takes a task reference on each ref argument and each ref inside an
  /// argument value, and drops the references that encoding took; returns
  /// the objects held.
  std::vector<object_id> hold_args(const std::vector<detail::task_arg>& args);
  void ensure_fetch(const object_id& id, const worker_id& owner,
                    const detail::owner_address& address);
  /// A new ref to one of this client's own objects.
  detail::ref_ptr own_ref(const object_id& id);
  void on_block();
  void on_unblock();
  /// Reads one of this owner's objects kept in a node's store, through the
  /// owner actor (which rebuilds it first if that copy was lost).
  detail::value read_remote(const object_id& id, detail::wait_duration timeout);

  caf::actor_system& sys_;
  config cfg_;
  /// The routes of the actors this client calls or creates: made with the
  /// owner actor, on first use (an actor instance that makes no task,
  /// object or call needs neither).
  std::shared_ptr<actor_routes> routes_;
  std::once_flag owner_once_;
  caf::actor owner_;
  detail::owner_address own_address_;
  std::atomic<bool> owner_started_{false};
  job_id job_;
  std::atomic<std::uint64_t> next_seq_{1};
  /// The actors this client creates take the ids of a run from a random
  /// start (`actor_id::in_run`), so that they hash side by side.
  const unique_id actor_ids_;
  std::atomic<std::uint64_t> next_actor_{0};
  task_id current_task_;
  std::int32_t current_attempt_ = 0;
  bool in_worker_ = false;
  bool blocked_ = false;
  /// A worker's job and its namespace, once looked up.
  std::mutex ns_mu_;
  std::optional<std::pair<job_id, std::string>> job_ns_;
};

/// Holds back the answer of a call until the owners of the objects it came
/// to borrow have counted this process as a borrower.
///
/// A caller lends the refs in a call's arguments until the call's answer
/// reaches it, then lets go: with worker processes it tells the objects'
/// owners. The callee, meanwhile, registered with those owners, over its
/// own connections to them. Nothing orders the two messages at an owner
/// that is neither caller nor callee: its multiplexer may read the
/// caller's release first, count no borrower, and free the object the
/// callee holds. While one of these lives on a thread, a borrowed entry the
/// thread makes of a third process's object is registered by this
/// process's owner actor, which asks for an acknowledgement; the end of its
/// life waits for them all, so the call answers only once the registrations
/// are counted. Objects of the caller's own need no wait: the registration
/// and the answer reach the same process over one connection.
///
///   {
///     answer_after_borrows borrows{call.task.submitter};
///     done.result = method->call_method(instance, args);
///   } // waits here, if the call borrowed such objects
class answer_after_borrows {
public:
  /// For a call from the process of worker `caller`.
  explicit answer_after_borrows(const worker_id& caller);

  /// Waits until each owner asked has answered, is found gone, or the
  /// registration's own time is up.
  ~answer_after_borrows();

  answer_after_borrows(const answer_after_borrows&) = delete;
  answer_after_borrows& operator=(const answer_after_borrows&) = delete;

  /// For the store's hook, on the thread that made the borrowed entry `e`:
  /// whether the call this thread runs registers it (through `own_owner`,
  /// the owner actor of this process), and the hook must not.
  static bool take(caf::actor_system& sys, const caf::actor& own_owner,
                   const internal::memory_store::event& e);

private:
  struct asked;

  worker_id caller_;
  answer_after_borrows* outer_;
  std::unique_ptr<asked> asked_;
};

/// Gathers the borrowed entries the calling thread makes while it lives,
/// for the owner actor to register itself, with acknowledgement: the refs
/// inside a borrowed object that arrived (see `object_arrived`). The store's
/// hook hands them here instead of registering them.
class borrows_gathered {
public:
  borrows_gathered();
  ~borrows_gathered();

  borrows_gathered(const borrows_gathered&) = delete;
  borrows_gathered& operator=(const borrows_gathered&) = delete;

  /// What was gathered: the objects, their owners and where they are.
  std::vector<detail::contained_ref> refs;

  /// For the store's hook: whether a gathering on this thread takes the
  /// borrowed entry `e`, and the hook must not register it.
  static bool take(const internal::memory_store::event& e);

private:
  borrows_gathered* outer_;
};

} // namespace prism::actors
