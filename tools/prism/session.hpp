#pragma once

// The session directory of the processes `prism start` runs on this host:
// a pid file and a log per process, and the head's address. `prism stop`
// and `prism status` find them there.

#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace prism::tools {

/// A process `prism start` started.
struct session_process {
  /// "head", or "node-<pid>".
  std::string name;
  pid_t pid = 0;
};

class session {
public:
  /// `$PRISM_SESSION_DIR`, or /tmp/prism-<uid>; created if missing.
  static session open();

  const std::string& dir() const {
    return dir_;
  }

  std::string log_path(const std::string& name) const;

  /// Records that process `name` runs as `pid`.
  void add(const std::string& name, pid_t pid) const;

  /// Forgets process `name` (it ended).
  void remove(const std::string& name) const;

  /// The processes recorded that still run; pid files of processes that
  /// are gone are removed.
  std::vector<session_process> running() const;

  /// The head's address ("host:port"), if a head was started here.
  std::optional<std::string> head_address() const;
  void set_head_address(const std::string& address) const;

private:
  explicit session(std::string dir) : dir_(std::move(dir)) {}

  std::string dir_;
};

/// Whether process `pid` runs and is a `prism start` (not another process
/// that reused the pid).
bool is_prism_start(pid_t pid);

} // namespace prism::tools
