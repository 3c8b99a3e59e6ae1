#include "raylet/worker_output.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "common/output_source.hpp"
#include "common/write_fully.hpp"
#include "prism/error.hpp"

namespace prism::actors {

namespace {

void close_fd(int& fd) {
  if (fd >= 0)
    ::close(fd);
  fd = -1;
}

} // namespace

worker_output::pipes::~pipes() {
  close_fd(out_read);
  close_fd(out_write);
  close_fd(err_read);
  close_fd(err_write);
}

void worker_output::pipes::close_write_ends() {
  close_fd(out_write);
  close_fd(err_write);
}

worker_output::worker_output(settings s) : settings_{std::move(s)} {
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0)
    throw error(errc::internal,
                std::string{"cannot make an eventfd: "} + std::strerror(errno));
  reader_ = std::thread{[this] { run(); }};
}

worker_output::~worker_output() {
  {
    std::lock_guard<std::mutex> guard{mu_};
    stopping_ = true;
  }
  wake();
  reader_.join();
  for (auto& s : streams_)
    end_stream(s);
  std::lock_guard<std::mutex> guard{mu_};
  for (auto& s : added_) {
    close_fd(s.fd);
    close_fd(s.file);
  }
  ::close(wake_fd_);
}

void worker_output::on_pending(std::function<void()> f) {
  bool waiting = false;
  {
    std::lock_guard<std::mutex> guard{mu_};
    on_pending_ = f;
    waiting = !pending_.empty() && !told_;
    told_ = told_ || waiting;
  }
  if (waiting && f)
    f();
}

std::shared_ptr<worker_output::pipes> worker_output::make_pipes() {
  auto p = std::make_shared<pipes>();
  int out[2];
  int err[2];
  if (::pipe2(out, O_CLOEXEC) != 0)
    throw error(errc::internal,
                std::string{"cannot make a pipe: "} + std::strerror(errno));
  p->out_read = out[0];
  p->out_write = out[1];
  if (::pipe2(err, O_CLOEXEC) != 0)
    throw error(errc::internal,
                std::string{"cannot make a pipe: "} + std::strerror(errno));
  p->err_read = err[0];
  p->err_write = err[1];
  // The default size (64 KB): a larger one per worker would soon reach the
  // user's limit of pipe memory (pipe-user-pages-soft), past which every
  // new pipe of the user gets two pages.
  for (int fd : {p->out_read, p->err_read})
    ::fcntl(fd, F_SETFL, O_NONBLOCK);
  return p;
}

std::string worker_output::file_name(const std::string& name, pid_t pid,
                                     bool err) {
  return name + "-" + std::to_string(pid) + (err ? ".err" : ".out");
}

void worker_output::watch(pipes& p, pid_t pid, const std::string& name,
                          job_id job) {
  std::vector<stream> added;
  for (bool err : {false, true}) {
    stream s;
    s.fd = std::exchange(err ? p.err_read : p.out_read, -1);
    s.pid = pid;
    s.err = err;
    s.job = job;
    if (!settings_.dir.empty())
      s.name = file_name(name, pid, err);
    added.push_back(std::move(s));
  }
  {
    std::lock_guard<std::mutex> guard{mu_};
    for (auto& s : added)
      added_.push_back(std::move(s));
    open_ += added.size();
  }
  wake();
}

std::string worker_output::index_name(const node_id& node) {
  return "node-" + node.hex() + ".files";
}

void worker_output::read_now(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> guard{mu_};
  auto want = ++reads_asked_;
  guard.unlock();
  wake();
  guard.lock();
  read_done_.wait_for(guard, timeout,
                      [&] { return reads_done_ >= want || stopping_; });
}

std::vector<worker_output::batch>
worker_output::take(const std::unordered_set<job_id>& busy) {
  std::vector<batch> result;
  std::lock_guard<std::mutex> guard{mu_};
  for (auto i = pending_.begin(); i != pending_.end();) {
    if (busy.count(i->first) > 0) {
      ++i;
      continue;
    }
    result.push_back(std::move(i->second.lines));
    i = pending_.erase(i);
  }
  told_ = false;
  return result;
}

std::uint64_t worker_output::dropped_lines() const {
  std::lock_guard<std::mutex> guard{mu_};
  return dropped_lines_;
}

std::size_t worker_output::open_streams() const {
  std::lock_guard<std::mutex> guard{mu_};
  return open_;
}

void worker_output::wake() {
  std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof(one));
}

void worker_output::run() {
  std::vector<pollfd> fds;
  for (;;) {
    std::uint64_t asked = 0;
    {
      std::lock_guard<std::mutex> guard{mu_};
      for (auto& s : added_)
        streams_.push_back(std::move(s));
      added_.clear();
      if (stopping_)
        break;
      if (reads_asked_ > reads_done_)
        asked = reads_asked_;
    }
    if (asked > 0) {
      // A pass over every pipe, whatever the poll would say.
      for (auto& s : streams_)
        read_stream(s);
      forget_ended();
      {
        std::lock_guard<std::mutex> guard{mu_};
        reads_done_ = asked;
      }
      read_done_.notify_all();
    }
    fds.clear();
    fds.push_back({wake_fd_, POLLIN, 0});
    for (auto& s : streams_)
      fds.push_back({s.fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR)
      break;
    if (fds[0].revents != 0) {
      std::uint64_t n = 0;
      [[maybe_unused]] auto r = ::read(wake_fd_, &n, sizeof(n));
    }
    for (std::size_t i = 1; i < fds.size(); ++i)
      if (fds[i].revents != 0)
        read_stream(streams_[i - 1]);
    forget_ended();
  }
  // What the pipes hold now still goes to the files.
  for (auto& s : streams_)
    read_stream(s);
}

void worker_output::forget_ended() {
  streams_.erase(std::remove_if(streams_.begin(), streams_.end(),
                                [](const stream& s) { return s.fd < 0; }),
                 streams_.end());
}

void worker_output::read_stream(stream& s) {
  char buf[64 * 1024];
  std::string to_file;
  std::vector<output_line> lines;
  for (;;) {
    auto n = ::read(s.fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR)
      continue;
    if (n > 0) {
      take_lines(s, {buf, static_cast<std::size_t>(n)}, to_file, lines);
      if (static_cast<std::size_t>(n) == sizeof(buf))
        continue;
      break;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      break;
    // The end: every writer closed its end (or the pipe broke).
    if (!s.partial.empty()) {
      auto rest = std::move(s.partial);
      s.partial.clear();
      add_line(s, rest, to_file, lines);
    }
    write_file(s, to_file);
    to_file.clear();
    queue(s, lines);
    end_stream(s);
    return;
  }
  write_file(s, to_file);
  queue(s, lines);
}

void worker_output::take_lines(stream& s, std::string_view data,
                               std::string& to_file,
                               std::vector<output_line>& lines) {
  while (!data.empty()) {
    auto nl = data.find('\n');
    if (nl == std::string_view::npos) {
      s.partial.append(data);
      // A line that never ends goes out in pieces.
      while (s.partial.size() >= settings_.max_line_bytes) {
        auto piece = s.partial.substr(0, settings_.max_line_bytes);
        s.partial.erase(0, settings_.max_line_bytes);
        add_line(s, piece, to_file, lines);
      }
      return;
    }
    if (s.partial.empty()) {
      add_line(s, data.substr(0, nl), to_file, lines);
    } else {
      s.partial.append(data.substr(0, nl));
      auto line = std::move(s.partial);
      s.partial.clear();
      add_line(s, line, to_file, lines);
    }
    data.remove_prefix(nl + 1);
  }
}

void worker_output::add_line(stream& s, std::string_view text,
                             std::string& to_file,
                             std::vector<output_line>& lines) {
  if (auto mark = text.find(output_source_mark);
      mark != std::string_view::npos) {
    // What came before the mark on its line was the previous source's
    // (a line it had not ended).
    if (mark > 0)
      add_line(s, text.substr(0, mark), to_file, lines);
    s.source.assign(text.substr(mark + output_source_mark.size()));
    return;
  }
  for (std::size_t at = 0; at < text.size() || at == 0;
       at += settings_.max_line_bytes) {
    auto piece = text.substr(at, settings_.max_line_bytes);
    to_file.append(piece).push_back('\n');
    if (s.job != job_id{})
      lines.push_back(output_line{s.source, static_cast<std::int32_t>(s.pid),
                                  s.err, std::string{piece}});
    if (text.empty())
      break;
  }
}

void worker_output::queue(stream& s, std::vector<output_line>& lines) {
  if (lines.empty())
    return;
  std::function<void()> tell;
  {
    std::lock_guard<std::mutex> guard{mu_};
    auto& p = pending_[s.job];
    auto& b = p.lines;
    b.job = s.job;
    for (auto& line : lines) {
      if (b.lines.size() >= settings_.max_pending_lines ||
          p.bytes + line.text.size() > settings_.max_pending_bytes) {
        ++b.dropped;
        ++dropped_lines_;
        continue;
      }
      p.bytes += line.text.size();
      b.lines.push_back(std::move(line));
    }
    if (!told_ && on_pending_) {
      told_ = true;
      tell = on_pending_;
    }
  }
  lines.clear();
  if (tell)
    tell();
}

void worker_output::open_file(stream& s) {
  s.opened = true;
  s.file = ::open((settings_.dir + "/" + s.name).c_str(),
                  O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (s.file < 0 || settings_.index.empty())
    return;
  auto line = s.name + "\n";
  int index = ::open((settings_.dir + "/" + settings_.index).c_str(),
                     O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (index >= 0) {
    write_fully(index, line.data(), line.size());
    ::close(index);
  }
}

void worker_output::write_file(stream& s, const std::string& data) {
  if (data.empty() || s.name.empty())
    return;
  if (!s.opened)
    open_file(s);
  if (s.file < 0)
    return;
  // A full disk loses file output; the driver still gets it.
  write_fully(s.file, data.data(), data.size());
  s.file_bytes += data.size();
  if (s.file_bytes >= settings_.max_file_bytes)
    rotate(s);
}

void worker_output::rotate(stream& s) {
  close_fd(s.file);
  auto path = settings_.dir + "/" + s.name;
  auto numbered = [&](std::uint32_t i) {
    return i == 0 ? path : path + "." + std::to_string(i);
  };
  if (settings_.backups == 0) {
    ::unlink(path.c_str());
  } else {
    ::unlink(numbered(settings_.backups).c_str());
    for (auto i = settings_.backups; i > 0; --i)
      ::rename(numbered(i - 1).c_str(), numbered(i).c_str());
  }
  s.file =
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  s.file_bytes = 0;
}

void worker_output::end_stream(stream& s) {
  if (s.fd >= 0) {
    close_fd(s.fd);
    close_fd(s.file);
    std::lock_guard<std::mutex> guard{mu_};
    --open_;
  }
}

} // namespace prism::actors
