#include "raylet/log_files.hpp"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <set>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace prism::actors {

namespace {

/// The offset at which the last `tail` lines of the `size`-byte file `fd`
/// start (a last line without a newline counts).
std::uint64_t start_of_tail(int fd, std::uint64_t size, std::uint32_t tail) {
  constexpr std::uint64_t step = 64 * 1024;
  // Never more than an answer holds: a tail of a million lines of a large
  // file starts that far from its end.
  auto earliest = size > max_log_answer_bytes ? size - max_log_answer_bytes : 0;
  std::uint32_t newlines = 0;
  std::uint64_t end = size;
  std::string buf;
  // A newline that ends the file ends the last line; it starts no line.
  bool last = true;
  while (end > earliest) {
    auto begin = end - earliest > step ? end - step : earliest;
    buf.resize(end - begin);
    if (::pread(fd, buf.data(), buf.size(), static_cast<off_t>(begin)) !=
        static_cast<ssize_t>(buf.size()))
      return 0;
    for (auto i = buf.size(); i-- > 0;) {
      if (buf[i] != '\n')
        continue;
      if (last && begin + i + 1 == size) {
        last = false;
        continue;
      }
      if (++newlines == tail)
        return begin + i + 1;
    }
    last = false;
    end = begin;
  }
  return earliest;
}

} // namespace

std::vector<std::string> indexed_files(const std::string& dir,
                                       const std::string& index) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  std::ifstream in{dir + "/" + index};
  for (std::string line; std::getline(in, line);)
    // Names this node wrote; nothing that leads out of the directory.
    if (!line.empty() && line.find('/') == std::string::npos &&
        seen.insert(line).second)
      names.push_back(line);
  return names;
}

bool log_file_matches(const std::string& name, job_id job, pid_t pid,
                      bool err) {
  auto ext = std::string{err ? ".err" : ".out"};
  if (name.size() < ext.size() ||
      name.compare(name.size() - ext.size(), ext.size(), ext) != 0)
    return false;
  auto stem = name.substr(0, name.size() - ext.size());
  auto dash = stem.rfind('-');
  if (dash == std::string::npos)
    return false;
  if (pid != 0 && stem.substr(dash + 1) != std::to_string(pid))
    return false;
  if (job == job_id{})
    return true;
  return stem.substr(0, dash) == "worker-" + std::to_string(job.value);
}

std::optional<protocol::log_piece>
read_log_piece(const std::string& dir, const std::string& name,
               std::optional<std::uint64_t> offset, std::uint32_t tail,
               std::uint64_t max_bytes) {
  auto path = name.front() == '/' ? name : dir + "/" + name;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return std::nullopt;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return std::nullopt;
  }
  protocol::log_piece piece;
  piece.file = name;
  piece.size = static_cast<std::uint64_t>(st.st_size);
  // A file that shrank (rotated, truncated) is read again from its start.
  piece.offset = offset     ? (*offset <= piece.size ? *offset : 0)
                 : tail > 0 ? start_of_tail(fd, piece.size, tail)
                            : 0;
  auto n = std::min(piece.size - piece.offset, max_bytes);
  piece.bytes.resize(n);
  auto got =
      ::pread(fd, piece.bytes.data(), n, static_cast<off_t>(piece.offset));
  piece.bytes.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
  ::close(fd);
  return piece;
}

std::string own_log_file() {
  char buf[4096];
  auto n = ::readlink("/proc/self/fd/2", buf, sizeof(buf) - 1);
  if (n <= 0)
    return {};
  std::string path{buf, static_cast<std::size_t>(n)};
  struct stat st {};
  if (path.front() != '/' || ::stat(path.c_str(), &st) != 0 ||
      !S_ISREG(st.st_mode))
    return {};
  return path;
}

} // namespace prism::actors
