#pragma once

namespace worker_test {

/// Set in the driver's environment, these make the worker processes it
/// starts from then on misbehave before they call prism::init.
inline constexpr const char* exit_before_init = "PRISM_TEST_WORKER_EXIT";
inline constexpr const char* hang_before_init = "PRISM_TEST_WORKER_HANG";

} // namespace worker_test
