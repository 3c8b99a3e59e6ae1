#include "prism/detail/value.hpp"

#include <cxxabi.h>
#include <sys/mman.h>

#include "prism/internal/thread_annotations.hpp"
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <system_error>
#include <unordered_map>

namespace prism::detail {

namespace {

std::string demangle(const char* mangled) {
  int status = 0;
  char* name = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  if (status != 0 || name == nullptr)
    return mangled;
  std::string result{name};
  std::free(name);
  return result;
}

// FNV-1a: stable across runs of the same binary, unlike std::hash.
std::uint64_t fnv1a(const char* s) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (; *s != '\0'; ++s) {
    h ^= static_cast<unsigned char>(*s);
    h *= 0x100000001b3ULL;
  }
  return h == void_tag ? 1 : h;
}

struct tag_names {
  std::mutex mu;
  std::unordered_map<std::uint64_t, std::string> names GUARDED_BY(mu);
};

tag_names& names() {
  static tag_names instance;
  return instance;
}

} // namespace

std::string demangled_name(const std::type_info& type) {
  return demangle(type.name());
}

std::uint64_t register_type_tag(const std::type_info& type) {
  auto tag = fnv1a(type.name());
  auto& reg = names();
  std::lock_guard<std::mutex> guard{reg.mu};
  reg.names.emplace(tag, demangle(type.name()));
  return tag;
}

std::string type_tag_name(std::uint64_t tag) {
  if (tag == void_tag)
    return "void";
  auto& reg = names();
  std::lock_guard<std::mutex> guard{reg.mu};
  auto i = reg.names.find(tag);
  return i != reg.names.end() ? i->second : "<unknown type>";
}

void advise_huge_pages(void* p, std::size_t n) noexcept {
  constexpr auto huge = std::uintptr_t{2} << 20;
  auto from = (reinterpret_cast<std::uintptr_t>(p) + huge - 1) & ~(huge - 1);
  auto to = (reinterpret_cast<std::uintptr_t>(p) + n) & ~(huge - 1);
  // Advice only: a kernel without huge pages leaves the buffer as it is.
  if (to > from)
    ::madvise(reinterpret_cast<void*>(from), to - from, MADV_HUGEPAGE);
}

tail_prefault::tail_prefault(void* p, std::size_t n) {
  if (n < parallel_fault_bytes)
    return;
  constexpr auto page = std::uintptr_t{4096};
  auto from =
      (reinterpret_cast<std::uintptr_t>(p) + n / 8 + page - 1) & ~(page - 1);
  auto to = (reinterpret_cast<std::uintptr_t>(p) + n) & ~(page - 1);
  // Advice only: a kernel without MADV_POPULATE_WRITE (before 5.14) leaves
  // the faults to the writer.
  try {
    worker_ = std::thread{[from, to] {
      ::madvise(reinterpret_cast<void*>(from), to - from, MADV_POPULATE_WRITE);
    }};
  } catch (const std::system_error&) {
    // No thread to spare: the writer takes every fault itself.
  }
}

tail_prefault::~tail_prefault() {
  if (worker_.joinable())
    worker_.join();
}

void throw_serialization_failure(const std::string& what, std::uint64_t tag) {
  throw error(errc::internal, what + " a value of type " + type_tag_name(tag));
}

void throw_type_mismatch(std::uint64_t expected, std::uint64_t actual,
                         const std::string& where) {
  throw type_mismatch_error(where + " holds a " + type_tag_name(actual) +
                            " but was read as a " + type_tag_name(expected));
}

} // namespace prism::detail
