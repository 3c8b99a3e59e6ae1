#pragma once

// The host's side of instance processes (worker/instance_wire.hpp): each
// actor host whose instance runs in a process of its own keeps a link to
// that process, and one thread of the host's process reads every link and
// writes what a link could not write at once. No CAF here: a link answers
// through callbacks, and nothing that uses one ever waits on it.

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "prism/internal/thread_annotations.hpp"
#include "worker/instance_wire.hpp"

namespace prism::actors {

class instance_link;

/// The socket the instance processes of this process connect to, in the
/// abstract namespace of its network namespace, and the thread that reads
/// and writes them. One per process, made on first use; it lives as long as
/// the process.
class instance_links {
public:
  /// What a link calls on the reading thread: once its process connected,
  /// for each call of Prism's API its process makes, for each asynchronous
  /// call that may go on (`instance_wire::wake`), for the user metrics it
  /// ships, and once, when a link
  /// that connected ends (its process ended or spoke nonsense, or `close`
  /// was called).
  struct callbacks {
    std::function<void(instance_link&)> connected;
    std::function<void(instance_link&, instance_wire::runtime_call)>
        runtime_call;
    std::function<void(const task_id&)> wake;
    std::function<void(instance_wire::metrics)> metrics;
    std::function<void()> lost;
  };

  /// The process's links. Throws `prism::error` if its socket cannot be
  /// made.
  static instance_links& of_process();

  /// The name instance processes connect to (`instance_wire::
  /// socket_variable`).
  const std::string& socket_name() const noexcept {
    return name_;
  }

  /// A link for the process that will say `token` first: it connects
  /// later.
  std::shared_ptr<instance_link> expect(const std::string& token,
                                        callbacks cbs);

  instance_links(const instance_links&) = delete;
  instance_links& operator=(const instance_links&) = delete;

private:
  friend class instance_link;

  instance_links();
  void loop();
  void accept_all();
  void read_from(int fd);
  void drop(int fd);
  void said_hello(int fd, const instance_wire::frame& f);
  /// Has the loop write what `fd` could not take (`writable`), or not.
  void want_write(int fd, bool writable);

  int listener_ = -1;
  int epoll_ = -1;
  std::string name_;
  std::mutex mu_;
  /// Links whose process has not connected yet, by token.
  std::map<std::string, std::weak_ptr<instance_link>> expected_ GUARDED_BY(mu_);
  /// Connections by descriptor: a link once its process said hello, none
  /// before. Only the loop's thread touches these.
  struct connection {
    instance_wire::frame_reader reader;
    std::shared_ptr<instance_link> link;
  };
  std::map<int, connection> connections_;
};

/// One instance process, as its host sees it. Thread-safe; no call waits
/// for the process.
class instance_link : public std::enable_shared_from_this<instance_link> {
public:
  using constructed_callback = std::function<void(instance_wire::constructed)>;
  using ran_callback = std::function<void(instance_wire::ran)>;

  instance_link(instance_links& links, instance_links::callbacks cbs);

  /// Has the process make the instance; `done` is called with its answer
  /// on the reading thread, or never if the link ends first. False if the
  /// link ended.
  bool construct(const instance_wire::construct& msg,
                 constructed_callback done);

  /// Has the process run `batch`; `done` is called with how it ran on the
  /// reading thread, or never if the link ends first. `batch.batch` is set
  /// here. False if the link ended.
  bool run(instance_wire::run batch, ran_callback done);

  /// Tells the process that call `task` is cancelled: it stops it if it
  /// runs (`prism::is_cancelled`), and skips it if it has not begun.
  void cancel(const task_id& task);

  /// Answers a runtime call of the process.
  void answer(const instance_wire::runtime_answer& a);

  /// Ends the link: the process exits once it reads the end of its socket,
  /// whatever it runs. It is not an error if the link ended already.
  void close();

  /// The process's pid, once it connected; 0 before.
  std::int32_t pid() const;

private:
  friend class instance_links;

  /// The process connected on `fd` and said `hello` (the loop's thread).
  void connected(int fd, std::int32_t pid);
  /// A frame came from the process; false if it makes no sense here.
  bool received(const instance_wire::frame& f);
  /// The link ended (the loop's thread, once).
  void lost();
  /// Writes `bytes` now, or queues what the socket does not take; false if
  /// the link ended.
  bool send(std::vector<char> bytes);
  /// Writes what is queued, as far as the socket takes it (the loop's
  /// thread, when it is writable).
  void flush();
  /// Writes the queue's front frames. REQUIRES: mu_ held. Returns false if
  /// the socket broke.
  bool write_queued() EXCLUSIVE_LOCKS_REQUIRED(mu_);

  instance_links& links_;
  instance_links::callbacks cbs_;
  mutable std::mutex mu_;
  int fd_ GUARDED_BY(mu_) = -1;
  std::int32_t pid_ GUARDED_BY(mu_) = 0;
  bool ended_ GUARDED_BY(mu_) = false;
  /// Closed before its process connected: it is refused when it does.
  bool closed_ GUARDED_BY(mu_) = false;
  /// Frames not written yet, the front one from `written_` on.
  std::deque<std::vector<char>> queued_ GUARDED_BY(mu_);
  std::size_t written_ GUARDED_BY(mu_) = 0;
  constructed_callback on_constructed_ GUARDED_BY(mu_);
  std::uint64_t next_batch_ GUARDED_BY(mu_) = 0;
  /// What to call when each batch that runs has run.
  std::map<std::uint64_t, ran_callback> batches_ GUARDED_BY(mu_);
};

} // namespace prism::actors
