#pragma once

// Who writes a worker process's output: the task function or actor class
// whose code runs in it. The worker says so in its own output, on a line of
// its own that its node reads and takes out (raylet/worker_output.hpp), each
// time the name changes; every line after it is that one's.

#include <string>
#include <string_view>

namespace prism::actors {

/// What starts a line naming the source of the lines after it; the name
/// follows, up to the end of the line. An ASCII record separator, which text
/// meant for people does not hold.
inline constexpr std::string_view output_source_mark = "\x1eprism-source:";

/// The variable a node sets for its worker processes, whose stdout and
/// stderr it reads: `note_output_source` writes marks only then. Its value
/// is the descriptor where Prism's own log of the process goes (the node's
/// log), apart from the user's output.
inline constexpr const char* output_log_fd_variable = "PRISM_WORKER_LOG_FD";

/// Says that `name` writes this process's output from now on, if the
/// process's output goes to its node (`output_log_fd_variable` was set
/// when `init_output_source` ran) and `name` differs from the last one. A
/// partial line still buffered (`printf` without a newline) stays the
/// previous source's. Thread-safe.
void note_output_source(std::string_view name);

/// The class an actor factory's registered name names: "counter" for
/// "counter::create"; a free function's name as it is.
std::string actor_class_of(std::string_view factory);

/// Reads `output_log_fd_variable` and, if it is set, sends Prism's own log
/// to that descriptor and makes stdout line-buffered (it is a pipe to the
/// node), so that each line leaves when it is written. Call it once the
/// process's stdout and stderr are the ones its node gave it.
void init_output_source();

} // namespace prism::actors
