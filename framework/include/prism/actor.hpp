#pragma once

#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "prism/config.hpp"
#include "prism/detail/function_registry.hpp"
#include "prism/detail/runtime.hpp"
#include "prism/ids.hpp"
#include "prism/object_ref.hpp"
#include "prism/task.hpp"

namespace prism {

/// Whether an actor shares fate with its owner (the default) or outlives it.
enum class lifetime : std::uint8_t {
  /// Dies with the job, worker or actor that created it.
  non_detached,
  /// Owned by the control store: outlives its job, is found by name from any
  /// job, and restarts after its node dies.
  detached,
};

/// Where an actor runs when its node's workers are processes (a cluster, or
/// embedded mode with `worker_processes`); embedded mode with worker threads
/// hosts every actor in its own process either way.
enum class isolation : std::uint8_t {
  /// In a process of its own, as Ray's actors: a crash takes only it, and
  /// creating it starts a process.
  process,
  /// In one of a few processes its node shares among the actors of its job
  /// (one per CPU): creating it costs a message, not a process, and an idle
  /// actor a few kilobytes. A crash of that process takes every actor in
  /// it; each restarts by its own `max_restarts`.
  shared,
};

namespace detail {

/// Returns the registered name of a member function, or throws
/// `function_not_found_error`.
const std::string& registered_method_name(const std::string& key);

template <class F>
struct method_traits;

template <class T, class R, class... Args>
struct method_traits<R (T::*)(Args...)> {
  using class_type = T;
  using result_type = typename unwrap_future<std::decay_t<R>>::type;
  using args = std::tuple<Args...>;
};

template <class T, class R, class... Args>
struct method_traits<R (T::*)(Args...) const> {
  using class_type = T;
  using result_type = typename unwrap_future<std::decay_t<R>>::type;
  using args = std::tuple<Args...>;
};

template <class Tuple, class... Ts, std::size_t... Is>
std::vector<task_arg> make_task_args(std::index_sequence<Is...>, Ts&&... xs) {
  std::vector<task_arg> args;
  args.reserve(sizeof...(Ts));
  (args.push_back(
       make_task_arg<std::tuple_element_t<Is, Tuple>>(std::forward<Ts>(xs))),
   ...);
  return args;
}

} // namespace detail

/// A call of one actor method, made by `handle.task(&T::method)`.
template <class M>
class actor_method_caller {
public:
  using traits = detail::method_traits<M>;
  using result_type = typename traits::result_type;

  actor_method_caller(actor_id actor, M method, detail::runtime* rt)
      : actor_(actor), method_(method), rt_(rt) {}

  /// Runs this call in the actor's concurrency group `group`, not in the
  /// method's own (`PRISM_CONCURRENCY_GROUP`) or the default one. An actor
  /// without that group fails the call with `invalid_argument_error`.
  actor_method_caller& concurrency_group(std::string group) {
    opts_.concurrency_group = std::move(group);
    return *this;
  }

  /// Sends the call and returns a reference to its result. Calls from one
  /// caller run in the order they were sent. If the actor is restarting, the
  /// call waits for it; if it is dead, the ref holds an `actor_died_error`.
  template <class... Ts>
  object_ref<result_type> remote(Ts&&... xs) {
    using args_tuple = typename traits::args;
    static_assert(sizeof...(Ts) == std::tuple_size_v<args_tuple>,
                  "wrong number of arguments for this actor method");
    const auto& name =
        detail::registered_method_name(detail::callable_key(method_));
    auto args = detail::make_task_args<args_tuple>(
        std::make_index_sequence<sizeof...(Ts)>{}, std::forward<Ts>(xs)...);
    auto& rt = rt_ != nullptr ? *rt_ : detail::current_runtime();
    return object_ref<result_type>{
        rt.submit_actor_task(actor_, name, std::move(args), opts_)};
  }

private:
  actor_id actor_;
  M method_;
  detail::runtime* rt_;
  detail::call_options opts_;
};

/// A reference to a live actor of class `T`. Copyable, and may be passed to
/// and returned from tasks and actors.
template <class T>
class actor_handle {
public:
  actor_handle() = default;

  explicit actor_handle(actor_id id) : id_(id) {}

  /// The actor's id, stable across restarts.
  const actor_id& id() const noexcept {
    return id_;
  }

  bool valid() const noexcept {
    return !id_.nil();
  }

  /// Starts a call of `method`, registered with `PRISM_REMOTE`:
  /// `handle.task(&Counter::add).remote(1)`.
  template <class M>
  actor_method_caller<M> task(M method) const {
    static_assert(
        std::is_same_v<typename detail::method_traits<M>::class_type, T>,
        "the method belongs to another class than this actor's");
    return actor_method_caller<M>{id_, method, nullptr};
  }

  friend bool operator==(const actor_handle& x, const actor_handle& y) {
    return x.id_ == y.id_;
  }

  template <class Inspector>
  friend typename Inspector::result_type inspect(Inspector& f,
                                                 actor_handle& x) {
    return f(static_cast<unique_id&>(x.id_));
  }

private:
  actor_id id_;
};

/// Creates actors with a factory registered with `PRISM_REMOTE`. Made by
/// `prism::actor(&Counter::create)`.
template <class F>
class actor_creator;

template <class R, class... Args>
class actor_creator<R (*)(Args...)> {
public:
  using traits = detail::factory_traits<R>;
  static_assert(traits::value,
                "an actor factory returns T* or std::unique_ptr<T>");
  using actor_type = typename traits::actor_type;

  actor_creator(R (*f)(Args...), detail::runtime* rt) : f_(f), rt_(rt) {}

  /// Names the actor in the caller's namespace; `get_actor` finds it.
  actor_creator& name(std::string n) {
    opts_.name = std::move(n);
    return *this;
  }

  /// Names the actor in namespace `ns`.
  actor_creator& name(std::string n, std::string ns) {
    opts_.name = std::move(n);
    opts_.ns = std::move(ns);
    return *this;
  }

  /// With a name: returns the live actor of that name if there is one (its
  /// factory does not run again, and this creator's options do not apply),
  /// else creates it. Atomic in the control store, so callers that race,
  /// from any process, all get the same actor. `remote` throws
  /// `invalid_argument_error` without a name, and `type_mismatch_error` if
  /// the live actor is of another class.
  actor_creator& get_if_exists(bool on = true) {
    opts_.get_if_exists = on;
    return *this;
  }

  actor_creator& lifetime(prism::lifetime l) {
    opts_.detached = l == prism::lifetime::detached;
    return *this;
  }

  /// Restarts after the actor's worker or node dies. Default 0; -1 forever.
  actor_creator& max_restarts(int n) {
    if (n < -1)
      throw invalid_argument_error("max_restarts must be -1 or more");
    opts_.max_restarts = n;
    return *this;
  }

  /// Retries of a call whose actor died while running it. Default 0; -1
  /// forever.
  actor_creator& max_task_retries(int n) {
    if (n < -1)
      throw invalid_argument_error("max_task_retries must be -1 or more");
    opts_.max_task_retries = n;
    return *this;
  }

  /// Calls that may run at once. Default 1 (one at a time, in order).
  actor_creator& max_concurrency(int n) {
    if (n < 1)
      throw invalid_argument_error("max_concurrency must be 1 or more");
    opts_.max_concurrency = n;
    return *this;
  }

  /// Groups of methods with a concurrency of their own, e.g.
  /// `{{"io", 8}, {"health", 1}}`: calls in one group run in order, up to
  /// its size at once, and never wait for another group's. Calls of a
  /// method bound to no group (`PRISM_CONCURRENCY_GROUP`, or the call's
  /// `concurrency_group`) run in the default group, `max_concurrency` at
  /// once. Throws `invalid_argument_error` for an empty or repeated name, or
  /// a size below 1.
  actor_creator& concurrency_groups(std::vector<concurrency_group> groups) {
    for (std::size_t i = 0; i < groups.size(); ++i) {
      if (groups[i].name.empty())
        throw invalid_argument_error("a concurrency group needs a name");
      if (groups[i].size < 1)
        throw invalid_argument_error("concurrency group '" + groups[i].name +
                                     "' needs a size of 1 or more");
      for (std::size_t j = 0; j < i; ++j)
        if (groups[j].name == groups[i].name)
          throw invalid_argument_error("concurrency group '" + groups[i].name +
                                       "' is named twice");
    }
    opts_.concurrency_groups = std::move(groups);
    return *this;
  }

  /// Where the actor runs: a process of its own (the default) or a process
  /// its node shares among actors of its job. See `prism::isolation`.
  actor_creator& isolation(prism::isolation i) {
    opts_.shared_host = i == prism::isolation::shared;
    return *this;
  }

  /// Resources the actor holds while alive. Default none.
  actor_creator& resources(resource_map r) {
    detail::validate_resources(r);
    opts_.resources = std::move(r);
    return *this;
  }

  /// Creates the actor and returns its handle at once; the factory runs on
  /// the actor's node. A throwing factory makes every call fail with
  /// `actor_died_error`. Throws `invalid_argument_error` if the name is
  /// taken in its namespace (unless `get_if_exists`).
  template <class... Ts>
  actor_handle<actor_type> remote(Ts&&... xs) {
    static_assert(sizeof...(Ts) == sizeof...(Args),
                  "wrong number of arguments for this actor factory");
    if (opts_.get_if_exists && opts_.name.empty())
      throw invalid_argument_error("get_if_exists needs a name");
    const auto& fn = detail::registered_name(detail::callable_key(f_));
    auto args = detail::make_task_args<std::tuple<Args...>>(
        std::index_sequence_for<Ts...>{}, std::forward<Ts>(xs)...);
    auto& rt = rt_ != nullptr ? *rt_ : detail::current_runtime();
    auto id = rt.create_actor(fn, detail::type_tag<actor_type>(),
                              std::move(args), opts_);
    return actor_handle<actor_type>{id};
  }

private:
  R (*f_)(Args...);
  detail::runtime* rt_;
  detail::actor_options opts_;
};

/// Starts creating an actor with `factory`, a static function or free
/// function registered with `PRISM_REMOTE` that returns `T*` or
/// `std::unique_ptr<T>`.
template <class R, class... Args>
actor_creator<R (*)(Args...)> actor(R (*factory)(Args...)) {
  return actor_creator<R (*)(Args...)>{factory, nullptr};
}

/// Returns the live actor named `name` in the caller's namespace, or nothing.
/// Throws `type_mismatch_error` if that actor is not a `T`.
template <class T>
[[nodiscard]] std::optional<actor_handle<T>>
get_actor(const std::string& name) {
  auto id = detail::current_runtime().find_actor(name, nullptr,
                                                 detail::type_tag<T>());
  if (!id)
    return std::nullopt;
  return actor_handle<T>{*id};
}

/// Returns the live actor named `name` in namespace `ns`, or nothing.
template <class T>
[[nodiscard]] std::optional<actor_handle<T>> get_actor(const std::string& name,
                                                       const std::string& ns) {
  auto id =
      detail::current_runtime().find_actor(name, &ns, detail::type_tag<T>());
  if (!id)
    return std::nullopt;
  return actor_handle<T>{*id};
}

/// Kills the actor as a crash would. With `no_restart` (the default) it stays
/// dead, its calls fail with `actor_died_error` and its name is free again;
/// otherwise it restarts if its `max_restarts` allows. It is not an error if
/// the actor is already dead.
template <class T>
void kill(const actor_handle<T>& handle, bool no_restart = true) {
  detail::current_runtime().kill_actor(handle.id(), no_restart);
}

/// Ends the calling actor after its current method: no restart, and later
/// calls fail with `actor_died_error`. REQUIRES: called inside an actor
/// method; elsewhere throws `invalid_argument_error`.
[[noreturn]] void exit_actor();

/// Whether the calling actor is a restarted instance. REQUIRES: called inside
/// an actor (factory or method); elsewhere returns false.
bool was_current_actor_restarted() noexcept;

} // namespace prism
