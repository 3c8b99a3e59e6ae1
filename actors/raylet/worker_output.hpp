#pragma once

// The output of a node's worker processes. Each process's stdout and stderr
// are pipes that this node reads on a thread of its own, so a worker never
// waits for anything but the pipe, and a crash loses none of what it wrote.
// What comes out goes to files of that process in the node's session
// directory (`<name>-<pid>.out` and `.err`, rotated at a size), and, line by
// line with who wrote it, waits for the raylet to send it to its job's
// driver, in a bounded buffer that counts what it drops. No CAF here.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <sys/types.h>

#include "prism/ids.hpp"
#include "prism/internal/thread_annotations.hpp"
#include "protocol/output.hpp"

namespace prism::actors {

using protocol::output_line;

class worker_output {
public:
  struct settings {
    /// Where the files go.
    std::string dir;
    /// The file in `dir` that lists, a name a line, the files this object
    /// made, in the order it made them (`index_name`), so that they can be told
    /// from those of other nodes sharing the directory, also once this node is
    /// dead; empty: none.
    std::string index{};
    /// A file that grows past this many bytes is rotated: `x.out` becomes
    /// `x.out.1` (and `.1` `.2` ...), and a new `x.out` starts.
    std::uint64_t max_file_bytes = 100 * 1024 * 1024;
    /// Rotated files kept per stream; older ones are deleted.
    std::uint32_t backups = 5;
    /// Lines kept for a job's driver at most; past it, lines are dropped
    /// (they are in the files) and counted.
    std::size_t max_pending_lines = 100000;
    /// The same, in bytes of text.
    std::size_t max_pending_bytes = 16 * 1024 * 1024;
    /// A line longer than this is cut into lines of this length.
    std::size_t max_line_bytes = 16 * 1024;
  };

  /// The lines waiting for one job's driver, and how many were dropped
  /// since the last batch.
  struct batch {
    job_id job;
    std::vector<output_line> lines;
    std::uint64_t dropped = 0;
  };

  /// A process's stdout and stderr to be: `out_write` and `err_write` go to
  /// the process, the read ends stay here. Closes whatever it still holds.
  struct pipes {
    int out_read = -1, out_write = -1, err_read = -1, err_write = -1;
    pipes() = default;
    pipes(const pipes&) = delete;
    pipes& operator=(const pipes&) = delete;
    ~pipes();
    /// Closes the write ends (the process has its own copies now).
    void close_write_ends();
  };

  /// Throws `prism::error` if the thread or its wake-up descriptor cannot
  /// start.
  explicit worker_output(settings s);

  /// `f` is called (on this object's thread) when lines start waiting after
  /// a `take`, once until the next `take`.
  void on_pending(std::function<void()> f);

  /// Reads what the pipes hold now into the files, then stops.
  ~worker_output();

  worker_output(const worker_output&) = delete;
  worker_output& operator=(const worker_output&) = delete;

  /// New pipes; throws `prism::error` if the system has none to give.
  std::shared_ptr<pipes> make_pipes();

  /// Reads the output of process `pid` from the read ends of `p` (it takes
  /// them) until the process and every process it started closed theirs,
  /// into `<name>-<pid>.out` and `.err` (a stream that stays empty leaves
  /// no file). Its lines wait for the driver of
  /// `job`; with a nil job they only go to the files.
  void watch(pipes& p, pid_t pid, const std::string& name, job_id job);

  /// Returns once this object's thread read what every pipe held when it
  /// was called (or after `timeout`): lines written before are then in the
  /// files and waiting (`take`).
  void read_now(std::chrono::milliseconds timeout = std::chrono::seconds{1});

  /// The lines waiting, by job, each job's in the order they were read;
  /// those of the jobs in `busy` stay.
  std::vector<batch> take(const std::unordered_set<job_id>& busy = {});

  /// Lines dropped since this object started, for want of room for their
  /// driver (`settings::max_pending_lines`, `max_pending_bytes`).
  std::uint64_t dropped_lines() const;

  /// Streams (two a process) still read.
  std::size_t open_streams() const;

  /// The file a stream of `name-pid` is written to.
  static std::string file_name(const std::string& name, pid_t pid, bool err);

  /// The index of the files of node `node` (`settings::index`).
  static std::string index_name(const node_id& node);

  const settings& config() const {
    return settings_;
  }

private:
  struct stream {
    int fd = -1;
    int file = -1;
    /// Its file's name in `settings::dir`; empty: it has none. The file is
    /// made (and listed in the index) when the stream first says something:
    /// most workers say nothing, and making and deleting two files each
    /// cost a node that starts hundreds of them a second CPU time. A file
    /// an earlier process of the same pid left is added to.
    std::string name;
    bool opened = false;
    std::uint64_t file_bytes = 0;
    /// The end of a line not read whole yet.
    std::string partial;
    std::string source;
    pid_t pid = 0;
    bool err = false;
    job_id job;
  };

  void run();
  void read_stream(stream& s);
  /// Drops the streams that ended from `streams_`.
  void forget_ended();
  void take_lines(stream& s, std::string_view data, std::string& to_file,
                  std::vector<output_line>& lines);
  void add_line(stream& s, std::string_view text, std::string& to_file,
                std::vector<output_line>& lines);
  void queue(stream& s, std::vector<output_line>& lines);
  void open_file(stream& s);
  void write_file(stream& s, const std::string& data);
  void rotate(stream& s);
  void end_stream(stream& s);
  void wake();

  const settings settings_;
  int wake_fd_ = -1;

  mutable std::mutex mu_;
  /// New streams for the thread to poll.
  std::vector<stream> added_ GUARDED_BY(mu_);
  std::size_t open_ GUARDED_BY(mu_) = 0;
  struct pending_lines {
    batch lines;
    std::size_t bytes = 0;
  };
  std::map<job_id, pending_lines> pending_ GUARDED_BY(mu_);
  std::function<void()> on_pending_ GUARDED_BY(mu_);
  bool told_ GUARDED_BY(mu_) = false;
  bool stopping_ GUARDED_BY(mu_) = false;
  /// Passes over every pipe asked for (`read_now`), and done.
  std::uint64_t dropped_lines_ GUARDED_BY(mu_) = 0;
  std::uint64_t reads_asked_ GUARDED_BY(mu_) = 0;
  std::uint64_t reads_done_ GUARDED_BY(mu_) = 0;
  std::condition_variable read_done_;

  /// The thread's own.
  std::vector<stream> streams_;
  std::thread reader_;
};

} // namespace prism::actors
