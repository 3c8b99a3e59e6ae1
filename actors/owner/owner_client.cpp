#include "owner/owner_client.hpp"

#include <algorithm>
#include <optional>

#include <caf/all.hpp>

#include "common/executor.hpp"
#include "gcs/gcs_client.hpp"
#include "net/peers.hpp"
#include "owner/owner.hpp"
#include "owner/owner_address.hpp"
#include "owner/task_events.hpp"
#include "protocol/kv.hpp"
#include "protocol/object_store.hpp"
#include "protocol/owner_gcs.hpp"
#include "protocol/owner_owner.hpp"
#include "protocol/raylet_worker.hpp"
#include "protocol/state.hpp"

namespace prism::actors {

namespace {

using store_state = internal::memory_store::state;
using clock = std::chrono::steady_clock;

/// The start of a client's run of actor ids; its low half, which every id
/// of the run keeps, is never 0, so no id is nil.
unique_id first_actor_id() {
  auto id = unique_id::random();
  if (id.lo == 0)
    id.lo = 1;
  return id;
}

/// How long a flush of task events waits: the owner waits up to 5 s for
/// the control store.
constexpr auto flush_wait = std::chrono::seconds{6};

clock::time_point deadline_of(detail::wait_duration timeout) {
  if (timeout.count() < 0)
    return clock::time_point::max();
  return clock::now() + timeout;
}

/// Drops, when it goes, the local references a call took on objects it read
/// through refs of another client.
struct borrowed_for_call {
  internal::memory_store& store;
  std::vector<object_id> ids;

  ~borrowed_for_call() {
    for (const auto& id : ids)
      store.release(id);
  }
};

/// Whether the task or actor call the calling thread runs was cancelled.
bool cancelled(const std::atomic<bool>* flag) {
  return flag != nullptr && flag->load(std::memory_order_acquire);
}

[[noreturn]] void throw_cancelled(const char* what) {
  throw task_cancelled_error(std::string{what} +
                             ": the task or actor call it runs in was "
                             "cancelled");
}

detail::value value_or_throw(internal::memory_store::result&& found) {
  if (found.err)
    detail::throw_error(*found.err);
  return std::move(found.val);
}

// What the store's events become: registrations with the owners of the
// objects this process borrows, sent from the thread that made the borrowed
// entry (so that they reach the owner before anything this thread sends
// later) to the address the ref carries, and the frees the owner actor acts
// on.
internal::memory_store::hook store_hook(const worker_id& self,
                                        const caf::actor& owner) {
  return [self, weak = caf::actor_cast<caf::weak_actor_ptr>(owner)](
             const internal::memory_store::event& e) {
    using kind = internal::memory_store::event::kind;
    auto strong = weak.lock();
    if (!strong)
      return;
    auto& sys = *strong->home_system;
    auto me = caf::actor_cast<caf::actor>(strong);
    if (e.what == kind::borrowed) {
      if (borrows_gathered::take(e) || answer_after_borrows::take(sys, me, e))
        return;
      if (auto to = owner_at(sys, e.address))
        send_to_peer(
            sys, to, e.address.contact,
            caf::make_message(protocol::add_borrower{e.id, self, me, 1}));
      return;
    }
    if (!e.location.nil() || e.report)
      caf::anon_send(me, protocol::object_freed{e.id});
    if (e.registrations > 0)
      if (auto to = owner_at(sys, e.address))
        send_to_peer(sys, to, e.address.contact,
                     caf::make_message(protocol::remove_borrower{
                         e.id, self, e.registrations}));
  };
}

/// The call the calling thread runs, whose answer waits for its borrows.
thread_local answer_after_borrows* current_call = nullptr;

/// The gathering of borrowed entries on the calling thread.
thread_local borrows_gathered* current_gathering = nullptr;

/// How long a call's answer waits for them at most: longer than the owner
/// actor waits for a connection and for the registration's answer.
constexpr auto borrows_wait = reach_timeout + std::chrono::seconds{35};

} // namespace

struct answer_after_borrows::asked {
  explicit asked(caf::actor_system& sys) : self(sys) {}

  /// Receives the owner actor's answers.
  caf::scoped_actor self;
  std::size_t count = 0;
};

answer_after_borrows::answer_after_borrows(const worker_id& caller)
    : caller_(caller), outer_(std::exchange(current_call, this)) {}

answer_after_borrows::~answer_after_borrows() {
  current_call = outer_;
  if (!asked_)
    return;
  auto& self = asked_->self;
  auto deadline = clock::now() + borrows_wait;
  bool waiting = true;
  for (std::size_t answered = 0; waiting && answered < asked_->count;) {
    self->receive([&](bool) { ++answered; },
                  // The owner actor ended: no answer comes.
                  [&](caf::down_msg&) { waiting = false; },
                  caf::after(std::max(clock::duration::zero(),
                                      deadline - clock::now())) >>
                      [&] { waiting = false; });
  }
}

bool answer_after_borrows::take(caf::actor_system& sys,
                                const caf::actor& own_owner,
                                const internal::memory_store::event& e) {
  auto* call = current_call;
  if (call == nullptr || e.owner == call->caller_)
    return false;
  if (!call->asked_) {
    call->asked_ = std::make_unique<asked>(sys);
    call->asked_->self->monitor(own_owner);
  }
  call->asked_->self->send(own_owner,
                           protocol::register_borrow{e.id, e.address});
  ++call->asked_->count;
  return true;
}

borrows_gathered::borrows_gathered()
    : outer_(std::exchange(current_gathering, this)) {}

borrows_gathered::~borrows_gathered() {
  current_gathering = outer_;
}

bool borrows_gathered::take(const internal::memory_store::event& e) {
  auto* gathering = current_gathering;
  if (gathering == nullptr)
    return false;
  gathering->refs.push_back({e.id, e.owner, e.address});
  return true;
}

owner_client::owner_client(caf::actor_system& sys, config cfg)
    : sys_(sys), cfg_(std::move(cfg)), job_(cfg_.job),
      actor_ids_(first_actor_id()) {
  cfg_.store->set_self(cfg_.self);
}

const caf::actor& owner_client::owner_handle() {
  std::call_once(owner_once_, [this] {
    routes_ = std::make_shared<actor_routes>(cfg_.store);
    owner_ = spawn_owner(sys_, owner_config{cfg_.self, cfg_.node, cfg_.raylet,
                                            cfg_.store, cfg_.directory, routes_,
                                            cfg_.gcs,
                                            cfg_.driver ? cfg_.job : job_id{},
                                            cfg_.runs, cfg_.job});
    // Found by id, too, by an address read without a handle (a creation
    // argument the control store kept over its restart).
    sys_.registry().put(owner_->id(),
                        caf::actor_cast<caf::strong_actor_ptr>(owner_));
    own_address_ = address_of_owner(owner_);
    own_address_.contact = own_contact(sys_);
    cfg_.store->set_hook(store_hook(cfg_.self, owner_));
    cfg_.directory->add(cfg_.self, owner_);
    routes_->connect(owner_, cfg_.gcs);
    owner_started_ = true;
  });
  return owner_;
}

const detail::owner_address& owner_client::own_address() {
  owner_handle();
  return own_address_;
}

detail::ref_ptr owner_client::own_ref(const object_id& id) {
  return std::make_shared<detail::ref_token>(id, cfg_.self, own_address(),
                                             weak_from_this());
}

void owner_client::stop_owner() {
  if (owner_started_.load())
    caf::anon_send_exit(owner_, caf::exit_reason::user_shutdown);
}

void owner_client::fail_all(const detail::error_info& err) {
  if (owner_started_.load())
    routes_->fail_all(err);
  cfg_.store->fail_all_pending(err);
}

bool owner_client::flush_task_events() {
  if (!owner_started_.load() || !task_event_recording())
    return true;
  bool flushed = false;
  caf::scoped_actor self{sys_};
  self->request(owner_, flush_wait, protocol::flush_events_atom::value)
      .receive([&](bool ok) { flushed = ok; }, [](const caf::error&) {});
  return flushed;
}

owner_client::~owner_client() = default;

task_id owner_client::next_task_id() {
  return task_id{cfg_.self, next_seq_.fetch_add(1, std::memory_order_relaxed)};
}

detail::ref_ptr owner_client::submit_task(const std::string& function,
                                          std::vector<detail::task_arg> args,
                                          const detail::task_options& opts) {
  // A cancelled run submits nothing more: a recursive cancellation could
  // miss what it submitted after it.
  if (cancelled(detail::current_cancel_flag()))
    throw_cancelled("submitting a task");
  internal::task_spec spec;
  spec.id = next_task_id();
  spec.job = job_;
  spec.function = function;
  spec.name = opts.name;
  spec.args = std::move(args);
  spec.resources = internal::resource_set{opts.resources};
  spec.max_retries = opts.max_retries;
  spec.retry_exceptions = opts.retry_exceptions;
  spec.retry_exception_types = opts.retry_exception_types;
  spec.affinity = opts.affinity;
  spec.affinity_soft = opts.affinity_soft;
  spec.durable = opts.durable;
  spec.owner = cfg_.self;
  auto result_id = spec.return_id();
  cfg_.store->add_pending(result_id);
  // Arguments stay alive until the task ends, even if the caller drops its
  // refs right after this call.
  auto held = hold_args(spec.args);
  caf::anon_send(
      owner_handle(),
      protocol::submit_task{std::move(spec), std::move(held), current_task_});
  return own_ref(result_id);
}

detail::ref_ptr owner_client::put(detail::value v) {
  object_id id{next_task_id(), 0};
  // The refs inside the value are held by the new object from now on; the
  // references that encoding took go at the end of this call.
  auto inner = v.refs;
  struct release_on_exit {
    const std::vector<detail::contained_ref>& refs;
    ~release_on_exit() {
      detail::release_refs(refs);
    }
  } release{inner};
  if (v.size() <= cfg_.max_inline_bytes) {
    cfg_.store->add_ready(id, std::move(v));
  } else {
    // A large value goes to the object store of this node, through the
    // owner, which reads it from there later (its messages to the raylet
    // stay in order).
    // It waits for room while the node's store is full, up to a deadline.
    caf::scoped_actor self{sys_};
    std::optional<detail::error_info> outcome;
    caf::error failure;
    self->request(owner_handle(), caf::infinite,
                  protocol::put_object{id, std::move(v)})
        .receive([&](detail::error_info& e) { outcome = std::move(e); },
                 [&](caf::error& err) { failure = std::move(err); });
    if (!outcome)
      throw error(errc::owner_died, "put failed: the owner of this process "
                                    "ended (" +
                                        sys_.render(failure) + ")");
    if (outcome->code != errc::ok)
      detail::throw_error(*outcome);
    cfg_.store->add_remote(id, cfg_.node, inner);
  }
  return own_ref(id);
}

detail::value owner_client::read_remote(const object_id& id,
                                        detail::wait_duration timeout) {
  caf::scoped_actor self{sys_};
  std::optional<protocol::object_reply> reply;
  caf::error failure;
  auto request_timeout =
      timeout.count() < 0
          ? caf::duration{caf::infinite}
          : caf::duration{
                std::chrono::duration_cast<std::chrono::milliseconds>(timeout)};
  {
    executor::blocking_scope blocking;
    on_block();
    self->request(owner_handle(), request_timeout, protocol::read_object{id})
        .receive([&](protocol::object_reply& x) { reply = std::move(x); },
                 [&](caf::error& err) { failure = std::move(err); });
    on_unblock();
  }
  if (!reply) {
    if (failure == caf::sec::request_timeout)
      throw timeout_error(
          "get timed out after " + std::to_string(timeout.count()) +
          " ms reading object " + id.hex() + " from its node's object store");
    throw owner_died_error("reading object " + id.hex() +
                           " failed: its owner (this process's) ended (" +
                           sys_.render(failure) + ")");
  }
  if (!reply->ok)
    detail::throw_error(reply->error);
  return std::move(reply->result);
}

void owner_client::ensure_fetch(const object_id& id, const worker_id& owner,
                                const detail::owner_address& address) {
  if (owner != cfg_.self)
    caf::anon_send(owner_handle(), protocol::fetch_object{id, owner, address});
}

void owner_client::on_block() {
  if (in_worker_ && !blocked_) {
    blocked_ = true;
    caf::anon_send(cfg_.raylet, protocol::worker_blocked{cfg_.self});
  }
}

void owner_client::on_unblock() {
  if (blocked_) {
    blocked_ = false;
    caf::anon_send(cfg_.raylet, protocol::worker_unblocked{cfg_.self});
  }
}

detail::value owner_client::get(const detail::ref_token& ref,
                                detail::wait_duration timeout) {
  const auto& id = ref.id();
  const auto& owner = ref.owner();
  auto deadline = deadline_of(timeout);
  const auto* stop = detail::current_cancel_flag();
  if (cancelled(stop))
    throw_cancelled("get");
  auto found = cfg_.store->lookup(id);
  if (found.st == store_state::ready && !found.location.nil())
    return read_remote(id, timeout);
  if (found.st == store_state::ready)
    return value_or_throw(std::move(found));
  borrowed_for_call borrowed{*cfg_.store, {}};
  if (found.st == store_state::missing) {
    // Refs keep their objects alive: one naming an object of this process
    // that it does not know was made up, or read from old bytes.
    if (owner == cfg_.self)
      throw invalid_argument_error("object " + id.hex() +
                                   " is unknown to its owner (freed or never "
                                   "made)");
    // A ref of another client: borrowed, for the length of this call.
    hold(id, owner, ref.address());
    borrowed.ids.push_back(id);
  }
  ensure_fetch(id, owner, ref.address());
  {
    executor::blocking_scope blocking;
    on_block();
    found = cfg_.store->wait_one(id, deadline, stop);
    on_unblock();
  }
  if (found.st != store_state::ready && cancelled(stop))
    throw_cancelled("get");
  if (found.st != store_state::ready)
    throw timeout_error("get timed out after " +
                        std::to_string(timeout.count()) +
                        " ms waiting for object " + id.hex());
  if (!found.location.nil()) {
    auto left = timeout.count() < 0
                    ? timeout
                    : std::chrono::duration_cast<detail::wait_duration>(
                          std::max(deadline - clock::now(), clock::duration{}));
    return read_remote(id, left);
  }
  return value_or_throw(std::move(found));
}

std::vector<bool>
owner_client::wait(const std::vector<const detail::ref_token*>& refs,
                   std::size_t num_returns, detail::wait_duration timeout) {
  auto deadline = deadline_of(timeout);
  const auto* stop = detail::current_cancel_flag();
  if (cancelled(stop))
    throw_cancelled("wait");
  std::vector<object_id> ids;
  ids.reserve(refs.size());
  borrowed_for_call borrowed{*cfg_.store, {}};
  for (auto* ref : refs) {
    ids.push_back(ref->id());
    if (ref->owner() != cfg_.self) {
      if (cfg_.store->lookup(ref->id()).st == store_state::missing) {
        // A ref of another client: borrowed, for the length of this call.
        hold(ref->id(), ref->owner(), ref->address());
        borrowed.ids.push_back(ref->id());
      }
      ensure_fetch(ref->id(), ref->owner(), ref->address());
    }
  }
  auto ready = cfg_.store->wait_many(ids, 0, deadline);
  // A ref naming an object of this process that it does not know is done:
  // `get` of it fails at once, as a fetch of such a ref from another owner
  // does. Only refs not ready are looked up, so no value is copied.
  std::vector<bool> unknown(ids.size(), false);
  std::size_t num_unknown = 0;
  for (std::size_t n = 0; n < ids.size(); ++n) {
    if (!ready[n] && refs[n]->owner() == cfg_.self &&
        cfg_.store->lookup(ids[n]).st == store_state::missing) {
      ready[n] = true;
      unknown[n] = true;
      ++num_unknown;
    }
  }
  auto count =
      static_cast<std::size_t>(std::count(ready.begin(), ready.end(), true));
  if (count >= num_returns)
    return ready;
  executor::blocking_scope blocking;
  on_block();
  ready = cfg_.store->wait_many(ids, num_returns - num_unknown, deadline, stop);
  on_unblock();
  if (cancelled(stop))
    throw_cancelled("wait");
  for (std::size_t n = 0; n < ids.size(); ++n)
    if (unknown[n])
      ready[n] = true;
  return ready;
}

actor_id owner_client::create_actor(const std::string& factory,
                                    std::uint64_t class_tag,
                                    std::vector<detail::task_arg> args,
                                    const detail::actor_options& opts) {
  internal::actor_spec spec;
  spec.id = actor_id::in_run(actor_ids_, next_actor_++);
  spec.job = job_;
  spec.factory = factory;
  spec.class_tag = class_tag;
  // Creation arguments are resolved here: the control store keeps values
  // only, so that it can create the actor again from its spec alone.
  for (auto& arg : args) {
    if (arg.by_ref) {
      // A token of no runtime: it takes and drops no reference.
      detail::ref_token ref{arg.ref, arg.owner, arg.address, {}};
      arg.inline_value = get(ref, detail::wait_forever);
      arg.by_ref = false;
      for (const auto& r : arg.inline_value.refs)
        cfg_.store->pin(r.id);
    } else if (!arg.inline_value.refs.empty()) {
      // The control store keeps these values as long as the actor may
      // restart, and each instance may read the refs inside them: they stay
      // alive as long as this process (see README, "Limits").
      for (const auto& r : arg.inline_value.refs)
        cfg_.store->pin(r.id);
      detail::release_refs(arg.inline_value.refs);
    }
  }
  spec.args = std::move(args);
  spec.name = opts.name;
  spec.ns = ns_or_job(opts.ns);
  spec.detached = opts.detached;
  spec.max_restarts = opts.max_restarts;
  spec.max_task_retries = opts.max_task_retries;
  spec.max_concurrency = opts.max_concurrency;
  spec.resources = internal::resource_set{opts.resources};
  spec.owner = cfg_.self;
  spec.shared_host = opts.shared_host;
  spec.concurrency_groups = opts.concurrency_groups;
  auto id = spec.id;
  protocol::create_actor msg{std::move(spec), owner_handle(),
                             opts.get_if_exists};
  routes_->created(id, msg.spec.max_task_retries, msg);
  if (msg.spec.name.empty()) {
    // Past the endpoint's hop: the routes send it again should the control
    // store restart before it answers.
    caf::anon_send(attached_gcs(cfg_.gcs), std::move(msg));
    return id;
  }
  if (opts.get_if_exists) {
    auto found = ask_gcs<protocol::actor_found>(sys_, cfg_.gcs, msg,
                                                "getting or creating actor '" +
                                                    msg.spec.name + "'");
    if (!found.found)
      return id;
    // Another caller's actor holds the name: this one was never made.
    routes_->forget(id);
    if (found.class_tag != class_tag)
      detail::throw_type_mismatch(class_tag, found.class_tag,
                                  "actor '" + msg.spec.name + "'");
    return found.actor;
  }
  // A named actor is registered before this returns, so that a taken name
  // is an error here and `get_actor` finds the actor right after.
  auto result = ask_gcs<detail::error_info>(
      sys_, cfg_.gcs, msg, "creating actor '" + msg.spec.name + "'");
  if (result.code != errc::ok)
    detail::throw_error(result);
  return id;
}

detail::ref_ptr owner_client::submit_actor_task(
    const actor_id& actor, const std::string& method,
    std::vector<detail::task_arg> args, const detail::call_options& opts) {
  auto tid = next_task_id();
  auto result_id = object_id{tid, 1};
  cfg_.store->add_pending(result_id);
  auto held = hold_args(args);
  bool ready = std::none_of(args.begin(), args.end(),
                            [](const auto& arg) { return arg.by_ref; });
  const auto& owner = owner_handle();
  protocol::actor_task call{tid, method, {}, owner, 0, opts.concurrency_group};
  if (ready) {
    call.args = std::move(args);
    routes_->submit(actor, std::move(call), true, std::move(held), job_);
  } else {
    call.args = args;
    routes_->submit(actor, std::move(call), false, std::move(held), job_);
    caf::anon_send(owner,
                   protocol::resolve_actor_call{actor, tid, std::move(args)});
  }
  return own_ref(result_id);
}

std::optional<actor_id> owner_client::find_actor(const std::string& name,
                                                 const std::string* ns,
                                                 std::uint64_t class_tag) {
  auto found = ask_gcs<protocol::actor_found>(
      sys_, cfg_.gcs,
      protocol::lookup_actor{ns != nullptr ? *ns : this->ns(), name},
      "looking up actor '" + name + "'");
  if (!found.found)
    return std::nullopt;
  if (found.class_tag != class_tag)
    detail::throw_type_mismatch(class_tag, found.class_tag,
                                "actor '" + name + "'");
  return found.actor;
}

void owner_client::kill_actor(const actor_id& actor, bool no_restart) {
  ask_gcs<bool>(sys_, cfg_.gcs, protocol::kill_actor{actor, no_restart},
                "killing actor " + actor.hex());
}

bool owner_client::kv_put(const std::string& ns, const std::string& key,
                          const std::string& value, bool overwrite) {
  return ask_gcs<bool>(
      sys_, cfg_.gcs,
      protocol::kv_put{ns_or_job(ns), key, value, overwrite, {}},
      "kv::put of '" + key + "'");
}

std::optional<std::string> owner_client::kv_get(const std::string& ns,
                                                const std::string& key) {
  auto v = ask_gcs<protocol::kv_value>(sys_, cfg_.gcs,
                                       protocol::kv_get{ns_or_job(ns), key},
                                       "kv::get of '" + key + "'");
  if (!v.found)
    return std::nullopt;
  return std::move(v.value);
}

bool owner_client::kv_del(const std::string& ns, const std::string& key) {
  return ask_gcs<bool>(sys_, cfg_.gcs, protocol::kv_del{ns_or_job(ns), key, {}},
                       "kv::del of '" + key + "'");
}

std::vector<std::string> owner_client::kv_keys(const std::string& ns,
                                               const std::string& prefix) {
  return ask_gcs<std::vector<std::string>>(
      sys_, cfg_.gcs, protocol::kv_keys{ns_or_job(ns), prefix},
      "kv::keys with prefix '" + prefix + "'");
}

state::page owner_client::list_state(state::kind k,
                                     const state::list_options& options) {
  auto reply = ask_gcs<protocol::state_page>(
      sys_, cfg_.gcs,
      protocol::list_state{k, options.filters, options.limit, options.cursor},
      std::string{"listing the "} + state::to_string(k));
  if (reply.error.code != errc::ok)
    detail::throw_error(reply.error);
  return std::move(reply.page);
}

std::optional<state::entry> owner_client::get_state(state::kind k,
                                                    const std::string& id) {
  auto reply = ask_gcs<protocol::state_found>(
      sys_, cfg_.gcs, protocol::get_state{k, id},
      std::string{"getting "} + state::to_string(k) + " '" + id + "'");
  if (reply.error.code != errc::ok)
    detail::throw_error(reply.error);
  if (!reply.found)
    return std::nullopt;
  return std::move(reply.entry);
}

void owner_client::cancel(const detail::ref_token& ref, bool force,
                          bool recursive) {
  const auto& id = ref.id();
  if (id.is_put())
    throw invalid_argument_error("cannot cancel object " + id.hex() +
                                 ": put made it, not a task");
  bool own = ref.owner() == cfg_.self;
  if (force && own && owner_started_.load() && routes_->has_call(id.task))
    throw invalid_argument_error(
        "an actor call cannot be cancelled with force; kill its actor "
        "instead");
  protocol::cancel_task msg{id.task, force, recursive};
  if (own) {
    caf::anon_send(owner_handle(), std::move(msg));
    return;
  }
  // The task's owner decides; if it is gone, so is the task.
  if (auto to = owner_at(sys_, ref.address()))
    send_to_peer(sys_, to, ref.address().contact,
                 caf::make_message(std::move(msg)));
}

std::string owner_client::ns() {
  if (!cfg_.ns.empty() || !in_worker_)
    return cfg_.ns;
  // A worker runs the tasks of one job; the control store knows its
  // namespace.
  auto job = job_;
  std::lock_guard<std::mutex> guard{ns_mu_};
  if (!job_ns_ || job_ns_->first != job) {
    auto entry = get_state(state::kind::jobs, std::to_string(job.value));
    job_ns_.emplace(job, entry ? (*entry)["namespace"] : std::string{});
  }
  return job_ns_->second;
}

std::vector<state::count>
owner_client::summarize_state(state::kind k, const std::string& group_key) {
  auto reply = ask_gcs<protocol::state_counts>(
      sys_, cfg_.gcs, protocol::summarize_state{k, group_key},
      std::string{"summarizing the "} + state::to_string(k));
  if (reply.error.code != errc::ok)
    detail::throw_error(reply.error);
  return std::move(reply.counts);
}

detail::ref_ptr owner_client::borrow(const object_id& id,
                                     const worker_id& owner,
                                     const detail::owner_address& address) {
  hold(id, owner, address);
  return std::make_shared<detail::ref_token>(id, owner, address,
                                             weak_from_this());
}

void owner_client::hold(const object_id& id, const worker_id& owner,
                        const detail::owner_address& address) {
  if (owner != cfg_.self)
    owner_handle(); // registers the borrow, and is watched by the owner
  cfg_.store->borrow(id, owner, address);
}

void owner_client::register_borrower(
    const std::vector<detail::contained_ref>& refs, const worker_id& to_id,
    const caf::actor& to) {
  protocol::register_borrowers elsewhere{{}, to_id, to};
  for (const auto& r : refs) {
    if (r.owner == to_id)
      continue;
    if (r.owner == cfg_.self) {
      if (cfg_.store->add_borrower(r.id, to_id, 1))
        caf::anon_send(owner_handle(),
                       protocol::add_borrower{r.id, to_id, to, 0});
    } else if (cfg_.store->add_ref(r.id)) {
      // Held until its owner acknowledges the new borrower: the owner
      // actor lets go of it then (see `register_borrowers`).
      elsewhere.refs.push_back(r);
    }
  }
  if (!elsewhere.refs.empty())
    caf::anon_send(owner_handle(), std::move(elsewhere));
}

void owner_client::when_ready(const detail::ref_token& ref,
                              std::function<void()> callback) {
  // Copies: once the callback is in, what waits may go on and end, `ref`
  // with it, before this returns.
  auto id = ref.id();
  auto owner = ref.owner();
  auto address = ref.address();
  if (cfg_.store->on_ready(id, std::move(callback)))
    ensure_fetch(id, owner, address);
}

void owner_client::release_refs(
    const std::vector<detail::contained_ref>& refs) {
  for (const auto& r : refs)
    cfg_.store->release(r.id);
}

std::vector<object_id>
owner_client::hold_args(const std::vector<detail::task_arg>& args) {
  auto held = cfg_.store->add_task_refs(args);
  // The references encoding took go once the task holds the refs. A ref
  // this client has no entry for (made through another client) keeps the
  // encoder's reference: it is never freed early, at worst kept.
  std::vector<detail::contained_ref> secured;
  for (const auto& arg : args)
    for (const auto& r : arg.inline_value.refs)
      if (std::find(held.begin(), held.end(), r.id) != held.end())
        secured.push_back(r);
  detail::release_refs(secured);
  return held;
}

void owner_client::release(const object_id& id) {
  cfg_.store->release(id);
}

} // namespace prism::actors
