#include "autoscaler/local_provider.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

namespace prism::actors {

namespace {

/// A number with no trailing zeros, as `--num-cpus` and JSON read it.
std::string number(double x) {
  std::ostringstream out;
  out << x;
  return out.str();
}

std::string instance_prefix() {
  // Ids of one head's provider; another head's (after a restart) differ.
  std::random_device rd;
  std::ostringstream out;
  out << "local-" << std::hex << (rd() & 0xffffff) << "-";
  return out.str();
}

} // namespace

local_process_provider::local_process_provider(local_provider_settings settings)
    : settings_(std::move(settings)), prefix_(instance_prefix()) {
  std::lock_guard<std::mutex> guard{mu_};
  inherit_running();
}

namespace {

/// The NUL-separated strings of /proc/<pid>/<what>.
std::vector<std::string> proc_strings(const std::string& pid,
                                      const char* what) {
  std::ifstream in{"/proc/" + pid + "/" + what, std::ios::binary};
  std::vector<std::string> out;
  std::string item;
  while (std::getline(in, item, '\0'))
    out.push_back(item);
  return out;
}

/// Whether `pid` runs and is not a zombie.
bool running(pid_t pid) {
  std::ifstream in{"/proc/" + std::to_string(pid) + "/stat"};
  std::string text;
  std::getline(in, text);
  auto close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() &&
         text[close + 2] != 'Z';
}

} // namespace

void local_process_provider::inherit_running() {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator{"/proc", ec}) {
    auto pid = e.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos)
      continue;
    // Ours: `prism start --address <this head> --block`, with an id.
    auto args = proc_strings(pid, "cmdline");
    auto at = std::find(args.begin(), args.end(), "--address");
    if (args.size() < 2 || args[1] != "start" || at == args.end() ||
        at + 1 == args.end() || *(at + 1) != settings_.head_address)
      continue;
    std::map<std::string, std::string> env;
    for (const auto& kv : proc_strings(pid, "environ"))
      if (auto eq = kv.find('='); eq != std::string::npos)
        env[kv.substr(0, eq)] = kv.substr(eq + 1);
    auto id = env[instance_id_variable];
    auto type = env[node_type_variable];
    if (id.empty() || !settings_.types.contains(type))
      continue;
    auto& n = nodes_[id];
    n.pid = static_cast<pid_t>(std::stol(pid));
    n.node_type = type;
    n.request_id = env[request_id_variable];
    n.inherited = true;
    seen_requests_.insert(n.request_id);
  }
}

pid_t local_process_provider::spawn(const std::string& id,
                                    const std::string& node_type,
                                    const std::string& request_id,
                                    std::string& why) const {
  const auto& resources = settings_.types.at(node_type);
  std::vector<std::string> args{settings_.program, "start", "--address",
                                settings_.head_address, "--block"};
  nlohmann::json custom = nlohmann::json::object();
  for (const auto& [name, quantity] : resources) {
    if (name == "CPU") {
      args.push_back("--num-cpus");
      args.push_back(number(quantity));
    } else {
      custom[name] = quantity;
    }
  }
  if (!custom.empty()) {
    args.push_back("--resources");
    args.push_back(custom.dump());
  }
  auto log = settings_.log_dir + "/autoscaler-" + id + ".log";
  // Everything the new process needs is made before the fork: it only calls
  // async-signal-safe functions after it.
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_text;
  for (char** e = environ; *e; ++e) {
    std::string entry{*e};
    auto name = entry.substr(0, entry.find('='));
    if (name != instance_id_variable && name != node_type_variable &&
        name != request_id_variable && !settings_.environment.contains(name))
      env_text.push_back(std::move(entry));
  }
  env_text.push_back(std::string{instance_id_variable} + "=" + id);
  env_text.push_back(std::string{node_type_variable} + "=" + node_type);
  env_text.push_back(std::string{request_id_variable} + "=" + request_id);
  for (const auto& [name, value] : settings_.environment)
    env_text.push_back(name + "=" + value);
  std::vector<char*> envp;
  for (auto& e : env_text)
    envp.push_back(e.data());
  envp.push_back(nullptr);
  int out =
      ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (out < 0) {
    why = "cannot open " + log + ": " + std::strerror(errno);
    return 0;
  }
  pid_t pid = ::fork();
  if (pid == 0) {
    int in = ::open("/dev/null", O_RDONLY);
    if (in >= 0)
      ::dup2(in, STDIN_FILENO);
    ::dup2(out, STDOUT_FILENO);
    ::dup2(out, STDERR_FILENO);
    // Nothing of the head's but the three: a node must not hold the head's
    // port or files open past the head's end.
    ::close_range(3, ~0U, 0);
    // Its own process group: a signal to the head's group is not its.
    ::setpgid(0, 0);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  ::close(out);
  if (pid < 0) {
    why = std::string{"cannot fork: "} + std::strerror(errno);
    return 0;
  }
  return pid;
}

provider_reply local_process_provider::launch(const std::string& node_type,
                                              int count,
                                              const std::string& request_id) {
  std::lock_guard<std::mutex> guard{mu_};
  if (!settings_.types.contains(node_type))
    return {provider_answer::rejected, "no node type " + node_type};
  if (!seen_requests_.insert(request_id).second)
    return {};
  for (int k = 0; k < count; ++k) {
    auto id = prefix_ + std::to_string(++next_);
    std::string why;
    auto pid = spawn(id, node_type, request_id, why);
    if (pid == 0) {
      errors_.push_back(provider_error{provider_error::what_failed::launch,
                                       request_id,
                                       node_type,
                                       count - k,
                                       {},
                                       "spawn",
                                       why});
      break;
    }
    nodes_[id] =
        node_process{pid, node_type, request_id, false, {}, false, false};
  }
  return {};
}

provider_reply
local_process_provider::terminate(const std::vector<std::string>& ids,
                                  const std::string& request_id) {
  std::lock_guard<std::mutex> guard{mu_};
  reap();
  std::vector<std::string> missing;
  for (const auto& id : ids) {
    auto n = nodes_.find(id);
    if (n == nodes_.end()) {
      // Already gone: what the caller wanted.
      continue;
    }
    if (!n->second.terminating) {
      n->second.terminating = true;
      n->second.sigterm_at = std::chrono::steady_clock::now();
      if (::kill(n->second.pid, SIGTERM) != 0 && errno != ESRCH)
        missing.push_back(id);
    }
  }
  if (!missing.empty())
    errors_.push_back(provider_error{provider_error::what_failed::terminate,
                                     request_id, "", 0, std::move(missing),
                                     "signal", std::strerror(errno)});
  return {};
}

void local_process_provider::reap() {
  auto now = std::chrono::steady_clock::now();
  for (auto n = nodes_.begin(); n != nodes_.end();) {
    int status = 0;
    if (n->second.inherited) {
      if (!running(n->second.pid))
        n->second.exited = true;
    } else if (!n->second.exited) {
      auto r = ::waitpid(n->second.pid, &status, WNOHANG);
      if (r == n->second.pid || (r < 0 && errno == ECHILD))
        n->second.exited = true;
    }
    // One that ended before any listing showed it is listed once, so that
    // the autoscaler learns it existed and sees it go.
    if (n->second.exited) {
      if (n->second.listed)
        n = nodes_.erase(n);
      else
        ++n;
      continue;
    }
    if (n->second.terminating &&
        now - n->second.sigterm_at >= settings_.kill_after)
      ::kill(n->second.pid, SIGKILL);
    ++n;
  }
}

instance_listing local_process_provider::non_terminated() {
  std::lock_guard<std::mutex> guard{mu_};
  reap();
  instance_listing out;
  for (auto& [id, n] : nodes_) {
    n.listed = true;
    out.instances.push_back(
        cloud_instance{id, n.node_type, n.request_id, "127.0.0.1"});
  }
  return out;
}

std::vector<provider_error> local_process_provider::poll_errors() {
  std::lock_guard<std::mutex> guard{mu_};
  return std::exchange(errors_, {});
}

pid_t local_process_provider::pid_of(const std::string& id) const {
  std::lock_guard<std::mutex> guard{mu_};
  auto n = nodes_.find(id);
  return n == nodes_.end() || n->second.exited ? 0 : n->second.pid;
}

} // namespace prism::actors
