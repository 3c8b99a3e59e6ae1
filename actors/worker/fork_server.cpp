#include "worker/fork_server.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "worker/fork_wire.hpp"

namespace prism::actors {

namespace {

std::size_t threads_running() {
  std::size_t n = 0;
  if (DIR* d = ::opendir("/proc/self/task")) {
    while (auto* e = ::readdir(d))
      if (e->d_name[0] != '.')
        ++n;
    ::closedir(d);
  }
  return n;
}

/// Sets each "NAME=value" entry of `entries` (each ended by '\0').
void set_environment(const std::string& entries) {
  for (std::size_t start = 0; start < entries.size();) {
    auto end = entries.find('\0', start);
    if (end == std::string::npos)
      end = entries.size();
    auto entry = entries.substr(start, end - start);
    if (auto eq = entry.find('='); eq != std::string::npos && eq > 0)
      ::setenv(entry.substr(0, eq).c_str(), entry.c_str() + eq + 1, 1);
    start = end + 1;
  }
}

/// Tells the node of every forked process that ended.
void report_exits(int fd) {
  int status = 0;
  pid_t pid = 0;
  while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0)
    fork_wire::send(fd, {fork_wire::kind::exited, 0, pid, status});
}

/// The server's state between requests.
struct server {
  int fd = -1;
  int exit_signals = -1;
  sigset_t old_mask;
};

/// Forks for request `h`. Returns true in the forked process.
bool fork_one(const server& s, const fork_wire::header& h,
              const std::string& text) {
  // What the server buffered must not be written twice.
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(s.exit_signals);
    ::close(s.fd);
    ::sigprocmask(SIG_SETMASK, &s.old_mask, nullptr);
    set_environment(text);
    return true;
  }
  if (pid < 0) {
    fork_wire::send(s.fd, {fork_wire::kind::fork_failed, h.serial, 0, 0},
                    std::strerror(errno));
    return false;
  }
  // The node watches and kills the forked process by this descriptor, which
  // names this very process even once its pid is reused.
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  fork_wire::send(s.fd, {fork_wire::kind::forked, h.serial, pid, 0}, {}, pidfd);
  if (pidfd >= 0)
    ::close(pidfd);
  return false;
}

} // namespace

bool started_as_fork_server() noexcept {
  const char* fd = std::getenv(fork_wire::server_variable);
  return fd != nullptr && *fd != '\0';
}

void serve_forks() {
  server s;
  s.fd = std::atoi(std::getenv(fork_wire::server_variable));
  // The workers it forks are not fork servers.
  ::unsetenv(fork_wire::server_variable);
  if (s.fd < 0 || ::fcntl(s.fd, F_SETFD, FD_CLOEXEC) != 0)
    ::_exit(70);
  if (auto n = threads_running(); n != 1) {
    fork_wire::send(s.fd, {fork_wire::kind::refused, 0, ::getpid(), 0},
                    std::to_string(n) +
                        " threads run when prism::init is called, and a "
                        "process with threads cannot be forked safely");
    ::_exit(0);
  }
  sigset_t exited;
  sigemptyset(&exited);
  sigaddset(&exited, SIGCHLD);
  ::sigprocmask(SIG_BLOCK, &exited, &s.old_mask);
  s.exit_signals = ::signalfd(-1, &exited, SFD_CLOEXEC | SFD_NONBLOCK);
  if (s.exit_signals < 0 ||
      !fork_wire::send(s.fd, {fork_wire::kind::ready, 0, ::getpid(), 0}))
    ::_exit(0);
  for (;;) {
    pollfd fds[2] = {{s.fd, POLLIN, 0}, {s.exit_signals, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR)
        continue;
      ::_exit(0);
    }
    if (fds[1].revents != 0) {
      signalfd_siginfo info;
      while (::read(s.exit_signals, &info, sizeof(info)) > 0) {
      }
      report_exits(s.fd);
    }
    if (fds[0].revents == 0)
      continue;
    fork_wire::header h;
    std::string text;
    int passed = -1;
    auto got = fork_wire::receive(s.fd, h, text, passed);
    if (passed >= 0)
      ::close(passed);
    // The node is gone (or speaks nonsense): so is its server. Its
    // workers notice their node's end on their own.
    if (got == fork_wire::received::closed)
      ::_exit(0);
    if (got == fork_wire::received::message &&
        h.what == fork_wire::kind::fork && fork_one(s, h, text))
      return;
  }
}

} // namespace prism::actors
