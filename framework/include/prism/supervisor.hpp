#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "prism/actor.hpp"
#include "prism/supervision.hpp"

namespace prism {

/// One child of a supervision tree: a named actor made by a factory
/// registered with `PRISM_REMOTE`, or a nested supervisor. A child actor is
/// named after its id in the tree's namespace, so `get_actor` finds the
/// current instance across restarts.
struct child_spec {
  /// A child actor named `id`, made by `factory(args...)`. Arguments are
  /// values (no refs); each restart makes the actor again from them.
  template <class R, class... Args, class... Ts>
  static child_spec actor(std::string id, R (*factory)(Args...), Ts&&... xs) {
    using traits = detail::factory_traits<R>;
    static_assert(traits::value,
                  "an actor factory returns T* or std::unique_ptr<T>");
    static_assert(sizeof...(Ts) == sizeof...(Args),
                  "wrong number of arguments for this actor factory");
    static_assert((!detail::is_object_ref<std::decay_t<Ts>>::value && ...),
                  "child actor arguments are values, not refs");
    child_spec c;
    c.id = std::move(id);
    c.factory = detail::registered_name(detail::callable_key(factory));
    c.class_tag = detail::type_tag<typename traits::actor_type>();
    c.args = detail::make_task_args<std::tuple<Args...>>(
        std::index_sequence_for<Ts...>{}, std::forward<Ts>(xs)...);
    return c;
  }

  /// A nested supervisor with flags and children of its own.
  static child_spec supervisor(std::string id, supervisor_flags flags,
                               std::vector<child_spec> children) {
    child_spec c;
    c.id = std::move(id);
    c.nested_flags = flags;
    c.nested = std::move(children);
    c.is_supervisor = true;
    return c;
  }

  /// When the child restarts. Default permanent.
  child_spec& restart(restart_type r) {
    restart_policy = r;
    return *this;
  }

  /// How the child stops. Default: 5 s, then a kill.
  child_spec& shutdown(shutdown_spec s) {
    shutdown_policy = s;
    return *this;
  }

  /// Resources the child actor holds while alive. Default none.
  child_spec& resources(resource_map r) {
    detail::validate_resources(r);
    needs = std::move(r);
    return *this;
  }

  std::string id;
  std::string factory;
  std::uint64_t class_tag = 0;
  std::vector<detail::task_arg> args;
  resource_map needs;
  restart_type restart_policy = restart_type::permanent;
  shutdown_spec shutdown_policy;
  bool is_supervisor = false;
  supervisor_flags nested_flags;
  std::vector<child_spec> nested;
};

/// A running supervision tree with Erlang/OTP semantics (see README,
/// "Supervision trees"). Children start in order and stop in reverse; a
/// child that dies is restarted as the strategy and its restart type say;
/// more restarts than the intensity allows within the period stop the tree.
/// Destroying the handle stops the tree.
class supervisor {
public:
  /// Starts a tree whose child actors live in namespace `ns` (empty: the
  /// default job's namespace). Throws `invalid_argument_error` for bad flags
  /// or children. REQUIRES: Prism is running.
  static supervisor start(supervisor_flags flags,
                          std::vector<child_spec> children,
                          const std::string& ns = "");

  supervisor(supervisor&&) noexcept = default;
  supervisor& operator=(supervisor&&) noexcept = default;
  ~supervisor();

  /// The children in start order, and whether each runs.
  std::vector<child_info> which_children() const;

  /// Whether the tree runs: false after `stop`, or once it gave up past its
  /// restart intensity.
  bool alive() const;

  /// Starts a child again; under simple_one_for_one, a new child named `id`
  /// from the template. Throws `invalid_argument_error` if the tree refuses.
  void start_child(const std::string& id);

  /// Stops a child for good (until `start_child`).
  void terminate_child(const std::string& id);

  /// Stops every child in reverse start order, then the tree. Waits for it.
  /// It is not an error to stop a tree twice.
  void stop();

  struct impl;

private:
  explicit supervisor(std::shared_ptr<impl> p) : impl_(std::move(p)) {}

  std::shared_ptr<impl> impl_;
};

} // namespace prism
