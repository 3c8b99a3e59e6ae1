#include "prism_command.hpp"

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace prism::cluster_test {

namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path& p) {
  std::ifstream in{p};
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The text between `start` and the next `end` in `text`; "" if none.
std::string after(const std::string& text, const std::string& start,
                  const std::string& end) {
  auto i = text.find(start);
  if (i == std::string::npos)
    return "";
  i += start.size();
  auto j = text.find(end, i);
  return j == std::string::npos ? "" : text.substr(i, j - i);
}

int decode(int status) {
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  if (WIFSIGNALED(status))
    return 128 + WTERMSIG(status);
  return -1;
}

} // namespace

bool eventually(std::chrono::milliseconds timeout,
                const std::function<bool()>& check) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (check())
      return true;
    if (std::chrono::steady_clock::now() >= deadline)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds{50});
  }
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

prism_session::prism_session() {
  auto pattern =
      (fs::temp_directory_path() / "prism-session-test-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr)
    throw std::runtime_error("cannot make a session directory");
  dir_ = pattern;
}

prism_session::~prism_session() {
  run({"stop", "--grace-ms", "5000"});
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

pid_t prism_session::spawn(const std::vector<std::string>& args) {
  auto n = counter_++;
  auto out = (fs::path{dir_} / ("cmd-" + std::to_string(n) + ".out")).string();
  auto err = (fs::path{dir_} / ("cmd-" + std::to_string(n) + ".err")).string();
  std::vector<std::string> argv_s{PRISM_TOOL_PATH};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid < 0)
    throw std::runtime_error("cannot fork");
  if (pid == 0) {
    ::setenv("PRISM_SESSION_DIR", dir_.c_str(), 1);
    // CAF 0.17's BASP broker spawns a helper actor for every node it learns
    // of through another node, and one learned while the process shuts
    // down is never stopped: LeakSanitizer reports that cycle at exit
    // (caf::io::basp_broker::learned_new_node). The `prism` processes run
    // with every other sanitizer check, and their logs are checked for
    // reports; leaks are checked in the test process and the other suites.
    std::string asan = "detect_leaks=0";
    if (const char* old = std::getenv("ASAN_OPTIONS"); old && *old)
      asan = std::string{old} + ":" + asan;
    ::setenv("ASAN_OPTIONS", asan.c_str(), 1);
    ::unsetenv("PRISM_ADDRESS");
    int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(o, STDOUT_FILENO);
    ::dup2(e, STDERR_FILENO);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

int prism_session::await(pid_t pid, std::chrono::seconds timeout) {
  int status = 0;
  bool ended = eventually(
      timeout, [&] { return ::waitpid(pid, &status, WNOHANG) == pid; });
  if (!ended) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    return -1;
  }
  return decode(status);
}

command_result prism_session::run(const std::vector<std::string>& args,
                                  std::chrono::seconds timeout) {
  auto n = counter_;
  auto pid = spawn(args);
  command_result r;
  r.status = await(pid, timeout);
  r.out = read_file(fs::path{dir_} / ("cmd-" + std::to_string(n) + ".out"));
  r.err = read_file(fs::path{dir_} / ("cmd-" + std::to_string(n) + ".err"));
  return r;
}

std::string prism_session::start_head(const std::vector<std::string>& extra) {
  std::vector<std::string> args{"start", "--head"};
  if (std::find(extra.begin(), extra.end(), "--port") == extra.end())
    args.insert(args.end(), {"--port", "0"});
  args.insert(args.end(), extra.begin(), extra.end());
  auto r = run(args);
  auto address = after(r.out, "PRISM_ADDRESS=", "\n");
  if (r.status != 0 || address.empty())
    throw std::runtime_error("the head did not start: status " +
                             std::to_string(r.status) + ": " + r.out + r.err);
  return address;
}

pid_t prism_session::start_node(const std::string& address,
                                const std::vector<std::string>& extra) {
  std::vector<std::string> args{"start", "--address", address};
  args.insert(args.end(), extra.begin(), extra.end());
  auto r = run(args);
  auto pid = after(r.out, "(pid ", ")");
  if (r.status != 0 || pid.empty())
    throw std::runtime_error("the node did not start: status " +
                             std::to_string(r.status) + ": " + r.out + r.err);
  return static_cast<pid_t>(std::stol(pid));
}

pid_t prism_session::pid_of(const std::string& name) const {
  auto p = fs::path{dir_} / (name + ".pid");
  std::error_code ec;
  if (!fs::exists(p, ec))
    return 0;
  return static_cast<pid_t>(std::atol(read_file(p).c_str()));
}

std::string prism_session::log_of(const std::string& name) const {
  return read_file(fs::path{dir_} / (name + ".log"));
}

std::string prism_session::sanitizer_reports() const {
  static const char* const bad[] = {
      "ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
      "runtime error:", "terminate called", "Segmentation fault"};
  std::string result;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator{dir_, ec}) {
    if (e.path().extension() != ".log" && e.path().extension() != ".err")
      continue;
    auto text = read_file(e.path());
    if (std::any_of(std::begin(bad), std::end(bad),
                    [&](const char* b) { return contains(text, b); }))
      result += e.path().filename().string() + ":\n" + text + "\n";
  }
  return result;
}

} // namespace prism::cluster_test
