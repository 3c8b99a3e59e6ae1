#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "prism/actor.hpp"
#include "prism/api.hpp"
#include "prism/task.hpp"

namespace prism {

/// One job attached to the running cluster. `prism::init` attaches the
/// default job, which the free functions use; each `client` is another job
/// with its own job id, namespace and workers, also from the same process.
/// Ending a client ends its job: its non-detached actors and its workers go;
/// detached actors stay.
class client {
public:
  /// Starts a new job in namespace `ns` (empty: an anonymous namespace of the
  /// job's own). REQUIRES: `prism::init` was called.
  static client connect(const std::string& ns = "");

  client(client&&) noexcept = default;
  client& operator=(client&&) noexcept = default;

  /// Ends the job (see `shutdown`).
  ~client();

  /// The job's id.
  job_id job() const;

  /// Starts a task of this job.
  template <class R, class... Args>
  task_caller<R (*)(Args...)> task(R (*f)(Args...)) const {
    return task_caller<R (*)(Args...)>{f, &live()};
  }

  /// Starts creating an actor owned by this job.
  template <class R, class... Args>
  actor_creator<R (*)(Args...)> actor(R (*factory)(Args...)) const {
    return actor_creator<R (*)(Args...)>{factory, &live()};
  }

  /// Starts a call of an actor method from this job, which owns its result:
  /// `job.task(handle, &Counter::add).remote(1)`. (`handle.task` calls from
  /// the job of the calling task, or the default job.)
  template <class T, class M>
  actor_method_caller<M> task(const actor_handle<T>& handle, M method) const {
    static_assert(
        std::is_same_v<typename detail::method_traits<M>::class_type, T>,
        "the method belongs to another class than this actor's");
    return actor_method_caller<M>{handle.id(), method, &live()};
  }

  /// Stores a value owned by this job.
  template <class T>
  object_ref<std::decay_t<T>> put(const T& x) const {
    using D = std::decay_t<T>;
    return object_ref<D>{live().put(detail::encode<D>(x))};
  }

  /// Returns the value of `ref` (see `prism::get`).
  template <class T>
  T get(const object_ref<T>& ref,
        std::chrono::milliseconds timeout = detail::wait_forever) const {
    detail::require_valid(ref.token());
    auto v = live().get(*ref.token(), timeout);
    if constexpr (!std::is_void_v<T>)
      return detail::decode<T>(v, "object");
  }

  /// Finds a named actor in this job's namespace.
  template <class T>
  [[nodiscard]] std::optional<actor_handle<T>>
  get_actor(const std::string& name) const {
    auto id = live().find_actor(name, nullptr, detail::type_tag<T>());
    if (!id)
      return std::nullopt;
    return actor_handle<T>{*id};
  }

  /// Finds a named actor in namespace `ns`.
  template <class T>
  [[nodiscard]] std::optional<actor_handle<T>>
  get_actor(const std::string& name, const std::string& ns) const {
    auto id = live().find_actor(name, &ns, detail::type_tag<T>());
    if (!id)
      return std::nullopt;
    return actor_handle<T>{*id};
  }

  /// Kills an actor (see `prism::kill`).
  template <class T>
  void kill(const actor_handle<T>& handle, bool no_restart = true) const {
    live().kill_actor(handle.id(), no_restart);
  }

  /// Ends the job now: its non-detached actors die, its workers stop, and
  /// later calls on this client throw `not_initialized_error`. It is not an
  /// error to end a job twice.
  void shutdown();

private:
  /// The job's runtime. Throws `not_initialized_error` once the job ended.
  detail::runtime& live() const;

  explicit client(std::shared_ptr<detail::runtime> rt) : rt_(std::move(rt)) {}

  std::shared_ptr<detail::runtime> rt_;
};

} // namespace prism
