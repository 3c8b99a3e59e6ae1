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

protocol::request_id next_request_id() {
  // One client per process: its id is random, so two processes (or two runs
  // of one) never share one, and its numbers never repeat within it.
  static const unique_id client = unique_id::random();
  static std::atomic<std::uint64_t> last{0};
  return protocol::request_id{client, ++last};
}

prism::backoff gcs_retry_policy() {
  // A request bounces only until the endpoint sees the control store down
  // (then it buffers requests), so the first retries come soon; a control
  // store that keeps dying is asked at most once a second.
  return prism::backoff{std::chrono::milliseconds{2},
                        std::chrono::milliseconds{1000}, 0.5};
}

} // namespace prism::actors
