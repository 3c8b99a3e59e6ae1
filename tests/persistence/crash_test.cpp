// The crash test: a writer process streams acknowledged writes and is killed
// with SIGKILL in the middle of them; on restart every acknowledged write is
// in the store.

#include <boost/test/unit_test.hpp>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "control_store.hpp"
#include "test_support.hpp"

extern char** environ;

using namespace prism;
using namespace prism::persistence;
using namespace prism::persistence::testing;

namespace {

using clock_type = std::chrono::steady_clock;

/// The actor of write `i`: named when `i % 3 == 1`.
actor_record crash_actor(std::uint64_t i) {
  auto a = sample_actor(i);
  a.ns = "crash";
  a.name = i % 3 == 1 ? "actor-" + std::to_string(i) : "";
  return a;
}

/// Write `i` of the stream: an unnamed actor, a named actor with its index
/// entry in one batch, or a kv entry, by turns.
void write_record(control_store& store, std::uint64_t i) {
  switch (i % 3) {
  case 0:
    store.put_actor(crash_actor(i));
    break;
  case 1:
    register_actor(store, crash_actor(i));
    break;
  default:
    store.kv_put("crash", "key-" + std::to_string(i), std::to_string(i * i));
  }
}

/// Fails the test unless write `i` is in `store` as it was written.
void expect_record(control_store& store, std::uint64_t i) {
  switch (i % 3) {
  case 0:
    BOOST_TEST((store.get_actor(sample_actor_id(i)) == crash_actor(i)),
               "acknowledged actor " << i << " lost");
    break;
  case 1: {
    auto a = crash_actor(i);
    BOOST_TEST((store.get_actor(a.actor) == a),
               "acknowledged actor " << i << " lost");
    BOOST_TEST((store.get_named_actor(a.ns, a.name) == a.actor),
               "acknowledged name of actor " << i << " lost");
    break;
  }
  default:
    BOOST_TEST((store.kv_get("crash", "key-" + std::to_string(i)) ==
                std::to_string(i * i)),
               "acknowledged kv entry " << i << " lost");
  }
}

/// A writer process whose stdout is the read end `fd`.
struct writer_process {
  pid_t pid = -1;
  int fd = -1;

  ~writer_process() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    if (fd >= 0)
      ::close(fd);
  }
};

void spawn_writer(writer_process& w, const std::string& path,
                  std::uint64_t first, bool sync) {
  int fds[2];
  BOOST_REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  std::string exe = "/proc/self/exe";
  auto first_text = std::to_string(first);
  std::string sync_text = sync ? "1" : "0";
  std::vector<char*> argv{exe.data(),
                          const_cast<char*>(crash_writer_flag),
                          const_cast<char*>(path.c_str()),
                          first_text.data(),
                          sync_text.data(),
                          nullptr};
  auto rc = ::posix_spawn(&w.pid, exe.c_str(), &actions, nullptr, argv.data(),
                          environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  w.fd = fds[0];
  BOOST_REQUIRE_MESSAGE(rc == 0, "posix_spawn: " << std::strerror(rc));
}

/// Reads acknowledgements from `fd` into `acked` until there are `want` or
/// the pipe closes; fails the test at `deadline`. Returns false on EOF.
bool read_acks(int fd, std::vector<std::uint64_t>& acked, std::size_t want,
               clock_type::time_point deadline) {
  std::string pending;
  while (acked.size() < want) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - clock_type::now());
    BOOST_REQUIRE_MESSAGE(left.count() > 0,
                          "writer stalled after " << acked.size() << " acks");
    pollfd p{fd, POLLIN, 0};
    auto ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR)
      continue;
    BOOST_REQUIRE(ready >= 0);
    if (ready == 0)
      continue;
    char buf[4096];
    auto n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR)
      continue;
    BOOST_REQUIRE(n >= 0);
    if (n == 0)
      return false;
    pending.append(buf, static_cast<std::size_t>(n));
    while (pending.size() >= 8) {
      std::uint64_t id;
      std::memcpy(&id, pending.data(), 8);
      acked.push_back(id);
      pending.erase(0, 8);
    }
  }
  return true;
}

/// One round: spawn a writer from `first`, SIGKILL it after `kill_after`
/// acknowledgements, collect every acknowledgement it sent before it died,
/// add them to `all_acked`, then reopen and check every write in it: this
/// round's and the earlier rounds'. Returns the next id to write.
std::uint64_t crash_round(const std::string& path, std::uint64_t first,
                          std::size_t kill_after, bool sync,
                          std::vector<std::uint64_t>& all_acked) {
  writer_process w;
  spawn_writer(w, path, first, sync);
  std::vector<std::uint64_t> acked;
  auto deadline = clock_type::now() + std::chrono::seconds{120};
  bool open = read_acks(w.fd, acked, kill_after, deadline);
  BOOST_REQUIRE_MESSAGE(open, "writer exited before it was killed");
  BOOST_REQUIRE(::kill(w.pid, SIGKILL) == 0);
  int status = 0;
  BOOST_REQUIRE(::waitpid(w.pid, &status, 0) == w.pid);
  w.pid = -1;
  BOOST_TEST((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL));
  // Acknowledgements already in the pipe count too: read to EOF.
  read_acks(w.fd, acked, SIZE_MAX, deadline);
  BOOST_TEST_MESSAGE("killed after " << acked.size() << " acknowledged writes");
  for (std::size_t k = 0; k < acked.size(); ++k)
    BOOST_REQUIRE_EQUAL(acked[k], first + k);
  auto store = control_store::open(options_for(path));
  auto rec = store.recover();
  BOOST_TEST(rec.report.empty());
  all_acked.insert(all_acked.end(), acked.begin(), acked.end());
  for (auto i : all_acked)
    expect_record(store, i);
  // The write in flight at the kill may or may not be there; the next round
  // starts after it.
  return first + acked.size() + 1;
}

} // namespace

namespace prism::persistence::testing {

int run_crash_writer(int argc, char** argv) {
  if (argc != 5)
    return 2;
  auto opts = options_for(argv[2]);
  auto first = std::stoull(argv[3]);
  opts.sync = std::string{argv[4]} == "1";
  try {
    auto store = control_store::open(opts);
    for (auto i = first;; ++i) {
      write_record(store, i);
      if (::write(STDOUT_FILENO, &i, sizeof(i)) != sizeof(i))
        return 3;
    }
  } catch (const std::exception& e) {
    ::dprintf(STDERR_FILENO, "crash writer: %s\n", e.what());
    return 1;
  }
}

} // namespace prism::persistence::testing

BOOST_AUTO_TEST_SUITE(crash)

BOOST_AUTO_TEST_CASE(sigkilled_writer_loses_no_acknowledged_write) {
  temp_dir dir;
  std::mt19937 rng{std::random_device{}()};
  std::uint64_t next = 0;
  std::vector<std::uint64_t> acked;
  for (int round = 0; round < 5; ++round) {
    BOOST_TEST_CONTEXT("round " << round) {
      next = crash_round(dir.path(), next, 200 + rng() % 300, true, acked);
    }
  }
}

BOOST_AUTO_TEST_CASE(sigkilled_unsynced_writer_loses_no_acknowledged_write) {
  // Without fsync an acknowledged write is in the operating system's hands:
  // it survives the death of the process, which is what this checks.
  temp_dir dir;
  std::mt19937 rng{std::random_device{}()};
  std::uint64_t next = 0;
  std::vector<std::uint64_t> acked;
  for (int round = 0; round < 3; ++round) {
    BOOST_TEST_CONTEXT("round " << round) {
      next = crash_round(dir.path(), next, 1000 + rng() % 2000, false, acked);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
