#pragma once

// The driver programs (programs/) as the cluster tests run them, the output
// driver (programs/output_driver.cpp) above all: a program of its own, its
// stdout and stderr in files of the session, its stdin a pipe the test
// writes to and closes.

#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <spawn.h>
#include <string>
#include <unistd.h>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "prism_command.hpp"

extern char** environ;

namespace prism::cluster_test {

using namespace std::chrono_literals;

inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream in{p, std::ios::binary};
  return {std::istreambuf_iterator<char>{in}, {}};
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string::npos)
      break; // Not ended yet.
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

inline std::size_t count_of(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (auto at = text.find(part); at != std::string::npos;
       at = text.find(part, at + part.size()))
    ++n;
  return n;
}

/// The output driver, running: its stdin is a pipe this test closes to let
/// it end; its stdout and stderr go to files.
struct driver_process {
  pid_t pid = 0;
  int stdin_fd = -1;
  std::filesystem::path out;
  std::filesystem::path err;

  std::string out_text() const {
    return read_text(out);
  }
  std::string err_text() const {
    return read_text(err);
  }

  /// Has its actor print `line`.
  void say(const std::string& line) const {
    auto text = line + "\n";
    BOOST_REQUIRE(::write(stdin_fd, text.data(), text.size()) ==
                  static_cast<ssize_t>(text.size()));
  }

  /// Lets it end; returns its exit status (-1 if it did not end in time).
  int finish(process_cluster& s) {
    if (stdin_fd >= 0)
      ::close(stdin_fd);
    stdin_fd = -1;
    return s.await(pid, 120s);
  }
};

/// Starts the driver program at `path` with `args` and the environment
/// entries `env` on top of this process's (PRISM_ADDRESS and
/// PRISM_SESSION_DIR left out unless given); its output goes to files of
/// the session named after `name`.
inline driver_process start_program(process_cluster& s, const std::string& path,
                                    const std::vector<std::string>& args,
                                    const std::vector<std::string>& env,
                                    const std::string& name) {
  driver_process d;
  d.out = std::filesystem::path{s.session_dir()} / (name + ".out");
  d.err = std::filesystem::path{s.session_dir()} / (name + ".err");
  std::vector<std::string> env_s = env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view entry{*e};
    if (entry.substr(0, 14) != "PRISM_ADDRESS=" &&
        entry.substr(0, 18) != "PRISM_SESSION_DIR=")
      env_s.emplace_back(entry);
  }
  std::vector<char*> envp;
  for (auto& e : env_s)
    envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_s{path};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  int in[2];
  BOOST_REQUIRE(::pipe2(in, O_CLOEXEC) == 0);
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
  ::posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, d.out.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ::posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, d.err.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
  int rc = ::posix_spawn(&d.pid, argv[0], &actions, nullptr, argv.data(),
                         envp.data());
  ::posix_spawn_file_actions_destroy(&actions);
  ::close(in[0]);
  BOOST_REQUIRE_MESSAGE(rc == 0,
                        "cannot start " << path << ": " << std::strerror(rc));
  d.stdin_fd = in[1];
  return d;
}

/// Starts the output driver (see `start_program`).
inline driver_process start_driver(process_cluster& s,
                                   const std::vector<std::string>& args,
                                   const std::vector<std::string>& env,
                                   const std::string& name) {
  return start_program(s, PRISM_OUTPUT_DRIVER_PATH, args, env, name);
}

} // namespace prism::cluster_test
