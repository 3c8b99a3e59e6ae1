// prism::testing::process_cluster: real head and node processes, started
// with the `prism` command in a session directory of their own.

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <spawn.h>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <unordered_map>

#include "prism/api.hpp"
#include "prism/error.hpp"
#include "prism/testing.hpp"

namespace prism::testing {

namespace fs = std::filesystem;

namespace {

/// The value `options` (ASAN_OPTIONS) gives `name`: its last setting, or ""
/// if none.
std::string asan_option(std::string_view options, std::string_view name) {
  std::string value;
  while (!options.empty()) {
    auto end = options.find(':');
    auto item = options.substr(0, end);
    if (item.size() > name.size() && item.substr(0, name.size()) == name &&
        item[name.size()] == '=')
      value = item.substr(name.size() + 1);
    options = end == std::string_view::npos ? std::string_view{}
                                            : options.substr(end + 1);
  }
  return value;
}

std::string read_file(const fs::path& p) {
  std::ifstream in{p};
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The text between `start` and the next `end` in `text`; "" if none.
std::string between(const std::string& text, const std::string& start,
                    const std::string& end) {
  auto i = text.find(start);
  if (i == std::string::npos)
    return "";
  i += start.size();
  auto j = text.find(end, i);
  return j == std::string::npos ? "" : text.substr(i, j - i);
}

/// The URL a `prism start` banner names after `label` ("  metrics:  URL").
std::string url_in(const std::string& banner, const char* label) {
  auto url = between(banner, label, "\n");
  auto first = url.find_first_not_of(' ');
  return first == std::string::npos ? std::string{} : url.substr(first);
}

std::string metrics_in(const std::string& banner) {
  return url_in(banner, "metrics:");
}

int decode(int status) {
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  if (WIFSIGNALED(status))
    return 128 + WTERMSIG(status);
  return -1;
}

std::string command_of(const std::string& given) {
  if (!given.empty())
    return given;
  if (const char* env = std::getenv("PRISM_COMMAND"); env && *env)
    return env;
  return "prism";
}

/// `flags` with `--num-cpus cpus` in front unless they name it.
std::vector<std::string> with_cpus(std::vector<std::string> flags,
                                   double cpus) {
  if (std::find(flags.begin(), flags.end(), "--num-cpus") != flags.end())
    return flags;
  std::ostringstream out;
  out << cpus;
  flags.insert(flags.begin(), {"--num-cpus", out.str()});
  return flags;
}

/// The last lines of the newest log in `dir` whose name starts with
/// `prefix`, for the message of a start that failed: the session goes with
/// the test.
std::string newest_log_tail(const std::string& dir, const std::string& prefix) {
  std::error_code ec;
  fs::path newest;
  fs::file_time_type newest_time{};
  for (auto& entry : fs::directory_iterator{dir, ec}) {
    auto name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0 || entry.path().extension() != ".log")
      continue;
    auto t = entry.last_write_time(ec);
    if (!ec && (newest.empty() || t > newest_time)) {
      newest = entry.path();
      newest_time = t;
    }
  }
  if (newest.empty())
    return "no " + prefix + "*.log in the session";
  auto text = read_file(newest);
  // From the start of the 20th line from the end.
  std::size_t from = text.size();
  for (int lines = 0; lines < 21 && from != 0; ++lines) {
    auto nl = text.rfind('\n', from - 1);
    from = nl == std::string::npos ? 0 : nl;
  }
  return newest.filename().string() + ":\n" + text.substr(from);
}

/// Waits until `pid` is no longer a running process: gone, or a zombie
/// none of whose threads still exits. A killed process's main thread can be
/// a zombie while its other threads still tear it down, and its files (a
/// store's lock among them) are closed only when the last of them is gone.
void await_death(pid_t pid) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds{10};
  auto status_path = "/proc/" + std::to_string(pid) + "/status";
  while (std::chrono::steady_clock::now() < deadline) {
    if (::kill(pid, 0) != 0)
      return;
    auto status = read_file(status_path);
    if (status.find("\nState:\tZ") != std::string::npos &&
        status.find("\nThreads:\t1\n") != std::string::npos)
      return;
    std::this_thread::sleep_for(std::chrono::milliseconds{5});
  }
}

} // namespace

struct process_cluster::impl {
  options opts;
  std::string command;
  std::string dir;
  std::string address;
  std::string storage;
  std::atomic<int> counter{0};
  std::mutex mu;
  /// Where each started command's output goes, by pid: "<base>.out" and
  /// "<base>.err".
  std::unordered_map<int, std::string> outputs;
  /// Node pids by index; 0 is the head's process.
  std::vector<pid_t> nodes;
  /// Each started process's metrics URL, by pid, as its banner said.
  std::unordered_map<int, std::string> metrics;
  /// The head's, until its pid is known.
  std::string head_metrics;
  /// The head's status page, as its banner said.
  std::string status_page;
  bool attached = false;
};

process_cluster::process_cluster(options opts) : impl_(new impl) {
  impl_->opts = std::move(opts);
  impl_->command = command_of(impl_->opts.command);
  auto pattern =
      (fs::temp_directory_path() / "prism-process-cluster-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr)
    throw error(errc::internal, "cannot make a session directory");
  impl_->dir = pattern;
  impl_->storage = impl_->dir + "/gcs";
  if (!impl_->opts.head)
    return;
  try {
    auto flags = impl_->opts.flags;
    flags.insert(flags.end(), {"--storage", impl_->storage});
    impl_->address = start_head(flags);
    impl_->nodes.push_back(pid_of("head"));
    impl_->metrics[impl_->nodes[0]] = impl_->head_metrics;
    for (std::size_t i = 0; i < impl_->opts.nodes; ++i)
      add_node();
    if (impl_->opts.attach) {
      auto cfg = impl_->opts.driver;
      cfg.address = impl_->address;
      // The driver presents the token the head made, as one on its host
      // would (this process's session directory is another).
      if (cfg.auth_token.empty() && cfg.auth_token_file.empty() &&
          fs::exists(impl_->dir + "/token"))
        cfg.auth_token_file = impl_->dir + "/token";
      init(cfg);
      impl_->attached = true;
    }
  } catch (...) {
    run({"stop", "--grace-ms", "5000"});
    std::error_code ec;
    fs::remove_all(impl_->dir, ec);
    throw;
  }
}

process_cluster::~process_cluster() {
  if (impl_->attached)
    shutdown();
  run({"stop", "--grace-ms", "5000"});
  // Kept for a look at the logs after a failure.
  if (const char* keep = std::getenv("PRISM_KEEP_SESSION"); keep && *keep) {
    std::fprintf(stderr, "process_cluster: session kept in %s\n",
                 impl_->dir.c_str());
    return;
  }
  std::error_code ec;
  fs::remove_all(impl_->dir, ec);
}

const std::string& process_cluster::address() const {
  return impl_->address;
}

const std::string& process_cluster::session_dir() const {
  return impl_->dir;
}

int process_cluster::spawn(const std::vector<std::string>& args) {
  auto n = impl_->counter++;
  auto base = (fs::path{impl_->dir} / ("cmd-" + std::to_string(n))).string();
  // Everything the command needs is made here: the calling process runs
  // threads (an attached driver's, a test's), and a fork's copy of it must
  // not touch the heap (a lock another thread held at the fork is never
  // released there), so the command starts with posix_spawn.
  std::vector<std::string> argv_s{impl_->command};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  // Under scripts/leak-check.py (LeakSanitizer on, every report to a file
  // of its own) the `prism` processes report where the caller does, and
  // their leaks are judged with the caller's; a report of any other kind
  // fails the run there too. Otherwise they run without LeakSanitizer and
  // report to their own stderr (a log of the session), where
  // `sanitizer_reports` looks.
  std::string caller_asan;
  std::vector<std::string> env_s;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view entry{*e};
    auto name = entry.substr(0, entry.find('='));
    if (name == "ASAN_OPTIONS")
      caller_asan = entry.substr(name.size() + 1);
    else if (name != "PRISM_SESSION_DIR" && name != "PRISM_ADDRESS")
      env_s.emplace_back(entry);
  }
  auto caller_log = asan_option(caller_asan, "log_path");
  bool leak_checked = asan_option(caller_asan, "detect_leaks") == "1" &&
                      !caller_log.empty() && caller_log != "stderr";
  auto asan = caller_asan;
  if (!leak_checked)
    asan +=
        std::string{asan.empty() ? "" : ":"} + "detect_leaks=0:log_path=stderr";
  env_s.push_back("PRISM_SESSION_DIR=" + impl_->dir);
  env_s.push_back("ASAN_OPTIONS=" + asan);
  std::vector<char*> envp;
  for (auto& e : env_s)
    envp.push_back(e.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  auto out = base + ".out";
  auto err = base + ".err";
  ::posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ::posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  int rc = ::posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(),
                          envp.data());
  ::posix_spawn_file_actions_destroy(&actions);
  if (rc != 0)
    throw error(errc::internal,
                "cannot start " + impl_->command + ": " + std::strerror(rc));
  std::lock_guard<std::mutex> guard{impl_->mu};
  impl_->outputs[pid] = base;
  return pid;
}

int process_cluster::await(int pid, std::chrono::seconds timeout) {
  int status = 0;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (::waitpid(pid, &status, WNOHANG) != pid) {
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds{10});
  }
  return decode(status);
}

process_cluster::command_result
process_cluster::run(const std::vector<std::string>& args,
                     std::chrono::seconds timeout) {
  auto pid = spawn(args);
  command_result r;
  r.status = await(pid, timeout);
  std::string base;
  {
    std::lock_guard<std::mutex> guard{impl_->mu};
    base = impl_->outputs[pid];
    impl_->outputs.erase(pid);
  }
  r.out = read_file(base + ".out");
  r.err = read_file(base + ".err");
  return r;
}

std::string process_cluster::output_of(int pid) const {
  std::string base;
  {
    std::lock_guard<std::mutex> guard{impl_->mu};
    auto i = impl_->outputs.find(pid);
    if (i == impl_->outputs.end())
      return {};
    base = i->second;
  }
  return read_file(base + ".out");
}

std::string process_cluster::start_head(const std::vector<std::string>& flags) {
  std::vector<std::string> args{"start", "--head"};
  if (std::find(flags.begin(), flags.end(), "--port") == flags.end())
    args.insert(args.end(), {"--port", "0"});
  // Tests run side by side: never on the default port.
  if (std::find(flags.begin(), flags.end(), "--dashboard-port") == flags.end())
    args.insert(args.end(), {"--dashboard-port", "0"});
  auto all = with_cpus(flags, impl_->opts.cpus);
  args.insert(args.end(), all.begin(), all.end());
  auto r = run(args);
  auto address = between(r.out, "PRISM_ADDRESS=", "\n");
  impl_->head_metrics = metrics_in(r.out);
  impl_->status_page = url_in(r.out, "status page:");
  if (r.status != 0 || address.empty())
    throw error(errc::internal, "the head did not start: status " +
                                    std::to_string(r.status) + ": " + r.out +
                                    r.err + "; its log, " +
                                    newest_log_tail(impl_->dir, "head"));
  return address;
}

int process_cluster::start_node(const std::string& address,
                                const std::vector<std::string>& flags) {
  std::vector<std::string> args{"start", "--address", address};
  auto all = with_cpus(flags, impl_->opts.cpus);
  args.insert(args.end(), all.begin(), all.end());
  auto r = run(args);
  auto pid = between(r.out, "(pid ", ")");
  if (r.status != 0 || pid.empty())
    throw error(errc::internal, "the node did not start: status " +
                                    std::to_string(r.status) + ": " + r.out +
                                    r.err + "; the newest node log, " +
                                    newest_log_tail(impl_->dir, "node-"));
  auto result = static_cast<pid_t>(std::stol(pid));
  impl_->metrics[result] = metrics_in(r.out);
  return result;
}

std::size_t process_cluster::add_node(const std::vector<std::string>& flags) {
  auto all = impl_->opts.flags;
  all.insert(all.end(), flags.begin(), flags.end());
  impl_->nodes.push_back(start_node(impl_->address, all));
  return impl_->nodes.size() - 1;
}

std::string process_cluster::status_page_url() const {
  return impl_->status_page;
}

std::string process_cluster::metrics_url(std::size_t i) const {
  auto i_pid = impl_->metrics.find(node_pid(i));
  return i_pid == impl_->metrics.end() ? std::string{} : i_pid->second;
}

int process_cluster::node_pid(std::size_t i) const {
  if (i >= impl_->nodes.size())
    throw invalid_argument_error("process_cluster has no node " +
                                 std::to_string(i));
  return impl_->nodes[i];
}

namespace {

void signal_node(const process_cluster& c, std::size_t i, int sig) {
  if (i == 0)
    throw invalid_argument_error("node 0 is the head's process: use "
                                 "restart_head");
  ::kill(c.node_pid(i), sig);
}

} // namespace

void process_cluster::kill_node(std::size_t i) {
  signal_node(*this, i, SIGKILL);
  await_death(node_pid(i));
}

void process_cluster::freeze_node(std::size_t i) {
  signal_node(*this, i, SIGSTOP);
}

void process_cluster::resume_node(std::size_t i) {
  signal_node(*this, i, SIGCONT);
}

void process_cluster::restart_head() {
  auto head = node_pid(0);
  ::kill(head, SIGKILL);
  await_death(head);
  auto port = impl_->address.substr(impl_->address.rfind(':') + 1);
  auto flags = impl_->opts.flags;
  flags.insert(flags.end(), {"--storage", impl_->storage, "--port", port});
  start_head(flags);
  impl_->nodes[0] = pid_of("head");
  impl_->metrics[impl_->nodes[0]] = impl_->head_metrics;
}

int process_cluster::pid_of(const std::string& name) const {
  auto p = fs::path{impl_->dir} / (name + ".pid");
  std::error_code ec;
  if (!fs::exists(p, ec))
    return 0;
  return static_cast<pid_t>(std::atol(read_file(p).c_str()));
}

std::string process_cluster::log_of(const std::string& name) const {
  return read_file(fs::path{impl_->dir} / (name + ".log"));
}

std::string process_cluster::sanitizer_reports() const {
  static const char* const bad[] = {
      "ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
      "runtime error:", "terminate called", "Segmentation fault"};
  std::string result;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator{impl_->dir, ec}) {
    if (e.path().extension() != ".log" && e.path().extension() != ".err")
      continue;
    auto text = read_file(e.path());
    if (std::any_of(std::begin(bad), std::end(bad), [&](const char* b) {
          return text.find(b) != std::string::npos;
        }))
      result += e.path().filename().string() + ":\n" + text + "\n";
  }
  return result;
}

} // namespace prism::testing
