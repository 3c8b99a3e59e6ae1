#pragma once

// Runs the `prism` command line as a real process, the way an operator
// would, with a session directory of its own.

#include <chrono>
#include <functional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace prism::cluster_test {

struct command_result {
  /// The exit status, or 128 + the signal that ended it; -1 if it did not
  /// end in time (it is killed then).
  int status = -1;
  std::string out;
  std::string err;
};

/// A session directory of its own for one test case, and the processes
/// `prism start` started in it, stopped (and the directory removed) at the
/// end.
class prism_session {
public:
  prism_session();
  ~prism_session();

  prism_session(const prism_session&) = delete;
  prism_session& operator=(const prism_session&) = delete;

  const std::string& dir() const {
    return dir_;
  }

  /// Runs `prism args...` and waits for it to end, for at most `timeout`.
  command_result run(const std::vector<std::string>& args,
                     std::chrono::seconds timeout = std::chrono::seconds{60});

  /// Starts `prism args...` without waiting (for `--block`).
  pid_t spawn(const std::vector<std::string>& args);

  /// Waits for a process from `spawn` to end; its status as in
  /// `command_result`.
  int await(pid_t pid, std::chrono::seconds timeout);

  /// Starts a head with `extra` flags (a free port unless they name one)
  /// and returns its address ("host:port").
  std::string start_head(const std::vector<std::string>& extra = {});

  /// Starts a node joining `address`; returns its pid.
  pid_t start_node(const std::string& address,
                   const std::vector<std::string>& extra = {});

  /// The pid recorded for process `name` ("head", "node-<pid>"), 0 if none.
  pid_t pid_of(const std::string& name) const;

  /// The log of process `name` ("head", "node-<pid>").
  std::string log_of(const std::string& name) const;

  /// Every sanitizer report or crash in the session's logs.
  std::string sanitizer_reports() const;

private:
  std::string dir_;
  int counter_ = 0;
};

/// Runs `check` until it returns true or `timeout` passes; returns its last
/// answer.
bool eventually(std::chrono::milliseconds timeout,
                const std::function<bool()>& check);

/// Whether `text` contains `part`.
bool contains(const std::string& text, const std::string& part);

} // namespace prism::cluster_test
