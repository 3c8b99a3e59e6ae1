#include "join/cluster_token.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include "prism/error.hpp"

namespace prism::actors {

namespace {

std::string trimmed(const std::string& text) {
  auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos)
    return "";
  auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

/// The token in `path`; "" if `optional` and there is no such file.
std::string read_token_file(const std::string& path, bool optional) {
  std::ifstream in{path};
  if (!in) {
    if (optional && errno == ENOENT)
      return "";
    throw invalid_argument_error("cannot read the cluster token file '" + path +
                                 "': " + std::strerror(errno));
  }
  std::ostringstream text;
  text << in.rdbuf();
  auto token = trimmed(text.str());
  if (token.empty() && !optional)
    throw invalid_argument_error("the cluster token file '" + path +
                                 "' holds no token");
  return token;
}

std::string variable(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

} // namespace

std::string session_directory() {
  auto dir = variable("PRISM_SESSION_DIR");
  return !dir.empty() ? dir : "/tmp/prism-" + std::to_string(::getuid());
}

bool is_private_directory(const std::string& dir) {
  struct stat st {};
  return ::lstat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) &&
         st.st_uid == ::getuid() && (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

std::string session_token_file() {
  return session_directory() + "/token";
}

std::string resolve_token(const std::string& given,
                          const std::string& given_file) {
  if (!given.empty())
    return given;
  if (auto token = trimmed(variable(token_variable)); !token.empty())
    return token;
  if (!given_file.empty())
    return read_token_file(given_file, false);
  if (auto file = variable(token_file_variable); !file.empty())
    return read_token_file(file, false);
  if (!is_private_directory(session_directory()))
    return "";
  return read_token_file(session_token_file(), true);
}

void write_token_file(const std::string& path, const std::string& token) {
  auto partial = path + ".partial";
  int fd =
      ::open(partial.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  auto fail = [&](const std::string& what) {
    auto why = std::string{std::strerror(errno)};
    if (fd >= 0)
      ::close(fd);
    ::unlink(partial.c_str());
    return invalid_argument_error(
        "cannot " + what + " the cluster token file '" + path + "': " + why);
  };
  if (fd < 0)
    throw fail("write");
  auto text = token + "\n";
  if (::fchmod(fd, 0600) != 0 ||
      ::write(fd, text.data(), text.size()) !=
          static_cast<ssize_t>(text.size()) ||
      ::fsync(fd) != 0)
    throw fail("write");
  ::close(fd);
  fd = -1;
  if (::rename(partial.c_str(), path.c_str()) != 0)
    throw fail("replace");
}

} // namespace prism::actors
