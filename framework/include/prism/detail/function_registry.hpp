#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "prism/detail/value.hpp"

namespace prism {

template <class T>
class future;

} // namespace prism

namespace prism::detail {

/// The result type a caller sees: `T` for a method that returns
/// `prism::future<T>` (an asynchronous method), else `R`.
template <class R>
struct unwrap_future {
  using type = R;
};

template <class T>
struct unwrap_future<prism::future<T>> {
  using type = T;
};

template <class R>
inline constexpr bool is_future_v =
    !std::is_same_v<typename unwrap_future<R>::type, R>;

/// Runs a registered function on serialized arguments and returns its
/// serialized result. Throws what the function throws, and
/// `type_mismatch_error` / `invalid_argument_error` for bad arguments.
using invoker = std::function<value(const std::vector<value>& args)>;

/// Runs a registered actor factory: makes the actor's instance.
using factory_invoker =
    std::function<std::shared_ptr<void>(const std::vector<value>& args)>;

/// Runs a registered actor method on an instance.
using method_invoker =
    std::function<value(void* instance, const std::vector<value>& args)>;

/// Identifies a callable by the bytes of its pointer, so that `task(f)` can
/// find the name `f` was registered under.
template <class F>
std::string callable_key(F f) {
  std::string key(sizeof(F), '\0');
  std::memcpy(key.data(), &f, sizeof(F));
  return key;
}

/// All functions this binary registered with `PRISM_REMOTE`. Every process of a
/// cluster runs the same binary, so names resolve the same everywhere.
class function_registry {
public:
  enum class kind : std::uint8_t { function, factory, method };

  struct entry {
    std::string name;
    kind what = kind::function;
    invoker call;
    factory_invoker make;
    method_invoker call_method;
    /// Factories and methods: the tag of the actor class.
    std::uint64_t class_tag = 0;
  };

  static function_registry& instance();

  /// Registers `call` under `name`. Throws `registration_error` if the name or
  /// the callable is already registered, or the name is empty.
  void add(std::string name, std::string key, entry e);

  /// Returns the entry for `name`, or nullptr.
  const entry* find(const std::string& name) const;

  /// Returns the name `key` was registered under, or nullptr.
  const std::string* name_of(const std::string& key) const;

  /// Binds the method of `key` to the concurrency group `group`. Throws
  /// `registration_error` for an empty group, or if the method is bound to
  /// another group already.
  void set_group(std::string key, std::string group);

  /// The concurrency group the method registered as `name` is bound to;
  /// empty if none.
  std::string group_of(const std::string& name) const;

  /// Registration failures that happened during static initialization, where
  /// nothing could be thrown; `prism::init` reports them.
  std::vector<std::string> static_errors() const;

  void add_static_error(std::string what);

private:
  function_registry() = default;
  struct impl;
  impl& state() const;
};

/// Splits the text of `PRISM_REMOTE`'s arguments at top-level commas.
std::vector<std::string> split_remote_names(const char* text);

template <class T, std::size_t I>
std::decay_t<T> decode_arg(const std::vector<value>& args,
                           const std::string& fn) {
  using D = std::decay_t<T>;
  if (args[I].tag != type_tag<D>())
    throw_type_mismatch(type_tag<D>(), args[I].tag,
                        "argument " + std::to_string(I + 1) + " of '" + fn +
                            "'");
  return decode<D>(args[I]);
}

[[noreturn]] void throw_arity_mismatch(const std::string& fn,
                                       std::size_t expected,
                                       std::size_t actual);

template <class R, class... Args, std::size_t... Is>
value invoke_function(R (*f)(Args...), const std::string& fn,
                      const std::vector<value>& args,
                      std::index_sequence<Is...>) {
  if (args.size() != sizeof...(Args))
    throw_arity_mismatch(fn, sizeof...(Args), args.size());
  std::tuple<std::decay_t<Args>...> xs{decode_arg<Args, Is>(args, fn)...};
  if constexpr (std::is_void_v<R>) {
    f(static_cast<Args&&>(std::get<Is>(xs))...);
    return value{};
  } else {
    return encode<std::decay_t<R>>(f(static_cast<Args&&>(std::get<Is>(xs))...));
  }
}

template <class T, class R, class M, class... Args, std::size_t... Is>
value invoke_method(M m, T* obj, const std::string& fn,
                    const std::vector<value>& args,
                    std::index_sequence<Is...>) {
  if (args.size() != sizeof...(Args))
    throw_arity_mismatch(fn, sizeof...(Args), args.size());
  std::tuple<std::decay_t<Args>...> xs{decode_arg<Args, Is>(args, fn)...};
  if constexpr (std::is_void_v<R>) {
    (obj->*m)(static_cast<Args&&>(std::get<Is>(xs))...);
    return value{};
  } else if constexpr (is_future_v<std::decay_t<R>>) {
    // Asynchronous: the call goes on in its coroutine, which answers the
    // caller through its actor host when it ends.
    static_cast<void>((obj->*m)(static_cast<Args&&>(std::get<Is>(xs))...));
    return value{};
  } else {
    return encode<std::decay_t<R>>(
        (obj->*m)(static_cast<Args&&>(std::get<Is>(xs))...));
  }
}

template <class T>
struct factory_traits : std::false_type {};

template <class T>
struct factory_traits<T*> : std::true_type {
  using actor_type = T;
  static std::shared_ptr<void> own(T* p) {
    return std::shared_ptr<T>(p);
  }
};

template <class T, class D>
struct factory_traits<std::unique_ptr<T, D>> : std::true_type {
  using actor_type = T;
  static std::shared_ptr<void> own(std::unique_ptr<T, D> p) {
    return std::shared_ptr<T>(std::move(p));
  }
};

template <class R, class... Args>
function_registry::entry make_entry(R (*f)(Args...), const std::string& name) {
  static_assert(!is_future_v<std::decay_t<R>>,
                "prism::future is the result of actor methods, not of tasks");
  function_registry::entry e;
  e.name = name;
  if constexpr (factory_traits<R>::value) {
    using T = typename factory_traits<R>::actor_type;
    e.what = function_registry::kind::factory;
    e.class_tag = type_tag<T>();
    e.make = [f, name](const std::vector<value>& args) {
      if (args.size() != sizeof...(Args))
        throw_arity_mismatch(name, sizeof...(Args), args.size());
      return [&]<std::size_t... Is>(std::index_sequence<Is...>) {
        std::tuple<std::decay_t<Args>...> xs{
            decode_arg<Args, Is>(args, name)...};
        auto made = f(static_cast<Args&&>(std::get<Is>(xs))...);
        if (made == nullptr)
          throw invalid_argument_error("actor factory '" + name +
                                       "' returned no instance");
        return factory_traits<R>::own(std::move(made));
      }
      (std::index_sequence_for<Args...>{});
    };
  } else {
    e.call = [f, name](const std::vector<value>& args) {
      return invoke_function(f, name, args, std::index_sequence_for<Args...>{});
    };
  }
  return e;
}

/// The entry of a member function `m` of `T`, const or not.
template <class T, class R, class... Args, class M>
function_registry::entry make_method_entry(M m, const std::string& name) {
  function_registry::entry e;
  e.name = name;
  e.what = function_registry::kind::method;
  e.class_tag = type_tag<T>();
  e.call_method = [m, name](void* obj, const std::vector<value>& args) {
    return invoke_method<T, R, M, Args...>(m, static_cast<T*>(obj), name, args,
                                           std::index_sequence_for<Args...>{});
  };
  return e;
}

template <class T, class R, class... Args>
function_registry::entry make_entry(R (T::*m)(Args...),
                                    const std::string& name) {
  return make_method_entry<T, R, Args...>(m, name);
}

template <class T, class R, class... Args>
function_registry::entry make_entry(R (T::*m)(Args...) const,
                                    const std::string& name) {
  return make_method_entry<T, R, Args...>(m, name);
}

/// Strips a leading '&' and blanks from a registered name, so that
/// `&Counter::add` and `Counter::add` name the same thing.
std::string canonical_name(std::string name);

template <class F>
void register_one(std::string name, F f) {
  name = canonical_name(std::move(name));
  function_registry::instance().add(name, callable_key(f), make_entry(f, name));
}

template <class... Fs>
bool register_remote(const char* text, Fs... fs) {
  auto names = split_remote_names(text);
  if (names.size() != sizeof...(Fs)) {
    function_registry::instance().add_static_error(
        std::string{"cannot split PRISM_REMOTE("} + text + ") into names");
    return false;
  }
  std::size_t i = 0;
  bool ok = true;
  auto add = [&](auto f) {
    try {
      register_one(names[i++], f);
    } catch (const std::exception& e) {
      function_registry::instance().add_static_error(e.what());
      ok = false;
    }
  };
  (add(fs), ...);
  return ok;
}

template <class... Ms>
bool bind_group(const char* group, Ms... ms) {
  bool ok = true;
  auto bind = [&](auto m) {
    static_assert(std::is_member_function_pointer_v<decltype(m)>,
                  "PRISM_CONCURRENCY_GROUP binds actor methods");
    try {
      function_registry::instance().set_group(callable_key(m), group);
    } catch (const std::exception& e) {
      function_registry::instance().add_static_error(e.what());
      ok = false;
    }
  };
  (bind(ms), ...);
  return ok;
}

} // namespace prism::detail

#define PRISM_DETAIL_CONCAT_IMPL(a, b) a##b
#define PRISM_DETAIL_CONCAT(a, b) PRISM_DETAIL_CONCAT_IMPL(a, b)

/// Registers remote functions by name: `PRISM_REMOTE(plus, minus);`. Each name
/// may be registered once per binary; a second registration is reported by
/// `prism::init` as a `registration_error`. Overloads are registered with
/// `PRISM_FUNC(f, arg types...)`.
#define PRISM_REMOTE(...)                                                      \
  [[maybe_unused]] static const bool PRISM_DETAIL_CONCAT(                      \
      prism_remote_registered_, __COUNTER__) =                                 \
      ::prism::detail::register_remote(#__VA_ARGS__, __VA_ARGS__)

/// Binds actor methods to a concurrency group of their actors:
/// `PRISM_CONCURRENCY_GROUP("health", &Service::health);`. A call of the
/// method runs in that group unless the caller names another
/// (`.concurrency_group(name)`); an actor that declares no such group fails
/// the call with `invalid_argument_error`. A method is bound to one group.
#define PRISM_CONCURRENCY_GROUP(group, ...)                                    \
  [[maybe_unused]] static const bool PRISM_DETAIL_CONCAT(prism_group_bound_,   \
                                                         __COUNTER__) =        \
      ::prism::detail::bind_group(group, __VA_ARGS__)
