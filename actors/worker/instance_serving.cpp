#include "worker/instance_serving.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <coroutine>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/log.hpp"
#include "common/output_source.hpp"
#include "common/processes.hpp"
#include "common/user_errors.hpp"
#include "prism/detail/async.hpp"
#include "prism/detail/function_registry.hpp"
#include "prism/internal/object_arena.hpp"
#include "prism/internal/task_events.hpp"
#include "prism/internal/user_metrics.hpp"
#include "worker/instance_wire.hpp"

namespace prism::actors {

namespace {

/// The code the process exits with when it cannot reach its host or its
/// host speaks nonsense.
constexpr int cannot_serve = 70;

[[noreturn]] void fail(const std::string& why) {
  component_logger("worker")->error("prism instance process (pid {}): {}",
                                    static_cast<int>(::getpid()), why);
  exit_now(cannot_serve);
}

/// The threads of an instance process, as leader and followers: one thread
/// at a time reads the host's socket (the leader). A leader that reads a
/// batch of calls (or the constructor) makes another thread the leader and
/// runs the batch itself: the calls begin without waking another thread
/// first. Once done, it waits until it leads again. There are as many
/// threads as batches run at once (the host hands out no more than the
/// actor's concurrency allows), plus the leader.
class leadership {
public:
  /// Waits until the calling thread leads.
  void lead() {
    std::unique_lock<std::mutex> guard{mu_};
    ++waiting_;
    cv_.wait(guard, [this] { return !led_; });
    --waiting_;
    led_ = true;
  }

  /// The calling thread, which leads, goes to run a batch: another leads,
  /// a waiting one or a new one running `serve`.
  void hand_over(const std::function<void()>& serve) {
    std::unique_lock<std::mutex> guard{mu_};
    led_ = false;
    if (waiting_ > 0) {
      guard.unlock();
      cv_.notify_one();
      return;
    }
    guard.unlock();
    std::thread{serve}.detach();
  }

private:
  std::mutex mu_;
  std::condition_variable cv_;
  /// A thread leads.
  bool led_ = false;
  std::size_t waiting_ = 0;
};

struct instance_process;

/// The call of the instance the calling thread runs; none outside of one.
thread_local task_id current_call;

/// What Prism's API finds in an instance process: each call goes to the
/// host, whose runtime for the instance makes it (worker/instance_bridge.hpp),
/// and the calling thread waits for the answer.
class instance_runtime final : public detail::runtime {
public:
  explicit instance_runtime(instance_process& p) : p_(p) {}

  /// The answer of call `id` came (the reading thread).
  void answered(instance_wire::runtime_answer a) {
    std::function<void()> callback;
    {
      std::lock_guard<std::mutex> guard{mu_};
      if (auto c = callbacks_.find(a.id); c != callbacks_.end()) {
        callback = std::move(c->second);
        callbacks_.erase(c);
      } else if (auto w = waiting_.find(a.id); w != waiting_.end()) {
        w->second = std::move(a);
      } else {
        return;
      }
    }
    if (callback)
      callback();
    else
      cv_.notify_all();
  }

  /// Calls `callback` on the reading thread once the object of `ref` is
  /// ready (or failed); nothing waits meanwhile.
  void when_ready(const detail::ref_token& ref,
                  std::function<void()> callback) {
    auto c = make(instance_wire::op::when_ready);
    c.refs.push_back(named(ref));
    {
      std::lock_guard<std::mutex> guard{mu_};
      c.id = ++next_id_;
      callbacks_.emplace(c.id, std::move(callback));
    }
    tell(c);
  }

  /// What the instance is, from its host.
  void set_identity(worker_id self, node_id node, job_id job) {
    self_ = self;
    node_ = node;
    job_ = job;
  }

  detail::ref_ptr submit_task(const std::string& function,
                              std::vector<detail::task_arg> args,
                              const detail::task_options& opts) override {
    auto c = make(instance_wire::op::submit_task);
    c.name = function;
    c.args = std::move(args);
    c.task_options = opts;
    return ref_of(call(std::move(c)));
  }
  detail::ref_ptr put(detail::value v) override {
    auto c = make(instance_wire::op::put);
    c.value = std::move(v);
    return ref_of(call(std::move(c)));
  }
  detail::value get(const detail::ref_token& ref,
                    detail::wait_duration timeout) override {
    auto c = make(instance_wire::op::get);
    c.refs.push_back(named(ref));
    c.timeout_ms = timeout.count();
    auto a = call(std::move(c));
    if (a.bytes.handle != 0)
      read_in_place(a);
    return std::move(a.value);
  }
  std::vector<bool> wait(const std::vector<const detail::ref_token*>& refs,
                         std::size_t num_returns,
                         detail::wait_duration timeout) override {
    auto c = make(instance_wire::op::wait);
    for (auto* r : refs)
      c.refs.push_back(named(*r));
    c.number = num_returns;
    c.timeout_ms = timeout.count();
    auto a = call(std::move(c));
    return std::vector<bool>(a.ready.begin(), a.ready.end());
  }
  actor_id create_actor(const std::string& factory, std::uint64_t class_tag,
                        std::vector<detail::task_arg> args,
                        const detail::actor_options& opts) override {
    auto c = make(instance_wire::op::create_actor);
    c.name = factory;
    c.number = class_tag;
    c.args = std::move(args);
    c.actor_options = opts;
    return call(std::move(c)).actor;
  }
  detail::ref_ptr submit_actor_task(const actor_id& actor,
                                    const std::string& method,
                                    std::vector<detail::task_arg> args,
                                    const detail::call_options& opts) override {
    auto c = make(instance_wire::op::submit_actor_task);
    c.actor = actor;
    c.name = method;
    c.args = std::move(args);
    c.call_options = opts;
    return ref_of(call(std::move(c)));
  }
  std::optional<actor_id> find_actor(const std::string& name,
                                     const std::string* ns,
                                     std::uint64_t class_tag) override {
    auto c = make(instance_wire::op::find_actor);
    c.name = name;
    c.flag = ns != nullptr;
    if (ns != nullptr)
      c.key = *ns;
    c.number = class_tag;
    auto a = call(std::move(c));
    if (!a.found)
      return std::nullopt;
    return a.actor;
  }
  void cancel(const detail::ref_token& ref, bool force,
              bool recursive) override {
    auto c = make(instance_wire::op::cancel);
    c.refs.push_back(named(ref));
    c.flag = force;
    c.flag2 = recursive;
    call(std::move(c));
  }
  void kill_actor(const actor_id& actor, bool no_restart) override {
    auto c = make(instance_wire::op::kill_actor);
    c.actor = actor;
    c.flag = no_restart;
    call(std::move(c));
  }
  bool kv_put(const std::string& ns, const std::string& key,
              const std::string& value, bool overwrite) override {
    auto c = make(instance_wire::op::kv_put);
    c.name = ns;
    c.key = key;
    c.text = value;
    c.flag = overwrite;
    return call(std::move(c)).found;
  }
  std::optional<std::string> kv_get(const std::string& ns,
                                    const std::string& key) override {
    auto c = make(instance_wire::op::kv_get);
    c.name = ns;
    c.key = key;
    auto a = call(std::move(c));
    if (!a.found)
      return std::nullopt;
    return std::move(a.text);
  }
  bool kv_del(const std::string& ns, const std::string& key) override {
    auto c = make(instance_wire::op::kv_del);
    c.name = ns;
    c.key = key;
    return call(std::move(c)).found;
  }
  std::vector<std::string> kv_keys(const std::string& ns,
                                   const std::string& prefix) override {
    auto c = make(instance_wire::op::kv_keys);
    c.name = ns;
    c.key = prefix;
    return std::move(call(std::move(c)).keys);
  }
  state::page list_state(state::kind k,
                         const state::list_options& options) override {
    auto c = make(instance_wire::op::list_state);
    c.number = static_cast<std::uint64_t>(k);
    c.list_options = options;
    return std::move(call(std::move(c)).page);
  }
  std::optional<state::entry> get_state(state::kind k,
                                        const std::string& id) override {
    auto c = make(instance_wire::op::get_state);
    c.number = static_cast<std::uint64_t>(k);
    c.name = id;
    auto a = call(std::move(c));
    if (!a.found)
      return std::nullopt;
    return std::move(a.entry);
  }
  std::vector<state::count>
  summarize_state(state::kind k, const std::string& group_key) override {
    auto c = make(instance_wire::op::summarize_state);
    c.number = static_cast<std::uint64_t>(k);
    c.key = group_key;
    return std::move(call(std::move(c)).counts);
  }
  detail::ref_ptr borrow(const object_id& id, const worker_id& owner,
                         const detail::owner_address& address) override {
    auto c = make(instance_wire::op::borrow);
    c.refs.push_back({id, owner, address});
    return ref_of(call(std::move(c)));
  }
  void hold(const object_id& id, const worker_id& owner,
            const detail::owner_address& address) override {
    // In order with what the process sends after: the host takes it before
    // it reads on.
    auto c = make(instance_wire::op::hold);
    c.refs.push_back({id, owner, address});
    tell(c);
  }
  void release(const object_id& id) override {
    auto c = make(instance_wire::op::release);
    c.refs.push_back({id, {}, {}});
    tell(c);
  }
  job_id current_job() const override {
    return job_;
  }
  worker_id self() const override {
    return self_;
  }
  node_id node() const override {
    return node_;
  }
  task_id current_task() const override {
    return current_call;
  }
  std::int32_t current_attempt() const override {
    return 0;
  }

private:
  static instance_wire::runtime_call make(instance_wire::op what) {
    instance_wire::runtime_call c;
    c.what = what;
    c.task = current_call;
    return c;
  }

  static detail::contained_ref named(const detail::ref_token& ref) {
    return {ref.id(), ref.owner(), ref.address()};
  }

  /// A ref of this process for the one the answer names.
  detail::ref_ptr ref_of(const instance_wire::runtime_answer& a) {
    if (a.refs.empty())
      throw error(errc::internal, "the host made no ref for the call");
    auto& r = a.refs.front();
    return std::make_shared<detail::ref_token>(r.id, r.owner, r.address,
                                               weak_from_this());
  }

  /// Sends `c`, answered by nothing.
  void tell(const instance_wire::runtime_call& c);

  /// The bytes of `a.value` are where `a.bytes` says in the node's store:
  /// read there, and let go of by the host once this process drops them.
  void read_in_place(instance_wire::runtime_answer& a) {
    auto& where = a.bytes;
    std::shared_ptr<const internal::arena_view> view;
    {
      std::lock_guard<std::mutex> guard{mu_};
      if (!arena_ || arena_->mark() != where.mark) {
        std::string why;
        arena_ = internal::arena_view::open(where.path, where.capacity,
                                            where.mark, why);
        if (!arena_) {
          release_value(where.handle);
          throw error(errc::internal, "the actor's process cannot read the "
                                      "node's object store: " +
                                          why);
        }
      }
      view = arena_;
    }
    const char* at = view->at(where.offset, where.size);
    if (at == nullptr) {
      release_value(where.handle);
      throw error(errc::internal, "the node's object store has no such bytes");
    }
    struct pinned {
      std::shared_ptr<const internal::arena_view> view;
      std::weak_ptr<runtime> rt;
      std::uint64_t handle;
      ~pinned() {
        if (auto r = rt.lock())
          static_cast<instance_runtime&>(*r).release_value(handle);
      }
    };
    auto keeper = std::make_shared<pinned>(
        pinned{std::move(view), weak_from_this(), where.handle});
    a.value.bytes = detail::shared_bytes{std::move(keeper), at, where.size};
  }

  void release_value(std::uint64_t handle) {
    auto c = make(instance_wire::op::release_value);
    c.number = handle;
    tell(c);
  }

  /// Sends `c` and waits for its answer; throws what the call threw.
  instance_wire::runtime_answer call(instance_wire::runtime_call c);

  instance_process& p_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::uint64_t next_id_ = 0; // guarded by mu_
  /// The answers of the calls that wait, none until each comes.
  std::map<std::uint64_t, std::optional<instance_wire::runtime_answer>>
      waiting_; // guarded by mu_
  /// What to call once the answer of each `when_ready` comes.
  std::map<std::uint64_t, std::function<void()>> callbacks_; // guarded by mu_
  /// The node's store, mapped once a value was read there.
  std::shared_ptr<const internal::arena_view> arena_; // guarded by mu_
  worker_id self_;
  node_id node_;
  job_id job_;
};

/// A batch that a runner takes or runs: its calls, the one it runs, and
/// that call's cancellation flag.
struct batch_slot {
  const std::vector<instance_wire::call>* calls = nullptr;
  task_id task;
  std::atomic<bool> cancelled{false};
};

/// Runs jobs after their delays, on a thread of its own, started with the
/// first (asynchronous methods that sleep).
class timer {
public:
  void after(std::chrono::nanoseconds delay, std::function<void()> job) {
    auto due = std::chrono::steady_clock::now() + delay;
    std::lock_guard<std::mutex> guard{mu_};
    if (!started_) {
      started_ = true;
      std::thread{[this] { run(); }}.detach();
    }
    jobs_.emplace(due, std::move(job));
    cv_.notify_one();
  }

private:
  void run() {
    std::unique_lock<std::mutex> guard{mu_};
    for (;;) {
      if (jobs_.empty()) {
        cv_.wait(guard);
        continue;
      }
      auto due = jobs_.begin()->first;
      if (std::chrono::steady_clock::now() < due) {
        cv_.wait_until(guard, due);
        continue;
      }
      auto job = std::move(jobs_.begin()->second);
      jobs_.erase(jobs_.begin());
      guard.unlock();
      job();
      guard.lock();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::multimap<std::chrono::steady_clock::time_point, std::function<void()>>
      jobs_;
  bool started_ = false;
};

class async_call_state;

/// The process's state: its socket, its instance, and its calls.
struct instance_process {
  int fd = -1;
  /// Serializes whole frames on the socket.
  std::mutex write_mu;
  leadership threads;
  std::shared_ptr<instance_runtime> rt =
      std::make_shared<instance_runtime>(*this);
  std::shared_ptr<void> instance;
  detail::actor_context ctx;
  std::string source;
  std::atomic<bool> exit_requested{false};
  /// The host asked for the instance.
  std::atomic<bool> constructing{false};
  std::mutex cancel_mu;
  std::vector<batch_slot*> slots; // guarded by cancel_mu
  /// Calls of the slots' batches cancelled before they began.
  std::vector<task_id> cancelled; // guarded by cancel_mu
  /// Asynchronous calls that have not ended, by task.
  std::unordered_map<task_id, std::shared_ptr<async_call_state>>
      async_calls; // guarded by cancel_mu
  timer sleeps;
  /// Its user metrics are shipped again within `metrics_interval`.
  std::atomic<bool> shipping{false};

  void send(const std::vector<char>& bytes) {
    std::lock_guard<std::mutex> guard{write_mu};
    // A host that is gone ends this process when its socket's end is read.
    instance_wire::write_frame(fd, bytes);
  }
};

/// Fills `out` with what the method threw. Call it in a `catch (...)`.
void method_threw(instance_process& p, instance_wire::outcome& out,
                  const std::string& method) {
  try {
    throw;
  } catch (const detail::actor_exit_signal&) {
    p.exit_requested = true;
    out.error.code = errc::actor_died;
    out.error.message = "the actor exited (exit_actor)";
  } catch (...) {
    out.error = error_of_current_exception(method);
  }
}

/// One call of an asynchronous method (prism/detail/async.hpp), which owns
/// its coroutine while it waits. What wakes it tells the host, which
/// resumes it in its concurrency group (`instance_wire::run::resume`).
class async_call_state final
    : public detail::async_call,
      public std::enable_shared_from_this<async_call_state> {
public:
  async_call_state(instance_process& p, task_id task, std::string method)
      : p_(p), task_(task), method_(std::move(method)) {}

  ~async_call_state() override {
    if (frame_)
      frame_.destroy();
  }

  void attach(std::coroutine_handle<> frame) override {
    frame_ = frame;
  }

  void resume_when_ready(const detail::ref_token& ref) override {
    auto epoch = suspend();
    p_.rt->when_ready(ref, [weak = weak_from_this(), epoch] {
      if (auto self = weak.lock())
        self->wake(epoch);
    });
  }

  void resume_after(std::chrono::nanoseconds delay) override {
    auto epoch = suspend();
    delay = std::min<std::chrono::nanoseconds>(delay, std::chrono::hours{8760});
    p_.sleeps.after(delay, [weak = weak_from_this(), epoch] {
      if (auto self = weak.lock())
        self->wake(epoch);
    });
  }

  bool cancelled() const noexcept override {
    return cancelled_.load();
  }

  void finish(detail::value result, std::exception_ptr error) override {
    frame_ = nullptr; // the coroutine ends itself right after
    instance_wire::outcome out;
    out.task = task_;
    if (error) {
      try {
        std::rethrow_exception(error);
      } catch (...) {
        method_threw(p_, out, method_);
      }
    } else {
      out.result = std::move(result);
      out.ok = true;
    }
    finished_ = std::move(out);
  }

  /// Runs the coroutine on from where it waited.
  void resume() {
    detail::set_current_cancel_flag(&cancelled_);
    frame_.resume();
    detail::set_current_cancel_flag(nullptr);
  }

  /// The caller cancelled the call: it wakes, and its wait throws.
  void cancel() {
    cancelled_.store(true);
    wake(suspended_.load());
  }

  /// How the call ended, once it did.
  std::optional<instance_wire::outcome>& finished() noexcept {
    return finished_;
  }

private:
  std::uint64_t suspend() {
    auto epoch = ++epochs_;
    suspended_.store(epoch);
    if (cancelled())
      wake(epoch);
    return epoch;
  }

  /// What ends suspension `epoch` (the first to come): the host hears.
  void wake(std::uint64_t epoch) {
    if (epoch == 0 || !suspended_.compare_exchange_strong(epoch, 0))
      return;
    p_.send(instance_wire::encode(instance_wire::kind::wake,
                                  instance_wire::wake{task_}));
  }

  instance_process& p_;
  task_id task_;
  std::string method_;
  std::coroutine_handle<> frame_;
  std::atomic<bool> cancelled_{false};
  std::atomic<std::uint64_t> suspended_{0};
  std::uint64_t epochs_ = 0;
  std::optional<instance_wire::outcome> finished_;
};

/// What an asynchronous method finds while its process runs it.
class call_async_host final : public detail::async_host {
public:
  call_async_host(instance_process& p, const instance_wire::call& call)
      : p_(p), call_(call) {}

  detail::async_call* begin_async() override {
    state_ = std::make_shared<async_call_state>(p_, call_.task, call_.method);
    std::lock_guard<std::mutex> guard{p_.cancel_mu};
    p_.async_calls.emplace(call_.task, state_);
    return state_.get();
  }

  const std::shared_ptr<async_call_state>& state() const noexcept {
    return state_;
  }

private:
  instance_process& p_;
  const instance_wire::call& call_;
  std::shared_ptr<async_call_state> state_;
};

/// `out` becomes how asynchronous call `state` went: it ended, or it waits.
void settle(instance_process& p, const std::shared_ptr<async_call_state>& state,
            instance_wire::outcome& out) {
  if (!state->finished()) {
    out.waits = true;
    return;
  }
  auto start_us = out.start_us;
  out = std::move(*state->finished());
  out.start_us = start_us;
  std::lock_guard<std::mutex> guard{p.cancel_mu};
  p.async_calls.erase(out.task);
}

void ship_metrics_again(instance_process& p);

/// How often an instance process ships its user metrics while they change
/// (as a worker process's shipper does).
constexpr auto metrics_interval = std::chrono::seconds{1};

/// Ships the user metrics that changed to the host, which ships them to the
/// node; after the first that did, every second too.
void ship_metrics(instance_process& p) {
  auto changed = internal::user_metric_registry::global().take_changed();
  if (changed.empty())
    return;
  p.send(instance_wire::encode(instance_wire::kind::metrics,
                               instance_wire::metrics{std::move(changed)}));
  if (!p.shipping.exchange(true))
    p.sleeps.after(metrics_interval, [&p] { ship_metrics_again(p); });
}

void ship_metrics_again(instance_process& p) {
  p.shipping = false;
  ship_metrics(p);
}

void instance_runtime::tell(const instance_wire::runtime_call& c) {
  p_.send(instance_wire::encode(instance_wire::kind::runtime_call, c));
}

instance_wire::runtime_answer
instance_runtime::call(instance_wire::runtime_call c) {
  std::uint64_t id = 0;
  {
    std::lock_guard<std::mutex> guard{mu_};
    id = c.id = ++next_id_;
    waiting_.emplace(id, std::nullopt);
  }
  tell(c);
  std::unique_lock<std::mutex> guard{mu_};
  // The process ends with its host: no answer is waited for in vain.
  cv_.wait(guard, [&] { return waiting_.at(id).has_value(); });
  auto a = std::move(*waiting_.at(id));
  waiting_.erase(id);
  guard.unlock();
  if (a.error.code != errc::ok)
    detail::throw_error(a.error);
  return a;
}

// Runs `f` with the instance's runtime, actor and output source set.
template <class F>
void with_instance_context(instance_process& p, F f) {
  note_output_source(p.source);
  detail::set_thread_runtime(p.rt.get());
  detail::set_current_actor(&p.ctx);
  f();
  detail::set_current_actor(nullptr);
  detail::set_thread_runtime(nullptr);
}

void construct(instance_process& p, instance_wire::construct msg) {
  p.ctx.actor = msg.actor;
  p.ctx.num_restarts = msg.num_restarts;
  p.source = msg.source;
  p.rt->set_identity(msg.self, msg.node, msg.job);
  instance_wire::constructed answer;
  with_instance_context(p, [&] {
    auto* e = detail::function_registry::instance().find(msg.factory);
    if (e == nullptr || !e->make) {
      answer.failure = "no actor factory named '" + msg.factory +
                       "' is registered in this worker";
      return;
    }
    try {
      p.instance = e->make(msg.args);
    } catch (const detail::actor_exit_signal&) {
      answer.failure = "the factory called exit_actor";
    } catch (...) {
      auto err = error_of_current_exception(msg.factory);
      answer.failure = "its factory '" + msg.factory + "' threw " +
                       err.exception_type + ": " + err.message;
    }
  });
  ship_metrics(p);
  p.send(instance_wire::encode(instance_wire::kind::constructed, answer));
}

/// Whether `task` was cancelled before it began; takes it out if so.
/// REQUIRES: p.cancel_mu held.
bool take_cancelled(instance_process& p, const task_id& task) {
  auto i = std::find(p.cancelled.begin(), p.cancelled.end(), task);
  if (i == p.cancelled.end())
    return false;
  p.cancelled.erase(i);
  return true;
}

/// Runs one call of the batch in `slot`.
instance_wire::outcome run_call(instance_process& p, batch_slot& slot,
                                const instance_wire::call& call,
                                std::int64_t& ended_us) {
  instance_wire::outcome out;
  out.task = call.task;
  {
    std::lock_guard<std::mutex> guard{p.cancel_mu};
    if (take_cancelled(p, call.task)) {
      out.error.code = errc::task_cancelled;
      out.error.function_name = call.method;
      out.error.message = "the actor call was cancelled before it began";
      return out;
    }
    slot.task = call.task;
    slot.cancelled.store(false, std::memory_order_release);
  }
  if (p.exit_requested.load()) {
    out.error.code = errc::actor_died;
    out.error.message = "the actor exited (exit_actor) before the call";
    return out;
  }
  auto* e = detail::function_registry::instance().find(call.method);
  if (e == nullptr || !e->call_method) {
    out.error.code = errc::function_not_found;
    out.error.function_name = call.method;
    out.error.message = "no actor method named '" + call.method +
                        "' is registered in this worker";
    return out;
  }
  // Calls run back to back: the end of the timed one before is this one's
  // start.
  auto last_end_us = std::exchange(ended_us, 0);
  if (call.timed)
    out.start_us = last_end_us != 0 ? last_end_us : internal::unix_us_now();
  current_call = call.task;
  call_async_host async{p, call};
  detail::set_current_async_host(&async);
  try {
    out.result = e->call_method(p.instance.get(), call.args);
    out.ok = true;
  } catch (...) {
    method_threw(p, out, call.method);
  }
  detail::set_current_async_host(nullptr);
  current_call = task_id{};
  if (async.state()) {
    // Its coroutine answers once it ends (it may have already).
    settle(p, async.state(), out);
    if (out.waits)
      return out;
  }
  if (call.timed)
    ended_us = out.end_us = internal::unix_us_now();
  return out;
}

/// Runs on the asynchronous call of `call.task` from where it waited.
instance_wire::outcome resume_call(instance_process& p,
                                   const instance_wire::call& call) {
  instance_wire::outcome out;
  out.task = call.task;
  std::shared_ptr<async_call_state> state;
  {
    std::lock_guard<std::mutex> guard{p.cancel_mu};
    if (auto a = p.async_calls.find(call.task); a != p.async_calls.end())
      state = a->second;
  }
  if (!state) {
    out.error.code = errc::internal;
    out.error.message = "the actor's process has no waiting call to resume";
    return out;
  }
  current_call = call.task;
  state->resume();
  current_call = task_id{};
  settle(p, state, out);
  if (!out.waits && call.timed)
    out.end_us = internal::unix_us_now();
  return out;
}

void run_batch(instance_process& p, batch_slot& slot,
               const instance_wire::run& batch) {
  instance_wire::ran answer;
  answer.batch = batch.batch;
  answer.outcomes.reserve(batch.calls.size());
  with_instance_context(p, [&] {
    detail::set_current_cancel_flag(&slot.cancelled);
    std::int64_t ended_us = 0;
    for (auto& call : batch.calls)
      answer.outcomes.push_back(batch.resume
                                    ? resume_call(p, call)
                                    : run_call(p, slot, call, ended_us));
    detail::set_current_cancel_flag(nullptr);
  });
  answer.exit_requested = p.exit_requested.load();
  {
    std::lock_guard<std::mutex> guard{p.cancel_mu};
    std::erase(p.slots, &slot);
    // Its calls began or were skipped: their cancellations are done with.
    std::erase_if(p.cancelled, [&](const task_id& task) {
      return std::any_of(batch.calls.begin(), batch.calls.end(),
                         [&](const auto& c) { return c.task == task; });
    });
  }
  // Metrics the calls changed go first: a caller that saw the answer
  // finds them at the node soon after.
  ship_metrics(p);
  p.send(instance_wire::encode(instance_wire::kind::ran, answer));
}

void serve(instance_process& p);

/// Runs `batch` on the calling thread, which led until now.
void run_here(instance_process& p, const instance_wire::run& batch) {
  batch_slot slot;
  slot.calls = &batch.calls;
  {
    // Taken in before another thread reads: a cancellation finds its calls.
    std::lock_guard<std::mutex> guard{p.cancel_mu};
    p.slots.push_back(&slot);
  }
  p.threads.hand_over([&p] { serve(p); });
  run_batch(p, slot, batch);
}

// Call `task` is cancelled: stopped if it runs, skipped if not begun.
void on_cancel(instance_process& p, const task_id& task) {
  std::unique_lock<std::mutex> guard{p.cancel_mu};
  // An asynchronous call that began: its wait wakes and throws.
  if (auto a = p.async_calls.find(task); a != p.async_calls.end()) {
    auto state = a->second;
    guard.unlock();
    state->cancel();
    return;
  }
  for (auto* slot : p.slots) {
    if (slot->task == task) {
      slot->cancelled.store(true, std::memory_order_release);
      return;
    }
  }
  for (auto* slot : p.slots)
    if (std::any_of(slot->calls->begin(), slot->calls->end(),
                    [&](const auto& c) { return c.task == task; })) {
      if (std::find(p.cancelled.begin(), p.cancelled.end(), task) ==
          p.cancelled.end())
        p.cancelled.push_back(task);
      return;
    }
}

int connect_to_host(const std::string& name) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (name.empty() || name.size() + 1 > sizeof(addr.sun_path))
    fail("its host's socket name '" + name + "' is not one");
  std::memcpy(addr.sun_path + 1, name.data(), name.size());
  auto len =
      static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0)
    fail("cannot connect to its host's socket '" + name +
         "': " + std::strerror(errno));
  return fd;
}

template <class T>
T decoded(const instance_wire::frame& f) {
  T result;
  if (!instance_wire::decode(f, result))
    fail("its host sent a malformed frame of kind " +
         std::to_string(static_cast<int>(f.what)));
  return result;
}

/// What each thread of the process does: it leads, reads, and runs what it
/// read or hands it on; it never returns.
void serve(instance_process& p) {
  for (;;) {
    p.threads.lead();
    for (bool leads = true; leads;) {
      auto f = instance_wire::read_frame(p.fd);
      // The host ended the link, or ended: so does this process.
      if (!f)
        exit_now(0);
      switch (f->what) {
      case instance_wire::kind::construct: {
        if (p.constructing.exchange(true))
          fail("its host asked for its instance twice");
        auto msg = decoded<instance_wire::construct>(*f);
        p.threads.hand_over([&p] { serve(p); });
        construct(p, std::move(msg));
        leads = false;
        break;
      }
      case instance_wire::kind::run:
        run_here(p, decoded<instance_wire::run>(*f));
        leads = false;
        break;
      case instance_wire::kind::cancel:
        on_cancel(p, decoded<instance_wire::cancel>(*f).task);
        break;
      case instance_wire::kind::runtime_answer:
        p.rt->answered(decoded<instance_wire::runtime_answer>(*f));
        break;
      default:
        fail("its host sent a frame of kind " +
             std::to_string(static_cast<int>(f->what)) +
             ", which goes the other way");
      }
    }
  }
}

} // namespace

bool started_as_instance() noexcept {
  const char* name = std::getenv(instance_wire::socket_variable);
  return name != nullptr && *name != '\0';
}

void serve_as_instance() {
  // A method that calls exit() ends this process with its code at once:
  // static destructors must not run under the threads that still run.
  ::on_exit([](int status, void*) { exit_now(status); }, nullptr);
  auto name = take_environment_variable(instance_wire::socket_variable);
  auto token = take_environment_variable(instance_wire::token_variable);
  // Never destroyed: the process ends with _exit, its threads still there.
  auto* p = new instance_process;
  p->fd = connect_to_host(name);
  p->send(instance_wire::encode(
      instance_wire::kind::hello,
      instance_wire::hello{token, static_cast<std::int32_t>(::getpid())}));
  serve(*p);
  exit_now(0);
}

} // namespace prism::actors
