#pragma once

// Other processes: the environment one is started with, and how one ended.

#include <string>
#include <vector>

namespace prism::actors {

/// The environment of this process with `extra` ("NAME=value" entries) on
/// top: an entry of `extra` replaces this process's entry of the same name,
/// and of two entries of `extra` with one name, the later one wins.
std::vector<std::string>
merged_environment(const std::vector<std::string>& extra);

/// Pointers to the characters of each of `strings`, and a null pointer
/// after them: an argv or envp for exec, valid while `strings` is.
std::vector<char*> c_strings(std::vector<std::string>& strings);

/// "exited with code 3", "was killed by signal 11 (SIGSEGV)": how a process
/// ended, from a `waitpid` status.
std::string describe_exit(int status);

/// The value of the environment variable `name` ("" if it is not set),
/// taken out of this process's environment: the processes it starts do not
/// inherit it.
std::string take_environment_variable(const char* name);

/// Flushes Prism's logs, stdout and stderr, and ends this process at once
/// with `code` (`_exit`): no static destructor or atexit handler runs under
/// threads that still run.
[[noreturn]] void exit_now(int code);

} // namespace prism::actors
