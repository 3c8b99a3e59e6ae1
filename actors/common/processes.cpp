#include "common/processes.hpp"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/wait.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

extern char** environ;

namespace prism::actors {

std::vector<std::string>
merged_environment(const std::vector<std::string>& extra) {
  auto name_of = [](const std::string& entry) {
    return entry.substr(0, entry.find('='));
  };
  auto overrides = [&](const std::string& entry) {
    for (auto& x : extra)
      if (name_of(x) == name_of(entry))
        return true;
    return false;
  };
  std::vector<std::string> result;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string entry{*e};
    if (!overrides(entry))
      result.push_back(std::move(entry));
  }
  // Of two entries of `extra` with one name, only the later one.
  for (std::size_t i = 0; i < extra.size(); ++i) {
    bool later = false;
    for (std::size_t j = i + 1; j < extra.size() && !later; ++j)
      later = name_of(extra[j]) == name_of(extra[i]);
    if (!later)
      result.push_back(extra[i]);
  }
  return result;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> result;
  for (auto& s : strings)
    result.push_back(s.data());
  result.push_back(nullptr);
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

std::string take_environment_variable(const char* name) {
  const char* value = std::getenv(name);
  std::string result = value != nullptr ? value : "";
  ::unsetenv(name);
  return result;
}

void exit_now(int code) {
  spdlog::apply_all(
      [](const std::shared_ptr<spdlog::logger>& l) { l->flush(); });
  std::fflush(stdout);
  std::fflush(stderr);
  ::_exit(code);
}

} // namespace prism::actors
