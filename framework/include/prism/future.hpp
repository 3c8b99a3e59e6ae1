#pragma once

// Asynchronous actor methods. A method that returns `prism::future<T>` is a
// C++20 coroutine: it gives its thread back while it waits on
// `co_await prism::get_async(ref)` (an object, such as another actor's
// answer) or `co_await prism::sleep_for(d)`, and its caller gets the `T` it
// `co_return`s. See "Asynchronous methods" in the README.

#include <chrono>
#include <coroutine>
#include <exception>
#include <type_traits>
#include <utility>

#include "prism/api.hpp"
#include "prism/detail/async.hpp"
#include "prism/error.hpp"
#include "prism/object_ref.hpp"

namespace prism {

namespace detail {

/// What every `future`'s promise shares: the call at its actor host, and
/// the result on its way to the caller.
class future_promise_base {
public:
  future_promise_base() : call_(begin()) {}

  std::suspend_never initial_suspend() noexcept {
    return {};
  }

  /// Hands the result to the host, then ends the coroutine.
  struct final_awaiter {
    bool await_ready() noexcept {
      return false;
    }

    template <class Promise>
    void await_suspend(std::coroutine_handle<Promise> h) noexcept {
      auto& p = h.promise();
      auto* call = p.call_;
      auto result = std::move(p.result_);
      auto error = std::move(p.error_);
      call->finish(std::move(result), std::move(error));
      h.destroy();
    }

    void await_resume() noexcept {}
  };

  final_awaiter final_suspend() noexcept {
    return {};
  }

  void unhandled_exception() noexcept {
    error_ = std::current_exception();
  }

  async_call* call() const noexcept {
    return call_;
  }

protected:
  void attach(std::coroutine_handle<> frame) {
    call_->attach(frame);
  }

  value result_;

private:
  static async_call* begin() {
    auto* host = current_async_host();
    if (host == nullptr)
      throw invalid_argument_error(
          "prism::future is the result of an actor method; call the method "
          "through its actor (handle.task(&T::m).remote())");
    return host->begin_async();
  }

  async_call* call_;
  std::exception_ptr error_;
};

/// The promise of a `Future`: its coroutine's frame goes to its call.
template <class Promise, class Future>
class future_promise : public future_promise_base {
public:
  Future get_return_object() {
    attach(std::coroutine_handle<Promise>::from_promise(
        static_cast<Promise&>(*this)));
    return {};
  }
};

} // namespace detail

/// The result of an asynchronous actor method: the method is a coroutine
/// that `co_return`s a `T`, and its caller's ref is an `object_ref<T>`.
/// Only the actor host that runs the method uses it.
template <class T>
class [[nodiscard]] future {
public:
  class promise_type : public detail::future_promise<promise_type, future<T>> {
  public:
    template <class U>
    void return_value(U&& x) {
      this->result_ = detail::encode<T>(T(std::forward<U>(x)));
    }
  };
};

template <>
class [[nodiscard]] future<void> {
public:
  class promise_type
      : public detail::future_promise<promise_type, future<void>> {
  public:
    void return_void() noexcept {}
  };
};

namespace detail {

/// Throws `task_cancelled_error` if the call waiting on `call` was
/// cancelled meanwhile.
inline void throw_if_cancelled(const async_call* call, const char* what) {
  if (call != nullptr && call->cancelled())
    throw task_cancelled_error(std::string{what} +
                               ": the actor call was cancelled");
}

template <class T>
class get_awaiter {
public:
  explicit get_awaiter(object_ref<T> ref) : ref_(std::move(ref)) {}

  bool await_ready() const noexcept {
    return false;
  }

  template <class Promise>
  void await_suspend(std::coroutine_handle<Promise> h) {
    call_ = h.promise().call();
    call_->resume_when_ready(*ref_.token());
  }

  T await_resume() {
    throw_if_cancelled(call_, "get_async");
    return prism::get(ref_);
  }

private:
  object_ref<T> ref_;
  async_call* call_ = nullptr;
};

class sleep_awaiter {
public:
  explicit sleep_awaiter(std::chrono::nanoseconds delay) : delay_(delay) {}

  bool await_ready() const noexcept {
    return false;
  }

  template <class Promise>
  void await_suspend(std::coroutine_handle<Promise> h) {
    call_ = h.promise().call();
    call_->resume_after(delay_);
  }

  void await_resume() const {
    throw_if_cancelled(call_, "sleep_for");
  }

private:
  std::chrono::nanoseconds delay_;
  async_call* call_ = nullptr;
};

} // namespace detail

/// Inside an asynchronous actor method: `co_await get_async(ref)` gives the
/// actor's thread back until the object is ready, then returns its value
/// (or throws its error) as `get` does. Throws `task_cancelled_error` if
/// the call was cancelled meanwhile.
template <class T>
detail::get_awaiter<T> get_async(object_ref<T> ref) {
  detail::require_valid(ref.token());
  return detail::get_awaiter<T>{std::move(ref)};
}

/// Inside an asynchronous actor method: `co_await sleep_for(d)` gives the
/// actor's thread back for `d`. Throws `task_cancelled_error` if the call
/// was cancelled meanwhile (it wakes at once then).
template <class Rep, class Period>
detail::sleep_awaiter sleep_for(std::chrono::duration<Rep, Period> delay) {
  return detail::sleep_awaiter{
      std::chrono::duration_cast<std::chrono::nanoseconds>(delay)};
}

} // namespace prism
