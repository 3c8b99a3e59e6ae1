#include "raylet/process_launcher.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <iterator>
#include <poll.h>
#include <spawn.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "prism/error.hpp"

extern char** environ;

namespace prism::actors {

worker_program this_program() {
  worker_program result;
  result.path = "/proc/self/exe";
  std::ifstream in{"/proc/self/cmdline", std::ios::binary};
  std::string all{std::istreambuf_iterator<char>{in}, {}};
  for (std::size_t start = 0; start < all.size();) {
    auto end = all.find('\0', start);
    if (end == std::string::npos)
      end = all.size();
    result.argv.push_back(all.substr(start, end - start));
    start = end + 1;
  }
  // What exec runs is the file behind the link now; resolve it here, in
  // this process, so the child runs this very binary.
  char buf[4096];
  auto n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n > 0) {
    buf[n] = '\0';
    std::string target{buf};
    // A binary replaced on disk reads "PATH (deleted)": keep the link, which
    // still opens the running image.
    if (target.find(" (deleted)") == std::string::npos)
      result.path = target;
  }
  if (result.argv.empty())
    result.argv.push_back(result.path);
  return result;
}

std::string describe_exit(int status) {
  if (WIFEXITED(status))
    return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    std::string name;
    if (const char* abbrev = ::sigabbrev_np(sig))
      name = std::string{" (SIG"} + abbrev + ")";
    return "was killed by signal " + std::to_string(sig) + name;
  }
  return "ended with status " + std::to_string(status);
}

namespace {

int open_pidfd(pid_t pid) {
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
}

/// posix_spawn's attributes and file actions, destroyed on scope exit.
struct spawn_setup {
  posix_spawnattr_t attr;
  posix_spawn_file_actions_t actions;

  spawn_setup() {
    ::posix_spawnattr_init(&attr);
    ::posix_spawn_file_actions_init(&actions);
    // A child starts clean of what this process set up for itself: signals
    // it blocks (a `--block` node waits for SIGTERM with sigwait), handlers
    // it ignores, and descriptors other than the standard three.
    sigset_t none;
    sigemptyset(&none);
    sigset_t all;
    sigfillset(&all);
    ::posix_spawnattr_setsigmask(&attr, &none);
    ::posix_spawnattr_setsigdefault(&attr, &all);
    ::posix_spawnattr_setflags(&attr,
                               POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    ::posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  }

  ~spawn_setup() {
    ::posix_spawn_file_actions_destroy(&actions);
    ::posix_spawnattr_destroy(&attr);
  }
};

/// The environment of this process with `extra` on top.
std::vector<std::string>
merged_environment(const std::vector<std::string>& extra) {
  auto name_of = [](const std::string& entry) {
    return entry.substr(0, entry.find('='));
  };
  std::vector<std::string> result;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string entry{*e};
    bool overridden = false;
    for (auto& x : extra)
      overridden = overridden || name_of(x) == name_of(entry);
    if (!overridden)
      result.push_back(std::move(entry));
  }
  result.insert(result.end(), extra.begin(), extra.end());
  return result;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> result;
  for (auto& s : strings)
    result.push_back(s.data());
  result.push_back(nullptr);
  return result;
}

} // namespace

process_launcher::process_launcher() {
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0)
    throw error(errc::internal,
                std::string{"cannot make an eventfd: "} + std::strerror(errno));
  reaper_ = std::thread{[this] { reap_loop(); }};
}

process_launcher::~process_launcher() {
  std::unordered_map<pid_t, child> left;
  {
    std::lock_guard<std::mutex> guard{mu_};
    stopping_ = true;
  }
  wake();
  reaper_.join();
  {
    std::lock_guard<std::mutex> guard{mu_};
    left.swap(children_);
  }
  for (auto& [pid, c] : left) {
    ::kill(pid, SIGKILL);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    ::close(c.pidfd);
  }
  ::close(wake_fd_);
}

pid_t process_launcher::launch(const worker_program& program,
                               const std::vector<std::string>& env,
                               exit_callback on_exit) {
  auto argv_strings = program.argv;
  if (argv_strings.empty())
    argv_strings.push_back(program.path);
  auto env_strings = merged_environment(env);
  auto argv = pointers(argv_strings);
  auto envp = pointers(env_strings);
  spawn_setup setup;
  pid_t pid = 0;
  if (int rc = ::posix_spawn(&pid, program.path.c_str(), &setup.actions,
                             &setup.attr, argv.data(), envp.data());
      rc != 0)
    throw error(errc::internal, "cannot start worker process '" + program.path +
                                    "': " + std::strerror(rc));
  int fd = open_pidfd(pid);
  if (fd < 0) {
    auto why = std::string{std::strerror(errno)};
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    throw error(errc::internal, "cannot watch worker process " +
                                    std::to_string(pid) + ": " + why);
  }
  {
    std::lock_guard<std::mutex> guard{mu_};
    children_.emplace(pid, child{fd, std::move(on_exit)});
  }
  wake();
  return pid;
}

bool process_launcher::kill(pid_t pid) {
  std::lock_guard<std::mutex> guard{mu_};
  // Only a child not yet reaped: its pid cannot have been reused.
  if (children_.count(pid) == 0)
    return false;
  return ::kill(pid, SIGKILL) == 0;
}

std::size_t process_launcher::running() const {
  std::lock_guard<std::mutex> guard{mu_};
  return children_.size();
}

void process_launcher::wake() {
  std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof(one));
}

void process_launcher::reap_loop() {
  std::vector<pollfd> fds;
  std::vector<pid_t> pids;
  for (;;) {
    fds.assign(1, pollfd{wake_fd_, POLLIN, 0});
    pids.assign(1, 0);
    {
      std::lock_guard<std::mutex> guard{mu_};
      if (stopping_)
        return;
      for (auto& [pid, c] : children_) {
        fds.push_back(pollfd{c.pidfd, POLLIN, 0});
        pids.push_back(pid);
      }
    }
    if (::poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR)
      return;
    if (fds[0].revents != 0) {
      std::uint64_t count = 0;
      [[maybe_unused]] auto n = ::read(wake_fd_, &count, sizeof(count));
    }
    for (std::size_t i = 1; i < fds.size(); ++i) {
      if (fds[i].revents == 0)
        continue;
      int status = 0;
      pid_t got = 0;
      do {
        got = ::waitpid(pids[i], &status, WNOHANG);
      } while (got < 0 && errno == EINTR);
      if (got != pids[i])
        continue;
      child c;
      {
        std::lock_guard<std::mutex> guard{mu_};
        auto it = children_.find(pids[i]);
        c = std::move(it->second);
        children_.erase(it);
      }
      ::close(c.pidfd);
      if (c.on_exit)
        c.on_exit(pids[i], describe_exit(status));
    }
  }
}

} // namespace prism::actors
