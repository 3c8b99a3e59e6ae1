#include "common/output_source.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <string>

#include <unistd.h>

#include "common/log.hpp"
#include "common/write_fully.hpp"
#include "prism/internal/thread_annotations.hpp"

namespace prism::actors {

namespace {

std::atomic<bool> marking{false};
std::mutex source_mu;
std::string last_source GUARDED_BY(source_mu);

} // namespace

std::string actor_class_of(std::string_view factory) {
  auto sep = factory.rfind("::");
  if (sep == std::string_view::npos || sep == 0)
    return std::string{factory};
  return std::string{factory.substr(0, sep)};
}

void init_output_source() {
  const char* fd = std::getenv(output_log_fd_variable);
  if (fd == nullptr || *fd == '\0')
    return;
  set_log_descriptor(std::atoi(fd));
  // A pipe makes stdout fully buffered: a line would wait for 4 KB more, or
  // be lost with a crash.
  std::setvbuf(stdout, nullptr, _IOLBF, BUFSIZ);
  marking = true;
}

void note_output_source(std::string_view name) {
  if (!marking.load(std::memory_order_relaxed))
    return;
  std::lock_guard<std::mutex> guard{source_mu};
  if (name == last_source)
    return;
  last_source.assign(name);
  // What the previous source left buffered is its own.
  std::cout.flush();
  std::cerr.flush();
  std::fflush(stdout);
  std::string line;
  line.reserve(output_source_mark.size() + name.size() + 1);
  line.append(output_source_mark).append(name).push_back('\n');
  write_fully(STDOUT_FILENO, line.data(), line.size());
  write_fully(STDERR_FILENO, line.data(), line.size());
}

} // namespace prism::actors
