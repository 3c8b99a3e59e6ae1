#include "prism/internal/object_arena.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <mutex>
#include <system_error>
#include <vector>

namespace prism::internal {

namespace {

/// What the header starts with, before the mark.
constexpr char magic[8] = {'P', 'R', 'S', 'M', 'A', 'R', 'N', '1'};

#ifndef MADV_POPULATE_WRITE
constexpr int MADV_POPULATE_WRITE = 23;
#endif

std::uint64_t page_size() {
  static const auto n = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  return n;
}

std::uint64_t round_up(std::uint64_t n, std::uint64_t to) {
  return (n + to - 1) / to * to;
}

[[noreturn]] void throw_errno(const char* what) {
  throw std::system_error{errno, std::generic_category(), what};
}

} // namespace

// -- object_arena
// --------------------------------------------------------------

std::shared_ptr<object_arena> object_arena::create(std::uint64_t capacity,
                                                   const unique_id& mark) {
  auto size =
      round_up(header_bytes + round_up(capacity, alignment), page_size());
  int fd = ::memfd_create("prism-object-store", MFD_CLOEXEC);
  if (fd < 0)
    throw_errno("cannot make the object store's shared memory");
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0) {
    auto err = errno;
    ::close(fd);
    errno = err;
    throw_errno("cannot size the object store's shared memory");
  }
  // The kernel backs no page before it is written, so a large capacity
  // costs address space only.
  auto* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_NORESERVE, fd, 0);
  if (p == MAP_FAILED) {
    auto err = errno;
    ::close(fd);
    errno = err;
    throw_errno("cannot map the object store's shared memory");
  }
  auto* base = static_cast<char*>(p);
  std::memcpy(base, magic, sizeof(magic));
  std::memcpy(base + sizeof(magic), &mark.hi, sizeof(mark.hi));
  std::memcpy(base + sizeof(magic) + sizeof(mark.hi), &mark.lo,
              sizeof(mark.lo));
  return std::shared_ptr<object_arena>{new object_arena(fd, base, size, mark)};
}

object_arena::object_arena(int fd, char* base, std::uint64_t capacity,
                           const unique_id& mark)
    : fd_(fd), base_(base), capacity_(capacity), mark_(mark),
      path_("/proc/" + std::to_string(::getpid()) + "/fd/" +
            std::to_string(fd)) {
  if (capacity_ > header_bytes) {
    free_by_offset_.emplace(header_bytes, capacity_ - header_bytes);
    free_by_size_.emplace(capacity_ - header_bytes, header_bytes);
  }
}

object_arena::~object_arena() {
  ::munmap(base_, capacity_);
  ::close(fd_);
}

std::shared_ptr<char> object_arena::allocate(std::uint64_t n) {
  n = round_up(n == 0 ? 1 : n, alignment);
  std::uint64_t offset = 0;
  std::uint64_t fresh_from = 0;
  std::uint64_t fresh_to = 0;
  {
    std::lock_guard<std::mutex> guard{mu_};
    auto fit = free_by_size_.lower_bound({n, 0});
    if (fit == free_by_size_.end())
      return nullptr;
    auto [size, at] = *fit;
    take(at, size, n);
    offset = at;
    blocks_.emplace(offset, n);
    used_ += n;
    if (offset + n > faulted_) {
      fresh_from = std::max(offset, faulted_);
      fresh_to = offset + n;
      faulted_ = fresh_to;
    }
  }
  if (fresh_to > fresh_from) {
    // Memory never handed out before: faulted in by one call, much cheaper
    // than a fault per page as it is written. Where the kernel cannot, the
    // writes fault it in.
    auto from = fresh_from / page_size() * page_size();
    ::madvise(base_ + from, round_up(fresh_to, page_size()) - from,
              MADV_POPULATE_WRITE);
  }
  auto self = shared_from_this();
  return std::shared_ptr<char>{
      base_ + offset, [self, offset](char*) { self->release(offset); }};
}

void object_arena::take(std::uint64_t offset, std::uint64_t size,
                        std::uint64_t n) {
  free_by_size_.erase({size, offset});
  free_by_offset_.erase(offset);
  if (size > n) {
    free_by_offset_.emplace(offset + n, size - n);
    free_by_size_.emplace(size - n, offset + n);
  }
}

void object_arena::release(std::uint64_t offset) {
  std::lock_guard<std::mutex> guard{mu_};
  auto b = blocks_.find(offset);
  if (b == blocks_.end())
    return;
  auto size = b->second;
  blocks_.erase(b);
  used_ -= size;
  // Merged with the free ranges on either side.
  auto next = free_by_offset_.lower_bound(offset);
  if (next != free_by_offset_.end() && next->first == offset + size) {
    size += next->second;
    free_by_size_.erase({next->second, next->first});
    next = free_by_offset_.erase(next);
  }
  if (next != free_by_offset_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == offset) {
      offset = prev->first;
      size += prev->second;
      free_by_size_.erase({prev->second, prev->first});
      free_by_offset_.erase(prev);
    }
  }
  free_by_offset_.emplace(offset, size);
  free_by_size_.emplace(size, offset);
}

std::uint64_t object_arena::used() const {
  std::lock_guard<std::mutex> guard{mu_};
  return used_;
}

std::uint64_t object_arena::faulted() const {
  std::lock_guard<std::mutex> guard{mu_};
  return faulted_;
}

// -- arena_view
// ----------------------------------------------------------------

namespace {

/// The views this process mapped, for `arena_view::containing`.
std::mutex& views_mu() {
  static std::mutex mu;
  return mu;
}

std::vector<std::weak_ptr<const arena_view>>& views() {
  static std::vector<std::weak_ptr<const arena_view>> all;
  return all;
}

} // namespace

std::shared_ptr<const arena_view>
arena_view::open(const std::string& path, std::uint64_t capacity,
                 const unique_id& mark, std::string& why, bool writable) {
  int fd = ::open(path.c_str(), (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
  if (fd < 0) {
    why = "cannot open " + path + ": " + std::strerror(errno);
    return nullptr;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_size < 0 ||
      static_cast<std::uint64_t>(st.st_size) != capacity ||
      capacity <= object_arena::header_bytes) {
    ::close(fd);
    why = path + " is not an object store of " + std::to_string(capacity) +
          " bytes";
    return nullptr;
  }
  auto* p =
      ::mmap(nullptr, capacity, writable ? PROT_READ | PROT_WRITE : PROT_READ,
             MAP_SHARED, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) {
    why = "cannot map " + path + ": " + std::strerror(errno);
    return nullptr;
  }
  auto* base = static_cast<char*>(p);
  unique_id found;
  std::memcpy(&found.hi, base + sizeof(magic), sizeof(found.hi));
  std::memcpy(&found.lo, base + sizeof(magic) + sizeof(found.hi),
              sizeof(found.lo));
  if (std::memcmp(base, magic, sizeof(magic)) != 0 || found != mark) {
    ::munmap(p, capacity);
    why = path + " is not the object store it was said to be";
    return nullptr;
  }
  std::shared_ptr<const arena_view> view{
      new arena_view(base, capacity, mark, writable, path)};
  std::lock_guard<std::mutex> guard{views_mu()};
  std::erase_if(views(), [](const auto& v) { return v.expired(); });
  views().push_back(view);
  return view;
}

arena_view::~arena_view() {
  ::munmap(base_, capacity_);
}

std::shared_ptr<const arena_view>
arena_view::containing(const char* p, std::size_t n, std::uint64_t& offset) {
  std::lock_guard<std::mutex> guard{views_mu()};
  for (auto& weak : views()) {
    auto view = weak.lock();
    if (!view || p < view->base_ || p + n > view->base_ + view->capacity_)
      continue;
    offset = static_cast<std::uint64_t>(p - view->base_);
    return view;
  }
  return nullptr;
}

const char* arena_view::at(std::uint64_t offset,
                           std::uint64_t n) const noexcept {
  if (offset < object_arena::header_bytes || offset > capacity_ ||
      n > capacity_ - offset)
    return nullptr;
  return base_ + offset;
}

} // namespace prism::internal
