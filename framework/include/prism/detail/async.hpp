#pragma once

// What an asynchronous actor method (one that returns `prism::future`)
// needs from the actor host that runs it: the host keeps the method's
// coroutine while it waits, and resumes it on the actor's threads.

#include <chrono>
#include <coroutine>
#include <exception>

#include "prism/detail/runtime.hpp"
#include "prism/detail/value.hpp"

namespace prism::detail {

/// One call of an asynchronous method, at its actor host. The host owns
/// the call's coroutine frame while it is suspended, and destroys it if
/// the actor ends first.
class async_call {
public:
  virtual ~async_call();

  /// The coroutine `frame` of this call is made (before it first runs).
  virtual void attach(std::coroutine_handle<> frame) = 0;

  /// Resumes the coroutine on the actor's threads, in its concurrency
  /// group, once the object of `ref` is ready (or the call is cancelled).
  virtual void resume_when_ready(const ref_token& ref) = 0;

  /// Resumes the coroutine on the actor's threads after `delay` (or once
  /// the call is cancelled).
  virtual void resume_after(std::chrono::nanoseconds delay) = 0;

  /// Whether the call was cancelled (`prism::cancel`).
  virtual bool cancelled() const noexcept = 0;

  /// The coroutine returned `result`, or threw `error`: the host answers
  /// the caller. The frame is destroyed right after, by the coroutine.
  virtual void finish(value result, std::exception_ptr error) = 0;
};

/// The actor host's side of the method call the calling thread runs.
class async_host {
public:
  /// The method returns `prism::future`: the call goes on after the
  /// method returns, and ends with `async_call::finish`. The host keeps
  /// the returned call alive until then.
  virtual async_call* begin_async() = 0;

protected:
  ~async_host() = default;
};

/// The host of the actor method call the calling thread runs, or nullptr.
async_host* current_async_host() noexcept;

/// Sets it (actor hosts, around each method call).
void set_current_async_host(async_host* host) noexcept;

} // namespace prism::detail
