#include "worker/fork_server.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
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

/// Makes the descriptors a request brought (its stdout and stderr, when
/// its node reads them) this process's own, and closes them.
void take_output(std::vector<int>& passed) {
  if (passed.size() == 2) {
    std::fflush(nullptr);
    ::dup2(passed[0], STDOUT_FILENO);
    ::dup2(passed[1], STDERR_FILENO);
  }
  fork_wire::close_all(passed);
}

/// A process forked ahead of a request, which prepares itself to serve
/// (`prepare`) and waits on its socket for the request's environment.
struct spare {
  pid_t pid = 0;
  /// The server's end of their socket pair.
  int fd = -1;
};

/// The server's state between requests.
struct server {
  int fd = -1;
  int exit_signals = -1;
  sigset_t old_mask;
  /// How many spares it keeps, and those it has.
  std::size_t wanted_spares = 0;
  std::vector<spare> spares;
  /// It served a request since it last forked spares.
  bool served = false;
};

/// How long a server waits for quiet after a request before it forks spares.
constexpr std::chrono::milliseconds spare_delay{30};

/// Reports a process forked for request `h` to the node, with a pidfd: the
/// node watches and kills it by this descriptor, which names this very
/// process even once its pid is reused. `status` 1 says it was a spare.
void report_forked(const server& s, const fork_wire::header& h, pid_t pid,
                   std::int32_t status) {
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  fork_wire::send(s.fd, {fork_wire::kind::forked, h.serial, pid, status}, {},
                  pidfd);
  if (pidfd >= 0)
    ::close(pidfd);
}

/// Forks; in the new process, closes what is the server's alone and returns
/// 0, as `fork` does.
pid_t fork_child(const server& s) {
  // What the server buffered must not be written twice.
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(s.exit_signals);
    ::close(s.fd);
    for (auto& other : s.spares)
      ::close(other.fd);
    ::sigprocmask(SIG_SETMASK, &s.old_mask, nullptr);
  }
  return pid;
}

/// Forks for request `h`, which brought `passed`. Returns true in the
/// forked process.
bool fork_one(const server& s, const fork_wire::header& h,
              const std::string& text, std::vector<int>& passed) {
  pid_t pid = fork_child(s);
  if (pid == 0) {
    take_output(passed);
    set_environment(text);
    return true;
  }
  fork_wire::close_all(passed);
  if (pid < 0) {
    fork_wire::send(s.fd, {fork_wire::kind::fork_failed, h.serial, 0, 0},
                    std::strerror(errno));
    return false;
  }
  report_forked(s, h, pid, 0);
  return false;
}

/// In a spare: prepares, then waits for its request's environment. Returns
/// once it has it; exits if the server goes first.
void serve_as_spare(int fd, const std::function<void()>& prepare) {
  prepare();
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, -1) < 0 && errno != EINTR)
      ::_exit(0);
    fork_wire::header h;
    std::string text;
    std::vector<int> passed;
    auto got = fork_wire::receive(fd, h, text, passed);
    if (got == fork_wire::received::closed)
      ::_exit(0); // Its server, and with it its node, is gone.
    if (got == fork_wire::received::message &&
        h.what == fork_wire::kind::fork) {
      ::close(fd);
      take_output(passed);
      set_environment(text);
      return;
    }
    fork_wire::close_all(passed);
  }
}

/// Forks spares until the server has as many as it wants. Returns true in
/// a spare that has its request.
bool add_spares(server& s, const std::function<void()>& prepare) {
  while (s.spares.size() < s.wanted_spares) {
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0)
      return false;
    pid_t pid = fork_child(s);
    if (pid == 0) {
      ::close(pair[0]);
      serve_as_spare(pair[1], prepare);
      return true;
    }
    ::close(pair[1]);
    if (pid < 0) {
      ::close(pair[0]);
      return false;
    }
    s.spares.push_back(spare{pid, pair[0]});
  }
  return false;
}

/// Hands request `h`, with the descriptors it brought, to a spare, the one
/// forked first; false if none took it (a spare that ended is forgotten).
bool hand_to_spare(server& s, const fork_wire::header& h,
                   const std::string& text, const std::vector<int>& passed) {
  while (!s.spares.empty()) {
    auto next = s.spares.front();
    s.spares.erase(s.spares.begin());
    bool sent = fork_wire::send(next.fd, h, text, passed);
    ::close(next.fd);
    if (sent) {
      report_forked(s, h, next.pid, 1);
      return true;
    }
  }
  return false;
}

/// Tells the node of every forked process that ended, and forgets a spare
/// that ended before its request (the node never heard of it).
void report_exits(server& s) {
  int status = 0;
  pid_t pid = 0;
  while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) {
    auto spare = std::find_if(s.spares.begin(), s.spares.end(),
                              [&](const auto& x) { return x.pid == pid; });
    if (spare != s.spares.end()) {
      // It crashed or was killed while it prepared: the next might fare
      // alike, so requests are forked from here on.
      ::close(spare->fd);
      s.spares.erase(spare);
      s.wanted_spares = 0;
      continue;
    }
    fork_wire::send(s.fd, {fork_wire::kind::exited, 0, pid, status});
  }
}

} // namespace

bool started_as_fork_server() noexcept {
  const char* fd = std::getenv(fork_wire::server_variable);
  return fd != nullptr && *fd != '\0';
}

void serve_forks(const std::function<void()>& prepare) {
  server s;
  s.fd = std::atoi(std::getenv(fork_wire::server_variable));
  if (const char* n = std::getenv(fork_wire::spares_variable); n != nullptr)
    s.wanted_spares = static_cast<std::size_t>(std::max(0, std::atoi(n)));
  // The workers it forks are not fork servers.
  ::unsetenv(fork_wire::server_variable);
  ::unsetenv(fork_wire::spares_variable);
  if (std::getenv(fork_wire::bind_now_variable) != nullptr) {
    ::unsetenv(fork_wire::bind_now_variable);
    ::unsetenv("LD_BIND_NOW");
  }
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
    // Spares are forked while no request waits: one that came meanwhile is
    // served first, by a spare or a fork. After a request, not before the
    // node has been quiet for a while: preparing takes tens of
    // milliseconds of CPU, which the workers just handed out need to
    // register.
    pollfd waiting{s.fd, POLLIN, 0};
    auto quiet = s.served ? static_cast<int>(spare_delay.count()) : 0;
    s.served = false;
    if (::poll(&waiting, 1, quiet) == 0 && add_spares(s, prepare))
      return;
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
      report_exits(s);
    }
    if (fds[0].revents == 0)
      continue;
    fork_wire::header h;
    std::string text;
    std::vector<int> passed;
    auto got = fork_wire::receive(s.fd, h, text, passed);
    // The node is gone (or speaks nonsense): so is its server. Its
    // workers notice their node's end on their own.
    if (got == fork_wire::received::closed)
      ::_exit(0);
    if (got != fork_wire::received::message ||
        h.what != fork_wire::kind::fork) {
      fork_wire::close_all(passed);
      continue;
    }
    s.served = true;
    if (h.status != fork_wire::fresh_fork &&
        hand_to_spare(s, h, text, passed)) {
      fork_wire::close_all(passed);
      continue;
    }
    if (fork_one(s, h, text, passed))
      return;
  }
}

} // namespace prism::actors
