#pragma once

#include <string>

#include "prism/detail/runtime.hpp"

namespace prism::actors {

/// Turns the exception being handled, thrown by the user code of `function`
/// (a task or an actor's method or factory), into the error its caller sees.
/// REQUIRES: called inside a `catch` block.
///
/// A `task_error` (a failed nested task the code did not handle) travels on
/// unchanged. Other Prism errors keep their kind, except that a retryable one
/// raised by the code's own calls (a nested `get` that timed out) is the
/// code's failure, not a reason to run it again. Anything else is a
/// `task_failed` with the exception's type name and message.
detail::error_info error_of_current_exception(const std::string& function);

} // namespace prism::actors
