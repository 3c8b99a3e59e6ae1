#include "raylet/process_launcher.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <future>
#include <iterator>
#include <poll.h>
#include <spawn.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/log.hpp"
#include "common/output_source.hpp"
#include "common/processes.hpp"
#include "prism/error.hpp"
#include "worker/fork_wire.hpp"

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
  // this process, so the new process runs this very binary.
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

namespace {

int open_pidfd(pid_t pid) {
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
}

/// Where a worker process whose node reads its output finds the node's
/// stderr, for Prism's own log: by exec, and below a fork server (whose
/// descriptor 3 is its socket).
constexpr int worker_log_fd = 3;
constexpr int server_log_fd = 4;

/// posix_spawn's attributes and file actions, destroyed on scope exit.
struct spawn_setup {
  posix_spawnattr_t attr;
  posix_spawn_file_actions_t actions;
  /// Copies of the descriptors handed over, above any number they go to.
  std::vector<int> copies;

  /// `fds` are (descriptor here, its number in the new process) pairs to hand
  /// over; the new process's numbers start at 3, or are a standard
  /// descriptor given another (a standard descriptor of this process is
  /// handed over before it is replaced).
  explicit spawn_setup(std::vector<std::pair<int, int>> fds) {
    // A descriptor to hand over must not be a number another one goes to
    // first.
    for (auto& [from, to] : fds)
      if (from > STDERR_FILENO) {
        int copy = ::fcntl(from, F_DUPFD_CLOEXEC, 64);
        if (copy < 0) {
          auto why = std::string{std::strerror(errno)};
          for (int fd : copies)
            ::close(fd);
          throw error(errc::internal,
                      "cannot hand a descriptor to a worker process: " + why);
        }
        copies.push_back(copy);
        from = copy;
      }
    std::stable_partition(fds.begin(), fds.end(), [](const auto& fd) {
      return fd.first <= STDERR_FILENO;
    });
    ::posix_spawnattr_init(&attr);
    ::posix_spawn_file_actions_init(&actions);
    // A new process starts clean of what this process set up for itself:
    // signals it blocks (a `--block` node waits for SIGTERM with sigwait),
    // handlers it ignores, and descriptors other than the standard three.
    sigset_t none;
    sigemptyset(&none);
    sigset_t all;
    sigfillset(&all);
    ::posix_spawnattr_setsigmask(&attr, &none);
    ::posix_spawnattr_setsigdefault(&attr, &all);
    ::posix_spawnattr_setflags(&attr,
                               POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    int first_closed = 3;
    for (auto [from, to] : fds) {
      ::posix_spawn_file_actions_adddup2(&actions, from, to);
      first_closed = std::max(first_closed, to + 1);
    }
    ::posix_spawn_file_actions_addclosefrom_np(&actions, first_closed);
  }

  ~spawn_setup() {
    for (int fd : copies)
      ::close(fd);
    ::posix_spawn_file_actions_destroy(&actions);
    ::posix_spawnattr_destroy(&attr);
  }
};

/// What tells one program's fork server from another's.
std::string program_key(const worker_program& program) {
  std::string key = program.sha256.empty() ? program.path : program.sha256;
  for (auto& arg : program.argv)
    key += '\0' + arg;
  return key;
}

bool send_kill(int pidfd, pid_t pid) {
  if (pidfd >= 0)
    return ::syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0) == 0;
  return ::kill(pid, SIGKILL) == 0;
}

} // namespace

process_launcher::process_launcher(
    bool fork_servers, std::chrono::milliseconds fork_answer_timeout,
    std::vector<std::string> common_env, std::size_t spares,
    std::shared_ptr<worker_output> output)
    : fork_servers_{fork_servers}, fork_answer_timeout_{fork_answer_timeout},
      common_env_{std::move(common_env)}, spares_{spares}, output_{std::move(
                                                               output)} {
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0)
    throw error(errc::internal,
                std::string{"cannot make an eventfd: "} + std::strerror(errno));
  reaper_ = std::thread{[this] { reap_loop(); }};
}

process_launcher::~process_launcher() {
  std::unordered_map<pid_t, running_process> left;
  {
    std::lock_guard<std::mutex> guard{mu_};
    stopping_ = true;
  }
  wake();
  reaper_.join();
  {
    std::lock_guard<std::mutex> guard{mu_};
    left.swap(processes_);
    for (auto& [key, s] : servers_)
      if (s.fd >= 0)
        ::close(s.fd);
    servers_.clear();
    requests_.clear();
    answers_.clear();
    by_exec_.clear();
  }
  for (auto& [pid, c] : left) {
    send_kill(c.pidfd, pid);
    // A forked worker is its server's process: the server (killed too) or
    // init reaps it.
    if (c.server == 0) {
      int status = 0;
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
    }
    if (c.pidfd >= 0)
      ::close(c.pidfd);
  }
  ::close(wake_fd_);
}

pid_t process_launcher::spawn(const worker_program& program,
                              const std::vector<std::string>& env,
                              const std::vector<std::pair<int, int>>& fds) {
  auto argv_strings = program.argv;
  if (argv_strings.empty())
    argv_strings.push_back(program.path);
  auto env_strings = merged_environment(env);
  auto argv = c_strings(argv_strings);
  auto envp = c_strings(env_strings);
  spawn_setup setup{fds};
  pid_t pid = 0;
  if (int rc = ::posix_spawn(&pid, program.path.c_str(), &setup.actions,
                             &setup.attr, argv.data(), envp.data());
      rc != 0)
    throw error(errc::internal, "cannot start worker process '" + program.path +
                                    "': " + std::strerror(rc));
  return pid;
}

void process_launcher::launch(const worker_program& program,
                              const std::vector<std::string>& env,
                              exit_callback on_exit, start_callback on_started,
                              job_id job, bool fresh) {
  launch_request r{
      program, env,  std::move(on_exit), std::move(on_started), job,
      nullptr, fresh};
  if (output_) {
    try {
      r.pipes = output_->make_pipes();
    } catch (const std::exception& e) {
      // The process writes where this one does.
      component_logger("raylet")->warn(
          "the output of a worker process of job {} is not read: {}", job.value,
          e.what());
    }
  }
  if (fork_servers_) {
    std::lock_guard<std::mutex> guard{mu_};
    auto key = program_key(program);
    auto s = servers_.find(key);
    if (s == servers_.end()) {
      // This one starts by exec; the next ones fork once the server serves.
      if (refused_.count(key) == 0)
        start_server(key, program);
    } else {
      s->second.retiring = false;
      if (s->second.ready && ask_fork(s->second, r))
        return;
    }
  }
  start_by_exec(std::move(r));
}

process_launcher::launched
process_launcher::launch(const worker_program& program,
                         const std::vector<std::string>& env,
                         exit_callback on_exit) {
  auto answer = std::make_shared<std::promise<launched>>();
  auto result = answer->get_future();
  launch(program, env, std::move(on_exit),
         [answer](const launched& l) { answer->set_value(l); });
  auto l = result.get();
  if (!l.error.empty())
    throw error(errc::internal, l.error);
  return l;
}

void process_launcher::watch_output(
    const std::shared_ptr<worker_output::pipes>& pipes, pid_t pid,
    const std::string& name, job_id job) {
  if (!pipes || !output_)
    return;
  pipes->close_write_ends();
  output_->watch(*pipes, pid, name, job);
}

void process_launcher::start_by_exec(launch_request r) {
  launched l;
  int fd = -1;
  try {
    auto env = common_env_;
    env.insert(env.end(), r.env.begin(), r.env.end());
    std::vector<std::pair<int, int>> fds;
    if (r.pipes) {
      fds = {{STDERR_FILENO, worker_log_fd},
             {r.pipes->out_write, STDOUT_FILENO},
             {r.pipes->err_write, STDERR_FILENO}};
      env.push_back(std::string{output_log_fd_variable} + "=" +
                    std::to_string(worker_log_fd));
    }
    l.pid = spawn(r.program, env, fds);
    fd = open_pidfd(l.pid);
    if (fd < 0) {
      auto why = std::string{std::strerror(errno)};
      ::kill(l.pid, SIGKILL);
      ::waitpid(l.pid, nullptr, 0);
      throw error(errc::internal, "cannot watch worker process " +
                                      std::to_string(l.pid) + ": " + why);
    }
  } catch (const std::exception& e) {
    l = launched{0, false, false, e.what()};
  }
  if (fd >= 0)
    watch_output(r.pipes, l.pid, "worker-" + std::to_string(r.job.value),
                 r.job);
  r.pipes.reset();
  {
    std::lock_guard<std::mutex> guard{mu_};
    if (fd >= 0)
      processes_.emplace(l.pid, running_process{fd, std::move(r.on_exit)});
    // Answered before the reaper can see this process end: the answer goes
    // out ahead of the poll that would.
    answers_.push_back([on_started = std::move(r.on_started), l] {
      if (on_started)
        on_started(l);
    });
  }
  wake();
}

void process_launcher::start_server(const std::string& key,
                                    const worker_program& program) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) {
    refused_[key] = std::string{"no socket pair: "} + std::strerror(errno);
    return;
  }
  constexpr int server_fd = 3;
  pid_t pid = 0;
  std::shared_ptr<worker_output::pipes> pipes;
  try {
    auto env = common_env_;
    env.push_back(std::string{fork_wire::server_variable} + "=" +
                  std::to_string(server_fd));
    env.push_back(std::string{fork_wire::spares_variable} + "=" +
                  std::to_string(spares_));
    // Unless this node's user set it, for all of their processes.
    if (std::getenv("LD_BIND_NOW") == nullptr)
      env.insert(env.end(), {"LD_BIND_NOW=1",
                             std::string{fork_wire::bind_now_variable} + "=1"});
    std::vector<std::pair<int, int>> fds{{pair[1], server_fd}};
    if (output_) {
      // What the program writes before `prism::init` goes to files of its
      // server; each worker it forks gets pipes of its own.
      pipes = output_->make_pipes();
      fds.insert(fds.end(), {{STDERR_FILENO, server_log_fd},
                             {pipes->out_write, STDOUT_FILENO},
                             {pipes->err_write, STDERR_FILENO}});
      env.push_back(std::string{output_log_fd_variable} + "=" +
                    std::to_string(server_log_fd));
    }
    pid = spawn(program, env, fds);
  } catch (const std::exception& e) {
    refused_[key] = e.what();
  }
  ::close(pair[1]);
  if (pid > 0)
    watch_output(pipes, pid, "fork-server", job_id{});
  int pidfd = pid > 0 ? open_pidfd(pid) : -1;
  if (pidfd < 0) {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
      refused_[key] = "cannot watch its process";
    }
    ::close(pair[0]);
    return;
  }
  processes_.emplace(pid, running_process{pidfd, nullptr, 0, false, true});
  servers_.emplace(key, fork_server{pid, pair[0]});
  wake();
}

bool process_launcher::ask_fork(fork_server& server, launch_request& r) {
  std::string entries;
  for (auto& e : r.env)
    entries += e + '\0';
  auto serial = ++next_request_;
  std::vector<int> pass;
  if (r.pipes)
    pass = {r.pipes->out_write, r.pipes->err_write};
  auto status = r.fresh ? fork_wire::fresh_fork : 0;
  if (!fork_wire::send(server.fd, {fork_wire::kind::fork, serial, 0, status},
                       entries, pass))
    return false;
  requests_.emplace(serial, fork_request{server.pid,
                                         std::chrono::steady_clock::now() +
                                             fork_answer_timeout_,
                                         std::move(r)});
  // The reaper's poll learns of the new deadline.
  wake();
  return true;
}

void process_launcher::read_server(const std::string& key, reports& out) {
  auto& s = servers_.at(key);
  for (;;) {
    fork_wire::header h;
    std::string text;
    std::vector<int> fds;
    auto got = fork_wire::receive(s.fd, h, text, fds);
    // The pidfd of a forked process rides along.
    int passed = -1;
    if (fds.size() == 1)
      passed = fds.front();
    else
      fork_wire::close_all(fds);
    if (got == fork_wire::received::none)
      return;
    if (got == fork_wire::received::closed) {
      if (!s.ready && refused_.count(key) == 0)
        refused_[key] = "its fork server ended before it served";
      close_server(key);
      return;
    }
    switch (h.what) {
    case fork_wire::kind::ready:
      s.ready = true;
      break;
    case fork_wire::kind::refused:
      refused_[key] = text;
      component_logger("raylet")->info(
          "worker processes of {} start by exec: its fork server cannot "
          "serve: {}",
          key.substr(0, key.find('\0')), text);
      break;
    case fork_wire::kind::forked:
    case fork_wire::kind::fork_failed: {
      auto r = requests_.find(h.serial);
      if (r == requests_.end() || h.what == fork_wire::kind::fork_failed) {
        // Answered too late (its launch started a worker by exec), or not
        // forked: a failed fork starts its worker by exec now.
        if (h.pid > 0)
          send_kill(passed, h.pid);
        if (passed >= 0)
          ::close(passed);
        if (r != requests_.end()) {
          by_exec_.push_back(std::move(r->second.launch));
          requests_.erase(r);
        }
        break;
      }
      // Known before the server's report of its end can come.
      auto& launch = r->second.launch;
      watch_output(launch.pipes, h.pid,
                   "worker-" + std::to_string(launch.job.value), launch.job);
      launch.pipes.reset();
      processes_.emplace(
          h.pid, running_process{passed, std::move(launch.on_exit), s.pid});
      out.push_back([on_started = std::move(launch.on_started), pid = h.pid,
                     spare = h.status == 1] {
        if (on_started)
          on_started(launched{pid, true, spare, {}});
      });
      requests_.erase(r);
      break;
    }
    case fork_wire::kind::exited: {
      auto c = processes_.find(h.pid);
      if (c == processes_.end() || c->second.server != s.pid)
        break;
      if (c->second.pidfd >= 0)
        ::close(c->second.pidfd);
      out.push_back([on_exit = std::move(c->second.on_exit), pid = h.pid,
                     how = describe_exit(h.status)] {
        if (on_exit)
          on_exit(pid, how);
      });
      processes_.erase(c);
      close_if_retired(s.pid);
      // `s` may be gone now.
      if (servers_.count(key) == 0)
        return;
      break;
    }
    default:
      if (passed >= 0)
        ::close(passed);
      break;
    }
  }
}

void process_launcher::close_server(const std::string& key) {
  auto s = servers_.find(key);
  if (s == servers_.end())
    return;
  // The server ends when its socket closes; its workers run on, their ends
  // now seen through their pidfds alone.
  ::close(s->second.fd);
  for (auto& [pid, c] : processes_)
    if (c.server == s->second.pid)
      c.orphaned = true;
  // Its launches still waiting start by exec, each with pipes of its own:
  // the server may have forked for the request all the same, and that
  // process, which nothing here can reach now, holds the old ones.
  for (auto r = requests_.begin(); r != requests_.end();) {
    if (r->second.server == s->second.pid) {
      auto& launch = r->second.launch;
      if (launch.pipes) {
        launch.pipes.reset();
        try {
          launch.pipes = output_->make_pipes();
        } catch (const std::exception&) {
          // It writes where this process does.
        }
      }
      by_exec_.push_back(std::move(launch));
      r = requests_.erase(r);
    } else {
      ++r;
    }
  }
  servers_.erase(s);
  wake();
}

void process_launcher::close_if_retired(pid_t server) {
  for (auto& [key, s] : servers_) {
    if (s.pid != server)
      continue;
    if (!s.retiring)
      return;
    for (auto& [pid, c] : processes_)
      if (c.server == server)
        return;
    for (auto& [serial, r] : requests_)
      if (r.server == server)
        return;
    close_server(key);
    return;
  }
}

void process_launcher::give_up_late_servers(
    std::chrono::steady_clock::time_point now) {
  std::vector<pid_t> late;
  for (auto& [serial, r] : requests_)
    if (r.deadline <= now)
      late.push_back(r.server);
  // A server that does not answer is given up; a late answer's process is
  // killed (see read_server).
  for (auto server : late)
    for (auto& [key, s] : servers_)
      if (s.pid == server) {
        refused_[key] = "its fork server did not answer a request within " +
                        std::to_string(fork_answer_timeout_.count()) + " ms";
        component_logger("raylet")->warn(
            "worker processes of {} start by exec: {}",
            key.substr(0, key.find('\0')), refused_[key]);
        close_server(key);
        break;
      }
}

int process_launcher::poll_timeout(
    std::chrono::steady_clock::time_point now) const {
  if (requests_.empty())
    return -1;
  auto first = requests_.begin()->second.deadline;
  for (auto& [serial, r] : requests_)
    first = std::min(first, r.deadline);
  if (first <= now)
    return 0;
  auto left = std::chrono::ceil<std::chrono::milliseconds>(first - now);
  return static_cast<int>(left.count());
}

void process_launcher::forget(const worker_program& program) {
  std::lock_guard<std::mutex> guard{mu_};
  auto key = program_key(program);
  refused_.erase(key);
  auto s = servers_.find(key);
  if (s == servers_.end())
    return;
  s->second.retiring = true;
  close_if_retired(s->second.pid);
}

bool process_launcher::kill(pid_t pid) {
  std::lock_guard<std::mutex> guard{mu_};
  // Only a worker not yet reaped: its pidfd names this very process.
  auto c = processes_.find(pid);
  if (c == processes_.end() || c->second.is_server)
    return false;
  return send_kill(c->second.pidfd, pid);
}

std::size_t process_launcher::running() const {
  std::lock_guard<std::mutex> guard{mu_};
  return static_cast<std::size_t>(
      std::count_if(processes_.begin(), processes_.end(),
                    [](const auto& c) { return !c.second.is_server; }));
}

void process_launcher::wake() {
  std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof(one));
}

void process_launcher::reap(pid_t pid, reports& out) {
  auto c = processes_.find(pid);
  if (c == processes_.end())
    return;
  std::string how;
  if (c->second.server != 0) {
    how = "ended (how is not known: the fork server it came from "
          "ended first)";
  } else {
    int status = 0;
    pid_t got = 0;
    do {
      got = ::waitpid(pid, &status, WNOHANG);
    } while (got < 0 && errno == EINTR);
    if (got != pid)
      return;
    how = describe_exit(status);
  }
  ::close(c->second.pidfd);
  if (!c->second.is_server)
    out.push_back([on_exit = std::move(c->second.on_exit), pid, how] {
      if (on_exit)
        on_exit(pid, how);
    });
  auto server = c->second.server;
  processes_.erase(c);
  if (server != 0)
    close_if_retired(server);
}

void process_launcher::reap_loop() {
  // What the poll set's entries are: the wake-up, a process's pidfd, or a
  // fork server's socket.
  struct watched {
    pid_t pid = 0;
    std::string server;
  };
  std::vector<pollfd> fds;
  std::vector<watched> what;
  reports out;
  std::vector<launch_request> by_exec;
  for (;;) {
    fds.assign(1, pollfd{wake_fd_, POLLIN, 0});
    what.assign(1, watched{});
    int timeout = -1;
    {
      std::lock_guard<std::mutex> guard{mu_};
      if (stopping_)
        return;
      give_up_late_servers(std::chrono::steady_clock::now());
      // Every process polled below was answered first: its launch hears of
      // it before anybody hears of its end.
      out.swap(answers_);
      by_exec.swap(by_exec_);
      for (auto& [pid, c] : processes_)
        if ((c.server == 0 || c.orphaned) && c.pidfd >= 0) {
          fds.push_back(pollfd{c.pidfd, POLLIN, 0});
          what.push_back(watched{pid, {}});
        }
      for (auto& [key, s] : servers_) {
        fds.push_back(pollfd{s.fd, POLLIN, 0});
        what.push_back(watched{0, key});
      }
      timeout = poll_timeout(std::chrono::steady_clock::now());
    }
    for (auto& call : out)
      call();
    out.clear();
    if (!by_exec.empty()) {
      // Their answers come on the next round, ahead of its poll.
      for (auto& r : by_exec)
        start_by_exec(std::move(r));
      by_exec.clear();
      continue;
    }
    if (::poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR)
      return;
    if (fds[0].revents != 0) {
      std::uint64_t count = 0;
      [[maybe_unused]] auto n = ::read(wake_fd_, &count, sizeof(count));
    }
    {
      std::lock_guard<std::mutex> guard{mu_};
      for (std::size_t i = 1; i < fds.size(); ++i) {
        if (fds[i].revents == 0)
          continue;
        if (!what[i].server.empty()) {
          if (servers_.count(what[i].server) > 0)
            read_server(what[i].server, out);
          continue;
        }
        reap(what[i].pid, out);
      }
    }
    for (auto& call : out)
      call();
    out.clear();
  }
}

} // namespace prism::actors
