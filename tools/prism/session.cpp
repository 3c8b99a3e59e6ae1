#include "session.hpp"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

#include "join/cluster_token.hpp"

namespace prism::tools {

namespace fs = std::filesystem;

namespace {

constexpr const char* pid_suffix = ".pid";

std::string read_file(const fs::path& p) {
  std::ifstream in{p};
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Writes `text` to `p` through a temporary file, so a reader never sees
/// half of it.
void write_file(const fs::path& p, const std::string& text) {
  auto tmp = p;
  tmp += ".tmp";
  {
    std::ofstream out{tmp, std::ios::trunc};
    out << text << '\n';
    if (!out)
      throw std::runtime_error("cannot write " + tmp.string());
  }
  fs::rename(tmp, p);
}

} // namespace

session session::open() {
  auto dir = actors::session_directory();
  std::error_code ec;
  if (fs::create_directories(dir, ec))
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace, ec);
  if (ec)
    throw std::runtime_error("cannot create the session directory " + dir +
                             ": " + ec.message());
  if (!actors::is_private_directory(dir))
    throw std::runtime_error(
        "the session directory " + dir +
        " is not this user's own (another user may write to it): remove it, "
        "or set PRISM_SESSION_DIR");
  return session{dir};
}

std::string session::log_path(const std::string& name) const {
  return (fs::path{dir_} / (name + ".log")).string();
}

void session::add(const std::string& name, pid_t pid) const {
  write_file(fs::path{dir_} / (name + pid_suffix), std::to_string(pid));
}

void session::remove(const std::string& name) const {
  std::error_code ec;
  fs::remove(fs::path{dir_} / (name + pid_suffix), ec);
}

std::vector<session_process> session::running() const {
  std::vector<session_process> result;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator{dir_, ec}) {
    if (e.path().extension() != pid_suffix)
      continue;
    auto name = e.path().stem().string();
    pid_t pid = static_cast<pid_t>(std::atol(read_file(e.path()).c_str()));
    if (pid > 0 && is_prism_start(pid))
      result.push_back(session_process{name, pid});
    else
      remove(name);
  }
  return result;
}

std::optional<std::string> session::head_address() const {
  auto p = fs::path{dir_} / "head.address";
  std::error_code ec;
  if (!fs::exists(p, ec))
    return std::nullopt;
  auto text = read_file(p);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
    text.pop_back();
  if (text.empty())
    return std::nullopt;
  return text;
}

void session::set_head_address(const std::string& address) const {
  write_file(fs::path{dir_} / "head.address", address);
}

bool is_prism_start(pid_t pid) {
  if (::kill(pid, 0) != 0 && errno != EPERM)
    return false;
  // A zombie or a process of another program that took the pid is not ours.
  auto stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  auto close = stat.rfind(')');
  if (close != std::string::npos && close + 2 < stat.size() &&
      stat[close + 2] == 'Z')
    return false;
  auto cmdline = read_file("/proc/" + std::to_string(pid) + "/cmdline");
  std::vector<std::string> args;
  std::string arg;
  for (char c : cmdline) {
    if (c == '\0') {
      args.push_back(std::move(arg));
      arg.clear();
    } else {
      arg += c;
    }
  }
  return args.size() >= 2 && fs::path{args[0]}.filename() == "prism" &&
         args[1] == "start";
}

} // namespace prism::tools
