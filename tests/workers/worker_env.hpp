#pragma once

#include <cerrno>
#include <chrono>
#include <csignal>
#include <functional>
#include <thread>

namespace worker_test {

/// Set in the driver's environment, these make the worker processes it
/// starts from then on misbehave before they call prism::init.
inline constexpr const char* exit_before_init = "PRISM_TEST_WORKER_EXIT";
inline constexpr const char* hang_before_init = "PRISM_TEST_WORKER_HANG";

/// Whether `check` holds within `timeout`, polled every 10 ms.
inline bool eventually(std::chrono::milliseconds timeout,
                       const std::function<bool()>& check) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!check()) {
    if (std::chrono::steady_clock::now() >= deadline)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds{10});
  }
  return true;
}

/// Whether no process `pid` exists (reaped, not a zombie).
inline bool process_gone(int pid) {
  return ::kill(pid, 0) != 0 && errno == ESRCH;
}

} // namespace worker_test
