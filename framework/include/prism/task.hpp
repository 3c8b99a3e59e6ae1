#pragma once

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "prism/config.hpp"
#include "prism/detail/exception_types.hpp"
#include "prism/detail/function_registry.hpp"
#include "prism/detail/runtime.hpp"
#include "prism/object_ref.hpp"

namespace prism {

/// Picks one overload of a function by its parameter types:
/// `prism::overload<int, int>(f)`.
template <class... Args>
struct overload_t {
  template <class R>
  constexpr auto operator()(R (*f)(Args...)) const noexcept {
    return f;
  }
};

template <class... Args>
inline constexpr overload_t<Args...> overload{};

/// `PRISM_FUNC(f, int, int)` names the overload of `f` taking `(int, int)`,
/// for `PRISM_REMOTE` and `prism::task`.
#define PRISM_FUNC(f, ...) ::prism::overload<__VA_ARGS__>(f)

namespace detail {

/// Throws `invalid_argument_error` if `resources` is not a valid request:
/// a name is empty, a quantity is not positive, or a quantity above 1 is not
/// a whole number.
void validate_resources(const resource_map& resources);

/// Returns the registered name of the callable with `key`, or throws
/// `function_not_found_error`.
const std::string& registered_name(const std::string& key);

template <class P, class A>
task_arg make_task_arg(A&& x) {
  using D = std::decay_t<P>;
  using X = std::decay_t<A>;
  if constexpr (is_object_ref<X>::value && !is_object_ref<D>::value) {
    static_assert(std::is_same_v<typename X::value_type, D>,
                  "an object_ref<T> argument must match the parameter type T");
    if (!x.valid())
      throw invalid_argument_error("empty object_ref passed to a task");
    task_arg arg;
    arg.by_ref = true;
    arg.ref = x.id();
    arg.owner = x.owner();
    arg.address = x.token()->address();
    return arg;
  } else {
    static_assert(std::is_constructible_v<D, A&&>,
                  "argument cannot be converted to the parameter type");
    task_arg arg;
    if constexpr (std::is_same_v<X, D>)
      arg.inline_value = encode<D>(x);
    else
      arg.inline_value = encode<D>(D(std::forward<A>(x)));
    return arg;
  }
}

} // namespace detail

/// A call of a remote function, with its options. Made by `prism::task(f)`.
template <class F>
class task_caller;

template <class R, class... Args>
class task_caller<R (*)(Args...)> {
public:
  using result_type = std::decay_t<R>;

  explicit task_caller(R (*f)(Args...), detail::runtime* rt = nullptr)
      : f_(f), rt_(rt) {}

  /// A name for the task, shown in logs and errors.
  task_caller& name(std::string n) {
    opts_.name = std::move(n);
    return *this;
  }

  /// Resources each run of the task holds, e.g. {{"CPU", 1}, {"GPU", 0.5}}.
  /// Replaces the default of one CPU. Throws `invalid_argument_error` for an
  /// empty name, a quantity that is not positive, or a fractional quantity
  /// above 1.
  task_caller& resources(resource_map r) {
    detail::validate_resources(r);
    opts_.resources = std::move(r);
    return *this;
  }

  /// How often the task is run again after its worker dies (and, with
  /// `retry_exceptions`, after it throws). Default 3; -1 retries forever.
  task_caller& max_retries(int n) {
    if (n < -1)
      throw invalid_argument_error("max_retries must be -1 or more");
    opts_.max_retries = n;
    return *this;
  }

  /// Runs the task on `node`. Hard (the default): if that node is dead, or
  /// can never fit the task's resources, the task fails with
  /// `unschedulable_error`. Soft: it then runs wherever it fits. Throws
  /// `invalid_argument_error` for a nil node id.
  task_caller& node_affinity(node_id node, bool soft = false) {
    if (node.nil())
      throw invalid_argument_error("node_affinity needs a node id");
    opts_.affinity = node;
    opts_.affinity_soft = soft;
    return *this;
  }

  /// Keeps the task's lineage in the control store, durably, once its
  /// arguments are ready. If the owner of the result (the caller) dies, the
  /// control store adopts the result: borrowers of the ref still get it,
  /// made again by running the task. The record goes when the owner frees
  /// the result, or when the job ends.
  task_caller& durable(bool on = true) {
    opts_.durable = on;
    return *this;
  }

  /// Whether an exception thrown by the task counts as retryable. Default
  /// false.
  task_caller& retry_exceptions(bool on) {
    opts_.retry_exceptions = on;
    opts_.retry_exception_types.clear();
    return *this;
  }

  /// Retries the task (up to `max_retries`) after it throws an exception of
  /// one of the types `Es`, or of a type derived from one, and after no
  /// other exception: `.retry_exceptions<std::system_error, my_error>()`.
  template <class... Es>
  task_caller& retry_exceptions() {
    static_assert(sizeof...(Es) > 0, "name at least one exception type");
    opts_.retry_exceptions = true;
    opts_.retry_exception_types = {detail::exception_type_name<Es>...};
    return *this;
  }

  /// Submits the task and returns a reference to its result. Arguments are
  /// values (copied now) or `object_ref`s (the task runs once they are ready
  /// and receives their values). Throws `function_not_found_error` if the
  /// function was not registered with `PRISM_REMOTE`.
  template <class... Ts>
  object_ref<result_type> remote(Ts&&... xs) {
    static_assert(sizeof...(Ts) == sizeof...(Args),
                  "wrong number of arguments for this remote function");
    const auto& fn = detail::registered_name(detail::callable_key(f_));
    std::vector<detail::task_arg> args;
    args.reserve(sizeof...(Ts));
    (args.push_back(detail::make_task_arg<Args>(std::forward<Ts>(xs))), ...);
    auto& rt = rt_ != nullptr ? *rt_ : detail::current_runtime();
    return object_ref<result_type>{rt.submit_task(fn, std::move(args), opts_)};
  }

private:
  R (*f_)(Args...);
  detail::runtime* rt_ = nullptr;
  detail::task_options opts_;
};

/// Starts a remote call of `f`, a function registered with `PRISM_REMOTE`:
/// `prism::task(plus).remote(1, 2)`.
template <class R, class... Args>
task_caller<R (*)(Args...)> task(R (*f)(Args...)) {
  return task_caller<R (*)(Args...)>{f};
}

/// Registers `f` under `name` at run time. Throws `registration_error` if the
/// name or the function is already registered.
template <class R, class... Args>
void register_function(const std::string& name, R (*f)(Args...)) {
  detail::register_one(name, f);
}

} // namespace prism
