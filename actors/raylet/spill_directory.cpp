#include "raylet/spill_directory.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace prism::actors {

namespace {

constexpr const char* lock_suffix = ".lock";
constexpr const char* file_suffix = ".spill";

std::string errno_text(int code) {
  return std::error_code{code, std::generic_category()}.message();
}

[[noreturn]] void fail(const std::string& what) {
  throw std::system_error{errno, std::generic_category(), what};
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() &&
         s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The node a lock file ("prism-<node>.lock") names; empty if it is none.
std::string node_of_lock(const std::string& name) {
  if (name.rfind("prism-", 0) != 0 || !ends_with(name, lock_suffix))
    return {};
  return name.substr(6, name.size() - 6 - std::strlen(lock_suffix));
}

// The node a spill file ("prism-<node>-<n>.spill") names; empty if it is
// none.
std::string node_of_file(const std::string& name) {
  if (name.rfind("prism-", 0) != 0 || !ends_with(name, file_suffix))
    return {};
  auto dash = name.find('-', 6);
  return dash == std::string::npos ? std::string{} : name.substr(6, dash - 6);
}

// Whether the node that holds lock file `path` is gone: nobody holds the
// lock. Takes the lock if so, and returns its file (-1 if the node lives).
int lock_of_gone_node(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  if (::flock(fd, LOCK_EX | LOCK_NB) == 0)
    return fd;
  ::close(fd);
  return -1;
}

// Deletes the spill files of nodes that are gone: those whose lock nobody
// holds, and those with no lock at all. Returns how many files it deleted.
std::uint64_t sweep(const std::string& dir, const std::string& own) {
  namespace fs = std::filesystem;
  std::vector<std::string> gone;
  std::vector<int> held;
  std::vector<std::string> locked_nodes;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator{dir, ec}) {
    auto name = e.path().filename().string();
    auto node = node_of_lock(name);
    if (node.empty() || node == own)
      continue;
    if (int fd = lock_of_gone_node(e.path().string()); fd >= 0) {
      gone.push_back(node);
      held.push_back(fd);
      fs::remove(e.path(), ec);
    } else {
      locked_nodes.push_back(node);
    }
  }
  std::uint64_t deleted = 0;
  for (const auto& e : fs::directory_iterator{dir, ec}) {
    auto name = e.path().filename().string();
    auto node = node_of_file(name);
    if (node.empty() || node == own)
      continue;
    bool lives = false;
    for (const auto& n : locked_nodes)
      lives = lives || n == node;
    if (!lives && fs::remove(e.path(), ec))
      ++deleted;
  }
  for (int fd : held)
    ::close(fd);
  return deleted;
}

// Writes all `n` bytes at `data` to `fd` at `offset`; returns 0 or errno.
int write_all(int fd, const char* data, std::uint64_t n, std::uint64_t offset) {
  while (n > 0) {
    auto w = ::pwrite(fd, data, n, static_cast<off_t>(offset));
    if (w < 0) {
      if (errno == EINTR)
        continue;
      return errno;
    }
    if (w == 0)
      return ENOSPC;
    data += w;
    n -= static_cast<std::uint64_t>(w);
    offset += static_cast<std::uint64_t>(w);
  }
  return 0;
}

} // namespace

// -- spill_file ---------------------------------------------------------------

spill_file::spill_file(std::shared_ptr<spill_directory> dir, int fd,
                       std::string path, std::uint64_t size)
    : dir_(std::move(dir)), fd_(fd), path_(std::move(path)), size_(size) {}

spill_file::~spill_file() {
  ::close(fd_);
  ::unlink(path_.c_str());
  dir_->file_gone(size_);
}

std::string spill_file::read(std::uint64_t offset, char* out,
                             std::uint64_t n) const {
  if (offset > size_ || n > size_ - offset)
    return "bytes " + std::to_string(offset) + ".." +
           std::to_string(offset + n) + " lie past the end of spill file " +
           path_ + " (" + std::to_string(size_) + " bytes)";
  while (n > 0) {
    auto r = ::pread(fd_, out, n, static_cast<off_t>(offset));
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return "reading spill file " + path_ + " failed: " +
             (r < 0 ? errno_text(errno) : std::string{"it is shorter"});
    out += r;
    n -= static_cast<std::uint64_t>(r);
    offset += static_cast<std::uint64_t>(r);
  }
  return {};
}

// -- spill_directory ----------------------------------------------------------

std::shared_ptr<spill_directory> spill_directory::open(const std::string& dir,
                                                       const node_id& node) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::create_directories(dir, ec))
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace, ec);
  if (!fs::is_directory(dir))
    throw std::system_error{
        ec ? ec : std::make_error_code(std::errc::not_a_directory),
        "the spill directory " + dir + " cannot be made"};
  auto own = node.hex();
  // Locked before it has its name: a sweep never sees it unlocked.
  auto lock = dir + "/prism-" + own + lock_suffix;
  auto temp = lock + ".new";
  int fd = ::open(temp.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0)
    fail("the spill directory " + dir + " takes no lock file");
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0 ||
      ::rename(temp.c_str(), lock.c_str()) != 0) {
    auto code = errno;
    ::close(fd);
    ::unlink(temp.c_str());
    errno = code;
    fail("the spill directory " + dir + " cannot be locked for node " + own);
  }
  auto swept = sweep(dir, own);
  return std::shared_ptr<spill_directory>{
      new spill_directory{dir, "prism-" + own + "-", fd, swept}};
}

spill_directory::spill_directory(std::string dir, std::string prefix,
                                 int lock_fd, std::uint64_t swept)
    : dir_(std::move(dir)), prefix_(std::move(prefix)), lock_fd_(lock_fd),
      swept_(swept) {}

spill_directory::~spill_directory() {
  // Every file is gone by now (each holds the directory); so goes the lock.
  auto lock = dir_ + "/" + prefix_.substr(0, prefix_.size() - 1) + lock_suffix;
  ::unlink(lock.c_str());
  ::close(lock_fd_);
}

std::shared_ptr<spill_file>
spill_directory::write(const std::vector<part>& parts, std::string& why) {
  auto path = dir_ + "/" + prefix_ + std::to_string(next_file_++) + file_suffix;
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    why = "spill file " + path + " cannot be made: " + errno_text(errno);
    return nullptr;
  }
  std::uint64_t offset = 0;
  for (const auto& p : parts) {
    if (auto code = write_all(fd, p.data, p.size, offset); code != 0) {
      why = "writing " + std::to_string(p.size) + " bytes to spill file " +
            path + " failed: " + errno_text(code);
      ::close(fd);
      ::unlink(path.c_str());
      return nullptr;
    }
    offset += p.size;
  }
  ++files_;
  bytes_ += offset;
  return std::shared_ptr<spill_file>{
      new spill_file{shared_from_this(), fd, std::move(path), offset}};
}

void spill_directory::file_gone(std::uint64_t size) noexcept {
  --files_;
  bytes_ -= size;
}

} // namespace prism::actors
