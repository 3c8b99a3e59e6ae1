#include "gcs/gcs_client.hpp"

#include <atomic>

namespace prism::actors {

namespace {

std::atomic<std::int64_t> gcs_wait_ms{60000};

/// Beyond the wait: time for the control store to answer once it is back.
constexpr std::int64_t answer_margin_ms = 10000;

} // namespace

void set_gcs_wait(std::chrono::milliseconds wait) {
  gcs_wait_ms = wait.count();
}

std::chrono::milliseconds gcs_request_timeout() {
  return std::chrono::milliseconds{gcs_wait_ms.load() + answer_margin_ms};
}

} // namespace prism::actors
