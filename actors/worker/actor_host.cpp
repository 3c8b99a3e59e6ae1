#include "worker/actor_host.hpp"

#include <algorithm>
#include <atomic>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>

#include <unistd.h>

#include <caf/all.hpp>

#include "common/default_handlers.hpp"
#include "common/log.hpp"
#include "common/output_source.hpp"
#include "common/user_errors.hpp"
#include "gcs/gcs_client.hpp"
#include "net/peers.hpp"
#include "owner/owner_client.hpp"
#include "prism/detail/async.hpp"
#include "prism/detail/function_registry.hpp"
#include "prism/internal/task_events.hpp"
#include "protocol/gcs_raylet_actors.hpp"
#include "protocol/gcs_restart.hpp"
#include "protocol/metrics.hpp"
#include "protocol/owner_actor.hpp"
#include "protocol/raylet_worker.hpp"
#include "protocol/supervisor.hpp"
#include "worker/instance_bridge.hpp"
#include "worker/instance_process.hpp"

namespace prism::actors {

namespace {

// One logger for every instance; looking it up by name takes a global lock.
const std::shared_ptr<spdlog::logger>& host_logger() {
  static const auto log = component_logger("actor_host");
  return log;
}

using ran_atom = caf::atom_constant<caf::atom("ran")>;
using flush_atom = caf::atom_constant<caf::atom("flush")>;
/// Asynchronous calls may go on (`instance_state::async_part::ready`).
using go_on_atom = caf::atom_constant<caf::atom("goon")>;
/// The sleeps that end in a millisecond are over
/// (`instance_state::async_part::sleepers`).
using slept_atom = caf::atom_constant<caf::atom("slept")>;
/// The instance process ended (or could not start).
/// The instance process's socket ended (or, with a text, the instance is
/// lost: why).
using lost_atom = caf::atom_constant<caf::atom("instlost")>;
/// The time the instance process had to connect is up.
using connect_atom = caf::atom_constant<caf::atom("instconn")>;
/// An asynchronous call that waits in the instance process may go on.
using woke_atom = caf::atom_constant<caf::atom("instwoke")>;

class async_call_state;

/// Calls run back to back in one executor job while one at a time is allowed.
constexpr std::size_t max_batch = 256;

/// The runtime an actor's methods see. It makes the actor's owner client
/// (what its calls own lives there) on the first call that needs one: most
/// actors never submit a task nor put a value, and an idle actor without a
/// client and its memory store is some 700 bytes smaller.
class actor_runtime final : public detail::runtime {
public:
  /// What the client is made of, once it is: the settings the actors of
  /// its namespace share, with the actor's own id and job; before that,
  /// these answer `self`, `node` and `job`.
  void prepare(caf::actor_system& sys,
               std::shared_ptr<const owner_client::config> settings,
               const worker_id& self, job_id job) {
    sys_ = &sys;
    settings_ = std::move(settings);
    self_ = self;
    job_ = job;
  }

  /// The client, made now if it was not.
  owner_client& client() {
    std::call_once(once_, [this] {
      auto cfg = *settings_;
      cfg.self = self_;
      cfg.job = job_;
      cfg.store = std::make_shared<internal::memory_store>();
      client_ = std::make_shared<owner_client>(*sys_, std::move(cfg));
      made_.store(true, std::memory_order_release);
    });
    return *client_;
  }

  /// What the actor's client is made of (its node, raylet, control store
  /// and directory); the host reads them here too.
  const owner_client::config& settings() const {
    return *settings_;
  }

  /// The client if it was made; none otherwise.
  owner_client* made() const {
    return made_.load(std::memory_order_acquire) ? client_.get() : nullptr;
  }

  detail::ref_ptr submit_task(const std::string& function,
                              std::vector<detail::task_arg> args,
                              const detail::task_options& opts) override {
    return client().submit_task(function, std::move(args), opts);
  }
  detail::ref_ptr put(detail::value v) override {
    return client().put(std::move(v));
  }
  detail::value get(const detail::ref_token& ref,
                    detail::wait_duration timeout) override {
    return client().get(ref, timeout);
  }
  std::vector<bool> wait(const std::vector<const detail::ref_token*>& refs,
                         std::size_t num_returns,
                         detail::wait_duration timeout) override {
    return client().wait(refs, num_returns, timeout);
  }
  actor_id create_actor(const std::string& factory, std::uint64_t class_tag,
                        std::vector<detail::task_arg> args,
                        const detail::actor_options& opts) override {
    return client().create_actor(factory, class_tag, std::move(args), opts);
  }
  detail::ref_ptr submit_actor_task(const actor_id& actor,
                                    const std::string& method,
                                    std::vector<detail::task_arg> args,
                                    const detail::call_options& opts) override {
    return client().submit_actor_task(actor, method, std::move(args), opts);
  }
  std::optional<actor_id> find_actor(const std::string& name,
                                     const std::string* ns,
                                     std::uint64_t class_tag) override {
    return client().find_actor(name, ns, class_tag);
  }
  void cancel(const detail::ref_token& ref, bool force,
              bool recursive) override {
    client().cancel(ref, force, recursive);
  }
  void kill_actor(const actor_id& actor, bool no_restart) override {
    client().kill_actor(actor, no_restart);
  }
  bool kv_put(const std::string& ns, const std::string& key,
              const std::string& value, bool overwrite) override {
    return client().kv_put(ns, key, value, overwrite);
  }
  std::optional<std::string> kv_get(const std::string& ns,
                                    const std::string& key) override {
    return client().kv_get(ns, key);
  }
  bool kv_del(const std::string& ns, const std::string& key) override {
    return client().kv_del(ns, key);
  }
  std::vector<std::string> kv_keys(const std::string& ns,
                                   const std::string& prefix) override {
    return client().kv_keys(ns, prefix);
  }
  state::page list_state(state::kind k,
                         const state::list_options& options) override {
    return client().list_state(k, options);
  }
  std::optional<state::entry> get_state(state::kind k,
                                        const std::string& id) override {
    return client().get_state(k, id);
  }
  std::vector<state::count>
  summarize_state(state::kind k, const std::string& group_key) override {
    return client().summarize_state(k, group_key);
  }
  detail::ref_ptr borrow(const object_id& id, const worker_id& owner,
                         const detail::owner_address& address) override {
    return client().borrow(id, owner, address);
  }
  void hold(const object_id& id, const worker_id& owner,
            const detail::owner_address& address) override {
    client().hold(id, owner, address);
  }
  void release(const object_id& id) override {
    client().release(id);
  }
  job_id current_job() const override {
    auto* c = made();
    return c != nullptr ? c->current_job() : job_;
  }
  worker_id self() const override {
    return self_;
  }
  node_id node() const override {
    return settings_->node;
  }
  task_id current_task() const override {
    auto* c = made();
    return c != nullptr ? c->current_task() : task_id{};
  }
  std::int32_t current_attempt() const override {
    auto* c = made();
    return c != nullptr ? c->current_attempt() : 0;
  }

private:
  caf::actor_system* sys_ = nullptr;
  std::shared_ptr<const owner_client::config> settings_;
  worker_id self_;
  job_id job_;
  std::once_flag once_;
  std::atomic<bool> made_{false};
  std::shared_ptr<owner_client> client_;
};

/// What the host shares with the executor threads that run its methods.
struct instance_state {
  std::shared_ptr<void> instance;
  actor_runtime runtime;
  detail::actor_context ctx;
  std::atomic<bool> exit_requested{false};
  /// The host has ended (killed, or its instance lost): the calls of a
  /// batch that have not started never run; their callers learn of the
  /// actor's end from the control store.
  std::atomic<bool> ended{false};
  std::string failure;
  /// Its class, as its process's output names it (common/output_source.hpp).
  std::string source;

  /// Answers of calls that ran, which the host sends (see `answer`).
  struct answer {
    caf::actor reply_to;
    protocol::actor_task_done done;
  };
  std::mutex answers_mu;
  std::vector<answer> answers;             // guarded by answers_mu
  std::vector<detail::contained_ref> held; // guarded by answers_mu
  bool flush_requested = false;            // guarded by answers_mu

  /// A batch of calls the host hands to the pool, shared with the host
  /// until a thread has run it: a cancellation looks for its calls there.
  using call_batch = std::shared_ptr<std::vector<protocol::actor_task>>;
  /// A thread that runs calls: the batch it runs, the call it runs (or ran
  /// last), and that call's cancellation flag (`prism::is_cancelled`).
  struct call_slot {
    const std::vector<protocol::actor_task>* batch = nullptr;
    task_id task;
    std::atomic<bool> cancelled{false};
  };
  std::mutex cancel_mu;
  std::vector<call_slot*> slots; // guarded by cancel_mu
  /// Batches the host handed to the pool that no thread took yet.
  std::vector<call_batch> handed; // guarded by cancel_mu
  /// Calls of the handed batches and the slots' batches cancelled before
  /// they began: they never do. Each goes when it would begin, or when its
  /// batch ends. A vector: an idle actor keeps none, and a deque allocates
  /// as it is made.
  std::vector<task_id> cancelled; // guarded by cancel_mu

  using sleeper = std::pair<std::shared_ptr<async_call_state>, std::uint64_t>;

  /// What the host keeps of its asynchronous calls.
  struct async_part {
    std::mutex mu;
    /// The calls that have not ended, by task: each owns its suspended
    /// coroutine.
    std::unordered_map<task_id, std::shared_ptr<async_call_state>>
        calls; // guarded by mu
    /// Those that may go on, for the host to run in their groups.
    std::vector<std::shared_ptr<async_call_state>> ready; // guarded by mu
    bool wake_sent = false;                               // guarded by mu
    /// Sleeping calls, with the suspension each wakes, by the millisecond
    /// of the steady clock their sleep ends in (rounded up): one timer
    /// serves every call whose sleep ends in that millisecond, so many
    /// sleeping calls do not keep the clock's thread busy with a timer
    /// each.
    std::map<std::int64_t, std::vector<sleeper>> sleepers; // guarded by mu
  };

  /// The part made with the actor's first asynchronous call: most actors
  /// have none, and 176 bytes fewer move an idle actor's state into the
  /// allocator's next smaller size (640 bytes, not 768).
  async_part& async() {
    if (auto* made = async_.load(std::memory_order_acquire))
      return *made;
    auto fresh = std::make_unique<async_part>();
    async_part* none = nullptr;
    if (async_.compare_exchange_strong(none, fresh.get(),
                                       std::memory_order_acq_rel))
      return *fresh.release();
    return *none; // another thread made it first
  }

  /// The part, if a call made it; null if none did (so none waits).
  async_part* async_if_made() const {
    return async_.load(std::memory_order_acquire);
  }

  instance_state() = default;
  instance_state(const instance_state&) = delete;
  instance_state& operator=(const instance_state&) = delete;
  ~instance_state() {
    delete async_.load();
  }

private:
  std::atomic<async_part*> async_{nullptr};
};

/// The calls of one concurrency group: they wait in order, and run at most
/// `limit` at once.
struct call_group {
  std::int32_t limit = 1;
  std::int32_t running = 0;
  /// A list: an idle actor's allocates nothing (a deque allocates as it
  /// is made).
  std::list<protocol::actor_task> queue;
  /// Asynchronous calls of the group that may go on: they run before the
  /// calls that have not begun. A list: an actor without such calls keeps
  /// an empty one, which allocates nothing.
  std::list<std::shared_ptr<async_call_state>> resumptions;
};

/// An actor's named concurrency groups, made only for an actor that has
/// some: most have none, and an idle actor stays small.
struct named_groups {
  std::vector<std::pair<std::string, call_group>> groups;
  /// Each method's group index, once looked up.
  std::unordered_map<std::string, std::size_t> of_method;
};

/// What a host keeps of an instance that runs in a process of its own
/// (worker/instance_process.hpp).
struct remote_instance {
  std::shared_ptr<instance_link> link;
  /// Makes the calls of Prism's API that the instance makes.
  std::shared_ptr<instance_bridge> bridge;
  /// An asynchronous call that waits: the call (without its arguments), its
  /// group, and when it began.
  struct waiting_call {
    protocol::actor_task call;
    std::size_t group = 0;
    std::int64_t start_us = 0;
  };
  std::unordered_map<task_id, waiting_call> waiting;
  /// Per group, the waiting calls that may go on, in the order they woke.
  std::map<std::size_t, std::list<task_id>> woken;
  /// Calls that woke before the host heard that they wait.
  std::vector<task_id> woke_early;
};

struct host_state {
  static inline const char* name = "actor_host";

  /// What the host reads of its `actor_host_config` once it started; the
  /// rest (the spec) serves its start only, and an idle actor does not keep
  /// it. Its node and control store are the instance's client settings'
  /// (`gcs()`, `node()`).
  actor_id actor;
  std::int32_t incarnation = 0;
  bool ready = false;
  bool ending = false;
  caf::actor_addr reporter;
  std::shared_ptr<executor> pool;
  std::shared_ptr<instance_state> inst;
  /// The default group (`max_concurrency`), index 0, in which the
  /// constructor runs too; the actor's named groups are 1 and up (see
  /// `group`).
  call_group default_group;
  std::unique_ptr<named_groups> named;

  std::size_t num_groups() const {
    return 1 + (named ? named->groups.size() : 0);
  }

  call_group& group(std::size_t index) {
    return index == 0 ? default_group : named->groups[index - 1].second;
  }
  /// Why it ended, for the calls it refuses.
  std::string end_cause;
  /// What the host keeps of an instance that runs in a process of its own;
  /// none for one that runs here.
  std::unique_ptr<remote_instance> remote;

  const caf::actor& gcs() const {
    return inst->runtime.settings().gcs;
  }
  const node_id& node() const {
    return inst->runtime.settings().node;
  }
};

using host_actor = caf::stateful_actor<host_state>;

// An idle actor is mostly its host and the instance's state: each is
// allocated in one of the allocator's sizes (jemalloc's 1280 and 448
// bytes; 1248 and 440 now), and a few bytes more move it into the next,
// 256 and 64 bytes up.
static_assert(sizeof(caf::actor_storage<host_actor>) <= 1280,
              "an actor host no longer fits in 1280 bytes");
static_assert(sizeof(instance_state) + 16 <= 448,
              "an instance's state, with its shared count, no longer fits "
              "in 448 bytes");

// Runs on an executor thread with the actor's runtime and context set.
template <class F>
void with_actor_context(instance_state& inst, F f) {
  note_output_source(inst.source);
  detail::set_thread_runtime(&inst.runtime);
  detail::set_current_actor(&inst.ctx);
  f();
  detail::set_current_actor(nullptr);
  detail::set_thread_runtime(nullptr);
}

/// Hands the answer of a call to the host, which sends it. A thread that
/// runs calls back to back does not stop to send each answer: the host
/// sends all that are waiting when it runs, in a message per caller, and it
/// runs on a thread of its own, so no answer waits for the calls after it.
void answer(instance_state& inst, const caf::actor& host,
            const protocol::actor_task& call, protocol::actor_task_done done,
            bool last) {
  // The caller's owner borrows the refs inside the result before it sees
  // them; this host's references go once the answer is sent.
  if (!done.result.refs.empty())
    inst.runtime.client().register_borrower(done.result.refs,
                                            call.task.submitter, call.reply_to);
  bool request = false;
  {
    std::lock_guard<std::mutex> guard{inst.answers_mu};
    inst.held.insert(inst.held.end(), done.result.refs.begin(),
                     done.result.refs.end());
    inst.answers.push_back({call.reply_to, std::move(done)});
    // The last call's thread sends the answers itself, right away.
    request = !last && !inst.flush_requested;
    inst.flush_requested = inst.flush_requested || request;
  }
  if (request)
    caf::anon_send(host, flush_atom::value);
}

/// Sends the answers waiting in `inst`: consecutive answers to one caller
/// go in one message.
void send_answers(instance_state& inst) {
  std::vector<instance_state::answer> answers;
  std::vector<detail::contained_ref> held;
  {
    std::lock_guard<std::mutex> guard{inst.answers_mu};
    answers.swap(inst.answers);
    held.swap(inst.held);
    inst.flush_requested = false;
  }
  for (std::size_t i = 0; i < answers.size();) {
    auto j = i + 1;
    while (j < answers.size() && answers[j].reply_to == answers[i].reply_to)
      ++j;
    if (j == i + 1) {
      caf::anon_send(answers[i].reply_to, std::move(answers[i].done));
    } else {
      protocol::actor_tasks_done batch;
      batch.reserve(j - i);
      for (auto k = i; k < j; ++k)
        batch.push_back(std::move(answers[k].done));
      caf::anon_send(answers[i].reply_to, std::move(batch));
    }
    i = j;
  }
  if (!held.empty())
    inst.runtime.client().release_refs(held);
}

/// Whether `task` is one of `batch`'s calls.
bool in_batch(const std::vector<protocol::actor_task>& batch,
              const task_id& task) {
  return std::any_of(batch.begin(), batch.end(),
                     [&](const auto& call) { return call.task == task; });
}

/// Whether `task` is in a batch that a thread runs or will run, which
/// has not ended. REQUIRES: inst.cancel_mu held.
bool in_live_batch(const instance_state& inst, const task_id& task) {
  return std::any_of(
             inst.slots.begin(), inst.slots.end(),
             [&](const auto* s) { return in_batch(*s->batch, task); }) ||
         std::any_of(inst.handed.begin(), inst.handed.end(),
                     [&](const auto& b) { return in_batch(*b, task); });
}

/// The thread's slot among the instance's, for the length of its batch of
/// calls, which it takes from those the host handed out.
class slot_scope {
public:
  slot_scope(instance_state& inst, const instance_state::call_batch& batch)
      : inst_(inst) {
    slot_.batch = batch.get();
    std::lock_guard<std::mutex> guard{inst_.cancel_mu};
    std::erase(inst_.handed, batch);
    inst_.slots.push_back(&slot_);
    detail::set_current_cancel_flag(&slot_.cancelled);
  }

  ~slot_scope() {
    detail::set_current_cancel_flag(nullptr);
    std::lock_guard<std::mutex> guard{inst_.cancel_mu};
    std::erase(inst_.slots, &slot_);
    // The batch's calls began or were skipped: their cancellations that
    // wait here are done with.
    if (!inst_.cancelled.empty())
      std::erase_if(inst_.cancelled, [&](const task_id& task) {
        return in_batch(*slot_.batch, task);
      });
  }

  slot_scope(const slot_scope&) = delete;
  slot_scope& operator=(const slot_scope&) = delete;

  /// The thread begins `task`. Returns false if it was cancelled before:
  /// it must not run.
  bool begin(const task_id& task) {
    std::lock_guard<std::mutex> guard{inst_.cancel_mu};
    auto& cancelled = inst_.cancelled;
    if (!cancelled.empty()) {
      if (auto i = std::find(cancelled.begin(), cancelled.end(), task);
          i != cancelled.end()) {
        cancelled.erase(i);
        return false;
      }
    }
    slot_.task = task;
    slot_.cancelled.store(false, std::memory_order_release);
    return true;
  }

private:
  instance_state& inst_;
  instance_state::call_slot slot_;
};

/// Fills `done` with what `method` threw. Call it in a `catch (...)`.
void method_threw(instance_state& inst, protocol::actor_task_done& done,
                  const std::string& method) {
  try {
    throw;
  } catch (const detail::actor_exit_signal&) {
    inst.exit_requested = true;
    done.error.code = errc::actor_died;
    done.error.message = "the actor exited (exit_actor)";
  } catch (...) {
    done.error = error_of_current_exception(method);
  }
}

/// One call of an asynchronous method (see prism/detail/async.hpp): its
/// coroutine, which it owns while suspended, and what wakes it. It goes on
/// only on the actor's threads, in its group, through the host.
class async_call_state final
    : public detail::async_call,
      public std::enable_shared_from_this<async_call_state> {
public:
  async_call_state(const std::shared_ptr<instance_state>& inst, caf::actor host,
                   const protocol::actor_task& call, actor_id actor,
                   std::int32_t incarnation, std::size_t group,
                   std::int64_t start_us)
      : inst_(inst), host_(std::move(host)), actor_(actor),
        incarnation_(incarnation), group_(group), start_us_(start_us) {
    call_.task = call.task;
    call_.method = call.method;
    call_.reply_to = call.reply_to;
    call_.submit_us = call.submit_us;
  }

  ~async_call_state() override {
    // The actor ended while it was suspended.
    if (frame_)
      frame_.destroy();
  }

  async_call_state(const async_call_state&) = delete;
  async_call_state& operator=(const async_call_state&) = delete;

  void attach(std::coroutine_handle<> frame) override {
    frame_ = frame;
  }

  void resume_when_ready(const detail::ref_token& ref) override {
    // Once suspended, the call may go on and end on another thread before
    // this one returns.
    auto keep = shared_from_this();
    auto inst = inst_.lock();
    if (!inst)
      return;
    auto epoch = suspend();
    // A weak hold: the store may drop the callback unrun, under its lock,
    // where the call's coroutine must not go.
    inst->runtime.client().when_ready(ref, [weak = weak_from_this(), epoch] {
      if (auto self = weak.lock())
        self->wake(epoch);
    });
  }

  void resume_after(std::chrono::nanoseconds delay) override {
    auto keep = shared_from_this();
    auto inst = inst_.lock();
    if (!inst)
      return;
    auto now = std::chrono::steady_clock::now();
    // A year at most: the clock's time point must not overflow.
    delay = std::min<std::chrono::nanoseconds>(delay, std::chrono::hours{8760});
    auto due = std::chrono::ceil<std::chrono::milliseconds>(now + delay);
    auto key = static_cast<std::int64_t>(due.time_since_epoch().count());
    auto epoch = ++epochs_;
    bool first = false;
    {
      // Asleep once its timer's sleepers have it: it may wake from here on.
      auto& a = inst->async();
      std::lock_guard<std::mutex> guard{a.mu};
      auto [sleepers, added] = a.sleepers.try_emplace(key);
      first = added;
      sleepers->second.emplace_back(keep, epoch);
      sleep_ = {key, epoch};
      suspended_.store(epoch);
    }
    if (first)
      caf::delayed_anon_send(host_, due - now, slept_atom::value, key);
    // Cancelled before it slept: it goes on at once.
    if (cancelled()) {
      wake(epoch);
      auto& a = inst->async();
      std::lock_guard<std::mutex> guard{a.mu};
      drop_sleep(a, key, epoch);
    }
  }

  bool cancelled() const noexcept override {
    // Sequentially consistent with `suspend`: a cancellation and a
    // suspension that race see each other on one side at least.
    return cancelled_.load();
  }

  void finish(detail::value result, std::exception_ptr error) override {
    frame_ = nullptr; // the coroutine ends itself right after
    auto inst = inst_.lock();
    if (!inst)
      return;
    protocol::actor_task_done done;
    done.actor = actor_;
    done.task = call_.task;
    done.incarnation = incarnation_;
    if (error) {
      try {
        std::rethrow_exception(error);
      } catch (...) {
        method_threw(*inst, done, call_.method);
      }
    } else {
      done.result = std::move(result);
      done.ok = true;
    }
    if (call_.submit_us != 0) {
      done.start_us = start_us_;
      done.end_us = internal::unix_us_now();
    }
    auto keep = shared_from_this();
    answer(*inst, host_, call_, std::move(done), last_);
    auto& a = inst->async();
    std::lock_guard<std::mutex> guard{a.mu};
    a.calls.erase(call_.task);
  }

  /// Runs the coroutine on from where it waited (on an actor's thread);
  /// `last`: no call runs on after it on this thread before the thread
  /// sends the answers waiting (see `answer`).
  void resume(bool last) {
    last_ = last;
    detail::set_current_cancel_flag(&cancelled_);
    frame_.resume();
    detail::set_current_cancel_flag(nullptr);
  }

  /// The caller cancelled the call: it wakes, and its wait throws.
  void cancel() {
    cancelled_.store(true);
    wake(suspended_.load());
    // A sleep it woke from keeps nothing of it until its time is up.
    if (auto inst = inst_.lock()) {
      auto& a = inst->async();
      std::lock_guard<std::mutex> guard{a.mu};
      drop_sleep(a, sleep_.first, sleep_.second);
    }
  }

  /// What ends suspension `epoch` (the first to come): the host runs the
  /// call on.
  void wake(std::uint64_t epoch) {
    if (epoch == 0 || !suspended_.compare_exchange_strong(epoch, 0))
      return;
    auto inst = inst_.lock();
    if (!inst)
      return;
    bool send = false;
    {
      auto& a = inst->async();
      std::lock_guard<std::mutex> guard{a.mu};
      a.ready.push_back(shared_from_this());
      send = !a.wake_sent;
      a.wake_sent = true;
    }
    if (send)
      caf::anon_send(host_, go_on_atom::value);
  }

  std::size_t group() const noexcept {
    return group_;
  }

private:
  /// The coroutine suspends: returns the number of this suspension.
  std::uint64_t suspend() {
    auto epoch = ++epochs_;
    suspended_.store(epoch);
    // Cancelled before it waited: it goes on at once.
    if (cancelled())
      wake(epoch);
    return epoch;
  }

  /// Takes its sleep `epoch` out of the sleepers of millisecond `key`, if
  /// they still have it. REQUIRES: a.mu held.
  void drop_sleep(instance_state::async_part& a, std::int64_t key,
                  std::uint64_t epoch) {
    auto i = a.sleepers.find(key);
    if (i == a.sleepers.end())
      return;
    std::erase_if(i->second, [&](const auto& s) {
      return s.first.get() == this && s.second == epoch;
    });
    if (i->second.empty())
      a.sleepers.erase(i);
  }

  std::weak_ptr<instance_state> inst_;
  caf::actor host_;
  /// The call, without its arguments: whom to answer.
  protocol::actor_task call_;
  actor_id actor_;
  std::int32_t incarnation_;
  std::size_t group_;
  std::int64_t start_us_;
  std::coroutine_handle<> frame_;
  std::atomic<bool> cancelled_{false};
  /// The suspension it waits in; 0 while it runs or is about to.
  std::atomic<std::uint64_t> suspended_{0};
  std::uint64_t epochs_ = 0;
  /// Its last sleep: the millisecond it ends in (`instance_state::
  /// async_part::sleepers`) and its suspension. Guarded by the instance's
  /// async_part::mu.
  std::pair<std::int64_t, std::uint64_t> sleep_{0, 0};
  /// Its answer asks the host for no flush: the thread that runs it sends
  /// the answers itself once its batch ends (see `resume` and `answer`).
  bool last_ = true;
};

/// What an asynchronous method finds while its actor host runs it: the
/// host makes the call's state when the method's coroutine begins.
class call_async_host final : public detail::async_host {
public:
  call_async_host(const std::shared_ptr<instance_state>& inst,
                  const caf::actor& host, const protocol::actor_task& call,
                  const actor_id& actor, std::int32_t incarnation,
                  std::size_t group, std::int64_t start_us)
      : inst_(inst), host_(host), call_(call), actor_(actor),
        incarnation_(incarnation), group_(group), start_us_(start_us) {}

  detail::async_call* begin_async() override {
    state_ = std::make_shared<async_call_state>(
        inst_, host_, call_, actor_, incarnation_, group_, start_us_);
    // One lock with `on_cancel`: a cancellation of this call either finds
    // it among the asynchronous calls, or set the thread's flag first,
    // which the call takes over.
    std::lock_guard<std::mutex> cancel_guard{inst_->cancel_mu};
    if (detail::current_cancel_flag() != nullptr &&
        detail::current_cancel_flag()->load())
      state_->cancel();
    auto& a = inst_->async();
    std::lock_guard<std::mutex> guard{a.mu};
    a.calls.emplace(call_.task, state_);
    return state_.get();
  }

  /// Whether the method returned a future: its coroutine answers.
  bool went_async() const noexcept {
    return state_ != nullptr;
  }

private:
  const std::shared_ptr<instance_state>& inst_;
  const caf::actor& host_;
  const protocol::actor_task& call_;
  const actor_id& actor_;
  std::int32_t incarnation_;
  std::size_t group_;
  std::int64_t start_us_;
  /// The call's state, held while the method runs: its coroutine runs on
  /// this thread until its first wait, and may end meanwhile.
  std::shared_ptr<async_call_state> state_;
};

void run_calls(const std::shared_ptr<instance_state>& inst_ptr,
               const caf::actor& host, const actor_id& actor,
               std::int32_t incarnation, std::size_t group,
               const instance_state::call_batch& batch) {
  auto& inst = *inst_ptr;
  auto& registry = detail::function_registry::instance();
  auto& calls = *batch;
  with_actor_context(inst, [&] {
    slot_scope slot{inst, batch};
    // When the timed call before ended, if it ran just before this one:
    // calls run back to back, so that end is this call's start, and a
    // clock read per call is saved.
    std::int64_t ended_us = 0;
    for (auto& call : calls) {
      if (inst.ended.load(std::memory_order_relaxed))
        break;
      auto last_end_us = std::exchange(ended_us, 0);
      protocol::actor_task_done done;
      done.actor = actor;
      done.task = call.task;
      done.incarnation = incarnation;
      if (!slot.begin(call.task)) {
        done.error.code = errc::task_cancelled;
        done.error.function_name = call.method;
        done.error.message = "the actor call was cancelled before it began";
      } else if (inst.exit_requested.load()) {
        done.error.code = errc::actor_died;
        done.error.message = "the actor exited (exit_actor) before the call";
      } else if (auto* e = registry.find(call.method);
                 e == nullptr || !e->call_method) {
        done.error.code = errc::function_not_found;
        done.error.function_name = call.method;
        done.error.message = "no actor method named '" + call.method +
                             "' is registered in this worker";
      } else {
        std::vector<detail::value> args;
        args.reserve(call.args.size());
        for (auto& arg : call.args)
          args.push_back(std::move(arg.inline_value));
        // Its caller records it: the call's times are asked for.
        bool timed = call.submit_us != 0;
        if (timed)
          done.start_us =
              last_end_us != 0 ? last_end_us : internal::unix_us_now();
        call_async_host async{inst_ptr,    host,  call,         actor,
                              incarnation, group, done.start_us};
        detail::set_current_async_host(&async);
        {
          answer_after_borrows borrows{call.task.submitter};
          try {
            done.result = e->call_method(inst.instance.get(), args);
            done.ok = true;
          } catch (...) {
            method_threw(inst, done, call.method);
          }
        }
        detail::set_current_async_host(nullptr);
        // Its coroutine answers once it ends (it may have already).
        if (async.went_async())
          continue;
        if (timed)
          ended_us = done.end_us = internal::unix_us_now();
      }
      answer(inst, host, call, std::move(done), &call == &calls.back());
    }
  });
  // The answers still waiting go now, also if the host has ended meanwhile.
  send_answers(inst);
}

void construct(host_actor* self, actor_host_config& cfg) {
  auto& st = self->state;
  auto me = caf::actor_cast<caf::actor>(self);
  // The arguments serve this construction only: a restart is a new host,
  // with the spec the control store keeps.
  std::vector<detail::value> args;
  args.reserve(cfg.spec.args.size());
  for (auto& arg : cfg.spec.args)
    args.push_back(std::move(arg.inline_value));
  st.default_group.running = 1;
  st.pool->submit([inst = st.inst, factory = std::move(cfg.spec.factory),
                   args = std::move(args), creator = cfg.spec.owner, me] {
    with_actor_context(*inst, [&] {
      auto* e = detail::function_registry::instance().find(factory);
      if (e == nullptr || !e->make) {
        inst->failure = "no actor factory named '" + factory +
                        "' is registered in this worker";
        return;
      }
      answer_after_borrows borrows{creator};
      try {
        inst->instance = e->make(args);
      } catch (const detail::actor_exit_signal&) {
        inst->failure = "the factory called exit_actor";
      } catch (...) {
        auto err = error_of_current_exception(factory);
        inst->failure = "its factory '" + factory + "' threw " +
                        err.exception_type + ": " + err.message;
      }
    });
    caf::anon_send(me, ran_atom::value, std::int32_t{0});
  });
}

/// How long an instance process has to start and connect.
constexpr auto instance_start_timeout = std::chrono::seconds{30};

/// How long a host whose instance process's socket ended waits for its
/// node to say how the process ended, before it says only that it did.
constexpr auto instance_exit_wait = std::chrono::milliseconds{500};

/// The instance is lost with its process: the control store restarts it if
/// it may. The host reports it (past the endpoint's hop, so that a restart
/// of the control store loses nothing) and ends as if it ended well: its
/// node has nothing to add.
void lose_instance(host_actor* self, const std::string& why) {
  auto& st = self->state;
  if (st.ending)
    return;
  st.ending = true;
  st.end_cause = why;
  self->send(attached_gcs(st.gcs()),
             protocol::actor_instance_lost{st.actor, st.incarnation, why});
  self->quit(caf::exit_reason::normal);
}

/// Has the node start a process for the instance, and makes the instance
/// there once the process connects (see worker/instance_process.hpp).
void construct_in_process(host_actor* self, actor_host_config& cfg) {
  auto& st = self->state;
  instance_links* links = nullptr;
  try {
    links = &instance_links::of_process();
  } catch (const std::exception& e) {
    lose_instance(self, e.what());
    return;
  }
  instance_wire::construct msg;
  msg.factory = std::move(cfg.spec.factory);
  msg.args.reserve(cfg.spec.args.size());
  for (auto& arg : cfg.spec.args)
    msg.args.push_back(std::move(arg.inline_value));
  msg.actor = st.actor;
  msg.num_restarts = st.incarnation;
  msg.source = st.inst->source;
  msg.self = st.inst->runtime.self();
  msg.node = st.node();
  msg.job = cfg.spec.job;
  st.remote = std::make_unique<remote_instance>();
  auto& remote = *st.remote;
  auto weak_inst = std::weak_ptr<instance_state>(st.inst);
  remote.bridge = std::make_shared<instance_bridge>(
      std::shared_ptr<detail::runtime>(st.inst, &st.inst->runtime), st.pool,
      [weak_inst] {
        if (auto i = weak_inst.lock())
          if (auto* client = i->runtime.made())
            client->store()->wake_stopped();
      },
      [weak_inst](const detail::ref_token& ref, std::function<void()> ready) {
        if (auto i = weak_inst.lock())
          i->runtime.client().when_ready(ref, std::move(ready));
      });
  remote.bridge->sending(msg.args);
  // Weak: the link the callbacks live in is the host's.
  auto weak = self->address();
  auto tell = [weak](auto... xs) {
    if (auto host = caf::actor_cast<caf::actor>(weak))
      caf::anon_send(host, xs...);
  };
  auto token = unique_id::random().hex() + unique_id::random().hex();
  st.default_group.running = 1;
  instance_links::callbacks cbs;
  cbs.connected = [inst = st.inst, tell,
                   msg = std::move(msg)](instance_link& link) {
    link.construct(msg, [inst, tell](instance_wire::constructed c) {
      inst->failure = std::move(c.failure);
      tell(ran_atom::value, std::int32_t{0});
    });
  };
  cbs.runtime_call = [bridge =
                          remote.bridge](instance_link& link,
                                         instance_wire::runtime_call call) {
    bridge->take(link, std::move(call));
  };
  cbs.wake = [tell](const task_id& task) { tell(woke_atom::value, task); };
  // Shipped by the host, which the node knows to ship for the instance.
  cbs.metrics = [tell](instance_wire::metrics m) { tell(std::move(m)); };
  cbs.lost = [tell] { tell(lost_atom::value); };
  remote.link = links->expect(token, std::move(cbs));
  self->request(st.inst->runtime.settings().raylet, instance_start_timeout,
                protocol::start_instance_process{cfg.spec.job,
                                                 links->socket_name(), token,
                                                 st.inst->runtime.self()})
      .then([](std::int32_t) {},
            [self](caf::error& err) {
              lose_instance(self, "its process did not start (" +
                                      self->system().render(err) + ")");
            });
  self->delayed_send(self, instance_start_timeout, connect_atom::value);
}

/// Calls of a batch that wait (asynchronous ones), from the link's thread
/// to the host: each goes on once its process says it may. A message of
/// this process alone, inspectable as CAF asks of every message.
struct calls_wait {
  std::size_t group = 0;
  std::vector<remote_instance::waiting_call> calls;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f,
                                        remote_instance::waiting_call& x) {
  return f(x.call, x.group, x.start_us);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, calls_wait& x) {
  return f(x.group, x.calls);
}

/// Has the instance's process run `calls` of group `group` (or go on with
/// them, `resume`: asynchronous calls that waited, begun at `starts`), and
/// answers them as it learns how they went.
void run_in_process(host_actor* self, std::int32_t group,
                    std::vector<protocol::actor_task> calls, bool resume,
                    std::vector<std::int64_t> starts = {}) {
  auto& st = self->state;
  auto& remote = *st.remote;
  instance_wire::run batch;
  batch.resume = resume;
  batch.calls.reserve(calls.size());
  for (auto& call : calls) {
    auto& c = batch.calls.emplace_back();
    c.task = call.task;
    c.method = call.method;
    c.timed = call.submit_us != 0;
    c.args.reserve(call.args.size());
    for (auto& arg : call.args)
      c.args.push_back(std::move(arg.inline_value));
    // The answer needs the rest of the call, not its arguments.
    call.args.clear();
    remote.bridge->sending(c.args);
  }
  starts.resize(calls.size(), 0);
  auto done = [inst = st.inst, bridge = remote.bridge,
               host = caf::actor_cast<caf::actor>(self), actor = st.actor,
               inc = st.incarnation, group, calls = std::move(calls),
               starts = std::move(starts)](instance_wire::ran r) {
    if (r.exit_requested)
      inst->exit_requested = true;
    calls_wait waiting;
    waiting.group = static_cast<std::size_t>(group);
    auto n = std::min(r.outcomes.size(), calls.size());
    for (std::size_t i = 0; i < n; ++i) {
      auto& o = r.outcomes[i];
      auto start_us = starts[i] != 0 ? starts[i] : o.start_us;
      if (o.waits) {
        waiting.calls.push_back({calls[i], waiting.group, start_us});
        continue;
      }
      protocol::actor_task_done answered;
      answered.actor = actor;
      answered.task = calls[i].task;
      answered.incarnation = inc;
      answered.ok = o.ok;
      // The process held the refs inside the result to send it; the host
      // holds them now, until it sent the answer (`answer`).
      bridge->restore(o.result);
      bridge->handed_on(o.result.refs);
      answered.result = std::move(o.result);
      answered.error = std::move(o.error);
      answered.start_us = start_us;
      answered.end_us = o.end_us;
      answer(*inst, host, calls[i], std::move(answered), i + 1 == n);
    }
    send_answers(*inst);
    // Before the batch's end: a call that woke meanwhile finds it waiting.
    if (!waiting.calls.empty())
      caf::anon_send(host, std::move(waiting));
    caf::anon_send(host, ran_atom::value, group);
  };
  // A link that ended says so: the host ends then, and the calls' callers
  // learn of it from the control store.
  remote.link->run(std::move(batch), std::move(done));
}

/// How long an ending host waits for the control store to take its end.
constexpr auto end_report_timeout = std::chrono::seconds{5};

/// Fails `call` with `code` and `message`, unrun.
void fail_call(host_actor* self, const protocol::actor_task& call, errc code,
               std::string message) {
  auto& st = self->state;
  protocol::actor_task_done done;
  done.actor = st.actor;
  done.task = call.task;
  done.incarnation = st.incarnation;
  done.error.code = code;
  done.error.message = std::move(message);
  self->send(call.reply_to, std::move(done));
}

/// Answers `call` that its actor is dead.
void refuse_call(host_actor* self, const protocol::actor_task& call) {
  auto& st = self->state;
  fail_call(self, call, errc::actor_died,
            "actor " + st.actor.hex() + " is dead: " + st.end_cause);
}

void end_instance(host_actor* self, internal::death_kind kind,
                  const std::string& cause) {
  auto& st = self->state;
  st.ending = true;
  st.end_cause = cause;
  for (std::size_t i = 0; i < st.num_groups(); ++i) {
    auto& g = st.group(i);
    for (auto& call : g.queue)
      refuse_call(self, call);
    g.queue.clear();
    g.resumptions.clear();
  }
  // Asynchronous calls that wait never go on: their callers learn of the
  // actor's end from the control store. Their coroutines go with them,
  // here or once what they wait for lets go of them.
  std::unordered_map<task_id, std::shared_ptr<async_call_state>> waiting;
  std::vector<std::shared_ptr<async_call_state>> ready;
  std::map<std::int64_t, std::vector<instance_state::sleeper>> sleepers;
  if (auto* a = st.inst->async_if_made()) {
    std::lock_guard<std::mutex> guard{a->mu};
    waiting.swap(a->calls);
    ready.swap(a->ready);
    sleepers.swap(a->sleepers);
  }
  // The host ends once the control store has the end: a worker process
  // exits with its last host, and its node would report the instance lost
  // (a crash, which restarts it) if the end were still on its way.
  self->request(st.gcs(), end_report_timeout,
                protocol::actor_ended{st.actor, st.incarnation, kind, cause})
      .then([self] { self->quit(caf::exit_reason::normal); },
            [self](caf::error&) { self->quit(caf::exit_reason::normal); });
}

/// Takes the next batch of a group's calls from the front of `calls`: up
/// to `max_batch` while the group runs one call at a time (`limit`), else
/// one.
template <class Call>
std::vector<Call> take_batch(std::list<Call>& calls, std::int32_t limit) {
  std::vector<Call> batch;
  auto n = limit == 1 ? std::min(max_batch, calls.size()) : 1;
  batch.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    batch.push_back(std::move(calls.front()));
    calls.pop_front();
  }
  return batch;
}

/// Hands the woken calls of group `index` and then its queued ones to the
/// instance's process, up to the group's concurrency.
void run_group_in_process(host_actor* self, std::size_t index) {
  auto& st = self->state;
  auto& g = st.group(index);
  auto group = static_cast<std::int32_t>(index);
  auto& woken = st.remote->woken[index];
  while (g.running < g.limit && !woken.empty()) {
    std::vector<protocol::actor_task> calls;
    std::vector<std::int64_t> starts;
    for (auto task : take_batch(woken, g.limit)) {
      auto w = st.remote->waiting.find(task);
      if (w == st.remote->waiting.end())
        continue;
      calls.push_back(std::move(w->second.call));
      starts.push_back(w->second.start_us);
      st.remote->waiting.erase(w);
    }
    if (calls.empty())
      continue;
    ++g.running;
    run_in_process(self, group, std::move(calls), true, std::move(starts));
  }
  while (g.running < g.limit && !g.queue.empty()) {
    ++g.running;
    run_in_process(self, group, take_batch(g.queue, g.limit), false);
  }
}

// Calls of the instance's process wait: each goes on once it wakes.
void on_calls_wait(host_actor* self, calls_wait& msg) {
  auto& st = self->state;
  if (!st.remote || st.ending)
    return;
  auto& remote = *st.remote;
  for (auto& w : msg.calls) {
    auto task = w.call.task;
    remote.waiting.emplace(task, std::move(w));
    if (auto early =
            std::find(remote.woke_early.begin(), remote.woke_early.end(), task);
        early != remote.woke_early.end()) {
      remote.woke_early.erase(early);
      remote.woken[msg.group].push_back(task);
    }
  }
}

// Hands group `index`'s queued calls to the pool, up to the group's
// concurrency: in batches when it runs one call at a time.
void run_group(host_actor* self, std::size_t index) {
  auto& st = self->state;
  if (st.remote) {
    run_group_in_process(self, index);
    return;
  }
  auto& g = st.group(index);
  auto me = caf::actor_cast<caf::actor>(self);
  auto group = static_cast<std::int32_t>(index);
  // Calls that began go on first, in batches too.
  while (g.running < g.limit && !g.resumptions.empty()) {
    auto calls = take_batch(g.resumptions, g.limit);
    ++g.running;
    st.pool->submit([inst = st.inst, me, group, calls = std::move(calls)] {
      with_actor_context(*inst, [&] {
        for (auto& call : calls) {
          // The actor ended, or is about to: the host ends it once it hears
          // this batch ran.
          if (inst->ended.load(std::memory_order_relaxed) ||
              inst->exit_requested.load())
            break;
          call->resume(&call == &calls.back());
        }
      });
      send_answers(*inst);
      caf::anon_send(me, ran_atom::value, group);
    });
  }
  while (g.running < g.limit && !g.queue.empty()) {
    auto batch = std::make_shared<std::vector<protocol::actor_task>>(
        take_batch(g.queue, g.limit));
    ++g.running;
    {
      std::lock_guard<std::mutex> guard{st.inst->cancel_mu};
      st.inst->handed.push_back(batch);
    }
    st.pool->submit([inst = st.inst, actor = st.actor, inc = st.incarnation, me,
                     group, batch = std::move(batch)] {
      run_calls(inst, me, actor, inc, static_cast<std::size_t>(group), batch);
      caf::anon_send(me, ran_atom::value, group);
    });
  }
}

void run_queued(host_actor* self) {
  auto& st = self->state;
  if (!st.ready || st.ending)
    return;
  for (std::size_t i = 0; i < st.num_groups(); ++i)
    run_group(self, i);
}

// Tells the control store that the instance runs, through its process's
// reporter if it has one, else past the endpoint's hop (it reports again on
// `gcs_restarted`).
void report_started(host_actor* self) {
  auto& st = self->state;
  auto reporter = caf::actor_cast<caf::actor>(st.reporter);
  self->send(reporter ? reporter : attached_gcs(st.gcs()),
             protocol::actor_started{
                 st.actor, st.incarnation, caf::actor_cast<caf::actor>(self),
                 st.node(), own_contact(self->system()),
                 st.remote ? st.remote->link->pid()
                           : static_cast<std::int32_t>(::getpid())});
}

/// The group of `name`, or none.
std::optional<std::size_t> group_named(const host_state& st,
                                       const std::string& name) {
  if (st.named)
    for (std::size_t i = 0; i < st.named->groups.size(); ++i)
      if (st.named->groups[i].first == name)
        return i + 1;
  return std::nullopt;
}

/// The group `call` runs in: the one its caller chose, else the one its
/// method is bound to (the default group if the actor has no such group),
/// else the default one. None if the caller chose a group the actor lacks.
std::optional<std::size_t> group_of(host_state& st,
                                    const protocol::actor_task& call) {
  if (!call.group.empty())
    return group_named(st, call.group);
  if (!st.named)
    return 0;
  auto& of_method = st.named->of_method;
  auto i = of_method.find(call.method);
  if (i == of_method.end()) {
    auto bound = detail::function_registry::instance().group_of(call.method);
    auto index = bound.empty() ? 0 : group_named(st, bound).value_or(0);
    i = of_method.emplace(call.method, index).first;
  }
  return i->second;
}

// Asynchronous calls may go on: each waits in its group for a thread.
void run_ready_calls(host_actor* self) {
  auto& st = self->state;
  std::vector<std::shared_ptr<async_call_state>> ready;
  if (auto* a = st.inst->async_if_made()) {
    std::lock_guard<std::mutex> guard{a->mu};
    ready.swap(a->ready);
    a->wake_sent = false;
  }
  if (st.ending)
    return;
  std::vector<bool> touched(st.num_groups(), false);
  for (auto& call : ready) {
    auto index = call->group();
    st.group(index).resumptions.push_back(std::move(call));
    touched[index] = true;
  }
  if (!st.ready)
    return;
  for (std::size_t i = 0; i < touched.size(); ++i)
    if (touched[i])
      run_group(self, i);
}

// The sleeps of asynchronous calls that end in millisecond `key` are over.
void sleep_ended(host_actor* self, std::int64_t key) {
  auto* a = self->state.inst->async_if_made();
  if (a == nullptr)
    return;
  std::vector<instance_state::sleeper> sleepers;
  {
    std::lock_guard<std::mutex> guard{a->mu};
    auto i = a->sleepers.find(key);
    if (i == a->sleepers.end())
      return;
    sleepers.swap(i->second);
    a->sleepers.erase(i);
  }
  for (auto& [call, epoch] : sleepers)
    call->wake(epoch);
}

// A caller cancelled its call `task`: one queued here is answered at once;
// one handed to a thread is stopped (running) or skipped (not begun).
void on_cancel(host_actor* self, const task_id& task) {
  auto& st = self->state;
  for (std::size_t i = 0; i < st.num_groups(); ++i) {
    auto& queue = st.group(i).queue;
    auto call = std::find_if(queue.begin(), queue.end(),
                             [&](const auto& c) { return c.task == task; });
    if (call != queue.end()) {
      fail_call(self, *call, errc::task_cancelled,
                "the actor call was cancelled before it began");
      queue.erase(call);
      return;
    }
  }
  // Its process runs it, or has it to run.
  if (st.remote) {
    st.remote->link->cancel(task);
    st.remote->bridge->cancel(task);
    return;
  }
  auto& inst = *st.inst;
  bool running = false;
  {
    // One lock with `slot_scope::begin`: a call not begun now never does;
    // and with `call_async_host::begin_async`.
    std::lock_guard<std::mutex> guard{inst.cancel_mu};
    // An asynchronous call that began: its wait wakes and throws.
    std::shared_ptr<async_call_state> async;
    if (auto* a = inst.async_if_made()) {
      std::lock_guard<std::mutex> async_guard{a->mu};
      if (auto i = a->calls.find(task); i != a->calls.end())
        async = i->second;
    }
    if (async) {
      async->cancel();
      running = true;
    }
    for (auto* slot : inst.slots) {
      if (slot->task == task) {
        slot->cancelled.store(true, std::memory_order_release);
        running = true;
      }
    }
    // One a thread has yet to begin, or one that ended in a batch that
    // has not: it goes when its batch ends. A call in no such batch had
    // ended.
    if (!running && in_live_batch(inst, task) &&
        std::find(inst.cancelled.begin(), inst.cancelled.end(), task) ==
            inst.cancelled.end())
      inst.cancelled.push_back(task);
  }
  // A `get` it waits in throws.
  if (auto* client = inst.runtime.made(); running && client != nullptr)
    client->store()->wake_stopped();
}

void on_call(host_actor* self, protocol::actor_task& call) {
  auto& st = self->state;
  if (st.ending) {
    refuse_call(self, call);
    return;
  }
  auto index = group_of(st, call);
  if (!index) {
    fail_call(self, call, errc::invalid_argument,
              "actor " + st.actor.hex() + " has no concurrency group '" +
                  call.group + "'");
    return;
  }
  st.group(*index).queue.push_back(std::move(call));
  if (st.ready)
    run_group(self, *index);
}

// A new control store learns from this that the instance runs; one still
// constructing reports when it is done, as always.
void on_gcs_restarted(host_actor* self) {
  auto& st = self->state;
  if (st.ready && !st.ending)
    report_started(self);
}

// A batch of calls of group `group` (or the constructor) ran on the pool.
void on_ran(host_actor* self, std::int32_t group) {
  auto& st = self->state;
  auto index = static_cast<std::size_t>(group);
  --st.group(index).running;
  if (st.ending)
    return;
  bool constructed = !st.ready;
  if (constructed) {
    if (!st.inst->failure.empty()) {
      end_instance(self, internal::death_kind::constructor_failed,
                   st.inst->failure);
      return;
    }
    st.ready = true;
    report_started(self);
  }
  if (st.inst->exit_requested.load()) {
    end_instance(self, internal::death_kind::exited,
                 "the actor exited by calling exit_actor");
    return;
  }
  // Calls that came while it was constructed wait in every group.
  if (constructed)
    run_queued(self);
  else
    run_group(self, index);
}

// An asynchronous call that waits in the instance's process may go on: it
// does in its group, before the calls that have not begun.
void on_woke(host_actor* self, const task_id& task) {
  auto& st = self->state;
  if (!st.remote || st.ending)
    return;
  auto& remote = *st.remote;
  auto w = remote.waiting.find(task);
  if (w == remote.waiting.end()) {
    // Its batch's answer, which says it waits, is on its way.
    remote.woke_early.push_back(task);
    return;
  }
  auto index = w->second.group;
  remote.woken[index].push_back(task);
  if (st.ready)
    run_group(self, index);
}

// The time the instance process had to connect is up.
void on_connect_time_up(host_actor* self) {
  auto& st = self->state;
  if (st.remote && st.remote->link->pid() == 0)
    lose_instance(self, "its process did not connect within " +
                            std::to_string(instance_start_timeout.count()) +
                            " s");
}

// The calls taken in and not handed to a thread yet, in every group.
std::uint64_t queue_length(host_actor* self) {
  auto& st = self->state;
  std::uint64_t n = 0;
  for (std::size_t i = 0; i < st.num_groups(); ++i)
    n += st.group(i).queue.size();
  return n;
}

/// The host's messages other than calls, which its default handler takes:
/// its behavior keeps the one case of calls. A CAF behavior takes some 48
/// bytes of each actor for each case: 96 for one, 384 for the eight the
/// host takes. A message the behavior does not take costs a test of its
/// type more. Others are logged and dropped, as by every actor.
caf::result<caf::message> other_messages(caf::scheduled_actor* me,
                                         caf::message_view& view) {
  auto* self = static_cast<host_actor*>(me);
  auto& x = view.content();
  if (x.match_elements<ran_atom, std::int32_t>())
    on_ran(self, x.get_as<std::int32_t>(1));
  else if (x.match_elements<flush_atom>())
    send_answers(*self->state.inst);
  else if (x.match_elements<protocol::queue_length_atom>())
    return caf::make_message(queue_length(self));
  else if (x.match_elements<protocol::cancel_call>())
    on_cancel(self, x.get_as<protocol::cancel_call>(0).task);
  else if (x.match_elements<go_on_atom>())
    run_ready_calls(self);
  else if (x.match_elements<slept_atom, std::int64_t>())
    sleep_ended(self, x.get_as<std::int64_t>(1));
  else if (x.match_elements<protocol::gcs_restarted>())
    on_gcs_restarted(self);
  else if (x.match_elements<lost_atom>())
    // Its node says how the process ended, soon.
    self->delayed_send(self, instance_exit_wait, lost_atom::value,
                       std::string{"its process ended"});
  else if (x.match_elements<lost_atom, std::string>())
    lose_instance(self, x.get_as<std::string>(1));
  else if (x.match_elements<protocol::instance_process_exited>())
    lose_instance(
        self,
        "its process (pid " +
            std::to_string(x.get_as<protocol::instance_process_exited>(0).pid) +
            ") " + x.get_as<protocol::instance_process_exited>(0).how);
  else if (x.match_elements<connect_atom>())
    on_connect_time_up(self);
  else if (x.match_elements<calls_wait>())
    on_calls_wait(self, x.get_mutable_as<calls_wait>(0));
  else if (x.match_elements<woke_atom, task_id>())
    on_woke(self, x.get_as<task_id>(1));
  else if (x.match_elements<bool>())
    ; // the node took the instance's metrics
  else if (x.match_elements<instance_wire::metrics>())
    self->send(
        self->state.inst->runtime.settings().raylet,
        protocol::user_metrics{
            self->state.inst->runtime.self(),
            std::move(x.get_mutable_as<instance_wire::metrics>(0).series)});
  else
    return drop_unexpected(me, view, *host_logger());
  return caf::message{};
}

caf::behavior host_behavior(host_actor* self, actor_host_config cfg) {
  auto& st = self->state;
  st.actor = cfg.spec.id;
  st.incarnation = cfg.incarnation;
  st.reporter = cfg.reporter;
  st.pool = cfg.pool;
  install_default_handlers(self, &host_logger);
  self->set_default_handler(other_messages);
  st.inst = std::make_shared<instance_state>();
  st.inst->source = actor_class_of(cfg.spec.factory);
  st.inst->ctx.actor = cfg.spec.id;
  st.inst->ctx.num_restarts = cfg.incarnation;
  st.default_group.limit = cfg.spec.max_concurrency;
  if (!cfg.spec.concurrency_groups.empty()) {
    st.named = std::make_unique<named_groups>();
    for (const auto& g : cfg.spec.concurrency_groups)
      st.named->groups.emplace_back(g.name, call_group{g.size, 0, {}, {}});
  }
  auto self_id = worker_id{unique_id::random()};
  st.inst->runtime.prepare(self->system(), std::move(cfg.client), self_id,
                           cfg.spec.job);
  self->attach_functor([inst = st.inst] {
    inst->ended = true;
    send_answers(*inst);
    inst->runtime.settings().directory->remove(inst->runtime.self());
    auto* client = inst->runtime.made();
    if (client == nullptr)
      return; // it owns nothing
    detail::error_info err;
    err.code = errc::actor_died;
    err.message = "the actor owning this object ended";
    client->fail_all(err);
    // The actor's owner shares its fate: what it owns is lost with it.
    client->stop_owner();
  });
  if (cfg.instance_process) {
    // The instance's process ends with its host.
    construct_in_process(self, cfg);
    if (st.remote)
      self->attach_functor([link = st.remote->link] { link->close(); });
  } else {
    construct(self, cfg);
  }
  return {
      [self](protocol::actor_task& call) { on_call(self, call); },
  };
}

} // namespace

actor_client_settings::actor_client_settings(
    const node_id& node, caf::actor raylet, caf::actor gcs,
    std::shared_ptr<owner_directory> directory, std::size_t max_inline_bytes) {
  common_.node = node;
  common_.raylet = std::move(raylet);
  common_.gcs = std::move(gcs);
  common_.directory = std::move(directory);
  common_.max_inline_bytes = max_inline_bytes;
}

std::shared_ptr<const owner_client::config>
actor_client_settings::of(const std::string& ns) {
  if (auto i = by_ns_.find(ns); i != by_ns_.end())
    if (auto made = i->second.lock())
      return made;
  // The namespaces no actor is in any more go first.
  std::erase_if(by_ns_, [](const auto& e) { return e.second.expired(); });
  auto made = std::make_shared<owner_client::config>(common_);
  made->ns = ns;
  by_ns_[ns] = made;
  return made;
}

caf::actor spawn_actor_host(caf::actor_system& sys, actor_host_config cfg) {
  return sys.spawn(host_behavior, std::move(cfg));
}

} // namespace prism::actors
