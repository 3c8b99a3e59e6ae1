// Fork servers: once a server of a program serves, a node's worker
// processes of that program are forked from it instead of each started by
// exec; the server reports how each ended, a node that needs it no more
// lets it go, and workers outlive a server that dies.

#include <boost/test/unit_test.hpp>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <prism/prism.hpp>
#include <prism/testing.hpp>

#include "raylet/process_launcher.hpp"
#include "worker/worker_process.hpp"
#include "worker_env.hpp"

namespace fork_server_test {

using namespace std::chrono_literals;
using prism::actors::process_launcher;
using worker_test::eventually;
using worker_test::process_gone;

namespace fork_test {

int parent_pid() {
  return static_cast<int>(::getppid());
}

/// An actor whose instance lives in a worker process of its own.
class probe {
public:
  static probe* create() {
    return new probe;
  }

  int parent() const {
    return static_cast<int>(::getppid());
  }

  int twice(int x) const {
    return 2 * x;
  }

  int crash() {
    std::raise(SIGSEGV);
    return 0;
  }
};

} // namespace fork_test

PRISM_REMOTE(fork_test::parent_pid, fork_test::probe::create,
             &fork_test::probe::parent, &fork_test::probe::twice,
             &fork_test::probe::crash);

namespace {

/// The parent of a process, from /proc (0 if it is gone).
pid_t parent_of(pid_t pid) {
  std::ifstream in{"/proc/" + std::to_string(pid) + "/stat"};
  std::string stat{std::istreambuf_iterator<char>{in}, {}};
  auto close = stat.rfind(')');
  if (close == std::string::npos)
    return 0;
  char state = 0;
  int ppid = 0;
  if (std::sscanf(stat.c_str() + close + 1, " %c %d", &state, &ppid) != 2)
    return 0;
  return ppid;
}

/// The processes whose parent is `pid`.
std::set<pid_t> children_of(pid_t pid) {
  std::set<pid_t> result;
  for (auto& entry : std::filesystem::directory_iterator{"/proc"}) {
    auto name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos)
      continue;
    auto child = static_cast<pid_t>(std::stoi(name));
    if (parent_of(child) == pid)
      result.insert(child);
  }
  return result;
}

std::string program_of(pid_t pid) {
  char buf[4096];
  auto n = ::readlink(("/proc/" + std::to_string(pid) + "/exe").c_str(), buf,
                      sizeof(buf) - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "";
}

/// A port on loopback for worker processes to register at: `silent`, it
/// accepts connections and never speaks, so a worker waits there, alive
/// (up to its 10 s to register); else it refuses them, and a worker exits
/// with code 70 at once.
struct door {
  explicit door(bool silent) {
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    if (silent)
      ::listen(fd, 64);
    socklen_t len = sizeof(addr);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    port = ntohs(addr.sin_port);
  }

  ~door() {
    ::close(fd);
  }

  std::vector<std::string> environment() const {
    return prism::actors::worker_environment(
        "token", "127.0.0.1:" + std::to_string(port), {});
  }

  /// What every worker of a node that uses this door gets.
  std::vector<std::string> common_environment() const {
    return prism::actors::worker_common_environment(
        "127.0.0.1:" + std::to_string(port), {});
  }

  int fd = -1;
  int port = 0;
};

/// How the processes a launcher started ended, as it reported them.
struct exits {
  process_launcher::exit_callback callback() {
    return [this](pid_t pid, const std::string& how) {
      std::lock_guard<std::mutex> guard{mu};
      reported[pid] = how;
    };
  }

  std::optional<std::string> of(pid_t pid) {
    std::lock_guard<std::mutex> guard{mu};
    auto i = reported.find(pid);
    if (i == reported.end())
      return std::nullopt;
    return i->second;
  }

  bool has(pid_t pid) {
    return of(pid).has_value();
  }

  std::mutex mu;
  std::map<pid_t, std::string> reported;
};

/// Launches workers of this program that wait at `g` until one is forked
/// (its program's fork server serves), killing the others; returns that
/// one, or pid 0 if none was within 20 s. With `own_env`, the launcher has
/// the door's common entries, and a launch adds only its token.
process_launcher::launched launch_forked(process_launcher& launcher,
                                         const door& g, exits& e,
                                         bool own_env = false) {
  auto program = prism::actors::this_program();
  auto env =
      own_env
          ? std::vector<std::string>{prism::actors::worker_token_entry("token")}
          : g.environment();
  auto deadline = std::chrono::steady_clock::now() + 20s;
  while (std::chrono::steady_clock::now() < deadline) {
    auto started = launcher.launch(program, env, e.callback());
    if (started.forked)
      return started;
    launcher.kill(started.pid);
    // Polls for the server to serve; its start is the condition.
    std::this_thread::sleep_for(20ms);
  }
  return {};
}

/// A launcher whose fork servers keep spares, which wait at a silent door,
/// and its first forked worker.
struct with_spares {
  explicit with_spares(std::size_t n)
      : launcher{true, process_launcher::default_fork_answer_timeout,
                 g.common_environment(), n},
        first{launch_forked(launcher, g, e, true)},
        server{parent_of(first.pid)}, workers{first.pid} {}

  /// A launch with its own token alone, as a node's.
  process_launcher::launched launch() {
    return launcher.launch(
        program, {prism::actors::worker_token_entry("token")}, e.callback());
  }

  /// The server's children that are not workers.
  std::set<pid_t> spares() const {
    auto c = children_of(server);
    for (auto pid : workers)
      c.erase(pid);
    return c;
  }

  door g{true};
  exits e;
  process_launcher launcher;
  process_launcher::launched first;
  pid_t server;
  std::set<pid_t> workers;
  prism::actors::worker_program program = prism::actors::this_program();
};

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

} // namespace

BOOST_AUTO_TEST_SUITE(fork_servers)

BOOST_AUTO_TEST_CASE(workers_are_forked_from_a_server_of_their_program) {
  door g{true};
  exits e;
  process_launcher launcher;
  auto program = prism::actors::this_program();
  // The first starts by exec, as this process's child; it starts the server.
  auto first = launcher.launch(program, g.environment(), e.callback());
  BOOST_TEST(!first.forked);
  BOOST_TEST(parent_of(first.pid) == ::getpid());
  launcher.kill(first.pid);
  auto forked = launch_forked(launcher, g, e);
  BOOST_REQUIRE(forked.pid != 0);
  // Its parent is the server: this program, started by this process.
  auto server = parent_of(forked.pid);
  BOOST_TEST(server != ::getpid());
  BOOST_TEST(program_of(server) == program_of(::getpid()));
  BOOST_TEST(parent_of(server) == ::getpid());
  BOOST_TEST(!e.has(forked.pid));
  BOOST_TEST(launcher.kill(forked.pid));
  BOOST_TEST(eventually(10s, [&] { return e.has(forked.pid); }));
  BOOST_TEST(e.of(forked.pid).value_or("") ==
             "was killed by signal 9 (SIGKILL)");
  // The server serves on.
  BOOST_TEST(!process_gone(server));
}

BOOST_AUTO_TEST_CASE(a_forked_workers_exit_code_comes_from_its_server) {
  door live{true};
  door refusing{false};
  exits e;
  process_launcher launcher;
  auto forked = launch_forked(launcher, live, e);
  BOOST_REQUIRE(forked.pid != 0);
  launcher.kill(forked.pid);
  // A worker that cannot reach its door exits with code 70.
  auto program = prism::actors::this_program();
  auto next = launcher.launch(program, refusing.environment(), e.callback());
  BOOST_TEST(next.forked);
  BOOST_TEST(eventually(10s, [&] { return e.has(next.pid); }));
  BOOST_TEST(e.of(next.pid).value_or("") == "exited with code 70");
  BOOST_TEST(launcher.running() == 0u);
}

BOOST_AUTO_TEST_CASE(a_forgotten_programs_server_ends_after_its_workers) {
  door g{true};
  exits e;
  process_launcher launcher;
  auto program = prism::actors::this_program();
  auto forked = launch_forked(launcher, g, e);
  BOOST_REQUIRE(forked.pid != 0);
  auto server = parent_of(forked.pid);
  launcher.forget(program);
  // Its worker still runs, and reports its end through it.
  BOOST_TEST(!process_gone(server));
  launcher.kill(forked.pid);
  BOOST_TEST(eventually(10s, [&] { return e.has(forked.pid); }));
  BOOST_TEST(e.of(forked.pid).value_or("") ==
             "was killed by signal 9 (SIGKILL)");
  BOOST_TEST(eventually(10s, [&] { return process_gone(server); }));
  // A later launch starts by exec, and a new server with it.
  auto again = launcher.launch(program, g.environment(), e.callback());
  BOOST_TEST(!again.forked);
  launcher.kill(again.pid);
}

BOOST_AUTO_TEST_CASE(workers_outlive_a_fork_server_that_dies) {
  door g{true};
  exits e;
  process_launcher launcher;
  auto forked = launch_forked(launcher, g, e);
  BOOST_REQUIRE(forked.pid != 0);
  auto server = parent_of(forked.pid);
  ::kill(server, SIGKILL);
  BOOST_TEST(eventually(10s, [&] { return process_gone(server); }));
  BOOST_TEST(!process_gone(forked.pid));
  BOOST_TEST(!e.has(forked.pid));
  // Its end is seen, though how it ended went with its server.
  BOOST_TEST(launcher.kill(forked.pid));
  BOOST_TEST(eventually(10s, [&] { return e.has(forked.pid); }));
  BOOST_TEST(contains(e.of(forked.pid).value_or(""), "fork server"));
  // The program gets a new server.
  auto next = launch_forked(launcher, g, e);
  BOOST_REQUIRE(next.pid != 0);
  BOOST_TEST(parent_of(next.pid) != server);
  launcher.kill(next.pid);
}

// A server keeps spares: processes forked ahead of requests, which prepare
// while they wait (at the silent door they wait there, alive) and take
// requests first. They end with their server.
BOOST_AUTO_TEST_CASE(a_server_hands_requests_to_spares_forked_ahead) {
  with_spares s{2};
  BOOST_REQUIRE(s.first.pid != 0);
  // Two wait beside the worker (forked on request, or a spare the server
  // forked another for).
  BOOST_TEST(eventually(10s, [&] { return s.spares().size() == 2u; }));
  auto waiting = s.spares();
  // The next launch takes one of them, and the server forks another.
  auto next = s.launch();
  BOOST_TEST(next.forked);
  BOOST_TEST(next.spare);
  BOOST_TEST(waiting.count(next.pid) == 1u);
  s.workers.insert(next.pid);
  BOOST_TEST(eventually(10s, [&] { return s.spares().size() == 2u; }));
  for (auto pid : s.spares())
    waiting.insert(pid);
  waiting.erase(next.pid);
  // The node never hears of a spare's end, only of its workers'.
  s.launcher.forget(s.program);
  for (auto pid : s.workers)
    BOOST_TEST(s.launcher.kill(pid));
  BOOST_TEST(eventually(10s, [&] { return s.e.has(next.pid); }));
  BOOST_TEST(eventually(10s, [&] { return process_gone(s.server); }));
  // A spare still waiting for the silent door gives up within its 10 s.
  for (auto pid : waiting) {
    BOOST_TEST(eventually(30s, [&] { return process_gone(pid); }));
    BOOST_TEST(!s.e.has(pid));
  }
}

// A spare that ends before its request (it could not prepare) stops its
// server from keeping spares: requests are forked on request from then on.
BOOST_AUTO_TEST_CASE(a_spare_that_ends_early_stops_the_spares) {
  with_spares s{1};
  BOOST_REQUIRE(s.first.pid != 0);
  BOOST_REQUIRE(eventually(10s, [&] { return s.spares().size() == 1u; }));
  auto spare = *s.spares().begin();
  ::kill(spare, SIGKILL);
  BOOST_TEST(eventually(10s, [&] { return process_gone(spare); }));
  BOOST_TEST(eventually(10s, [&] { return s.spares().empty(); }));
  // Forked on request, and no spare comes back in the next second (the
  // server forks them 30 ms after its last request).
  auto next = s.launch();
  BOOST_TEST(next.forked);
  BOOST_TEST(!next.spare);
  BOOST_TEST(parent_of(next.pid) == s.server);
  s.workers.insert(next.pid);
  BOOST_TEST(!eventually(1s, [&] { return !s.spares().empty(); }));
  BOOST_TEST(!s.e.has(spare));
  for (auto pid : s.workers)
    s.launcher.kill(pid);
}

BOOST_AUTO_TEST_CASE(without_fork_servers_every_worker_starts_by_exec) {
  door g{true};
  exits e;
  process_launcher launcher{false};
  auto program = prism::actors::this_program();
  for (int i = 0; i < 5; ++i) {
    auto started = launcher.launch(program, g.environment(), e.callback());
    BOOST_TEST(!started.forked);
    BOOST_TEST(parent_of(started.pid) == ::getpid());
    launcher.kill(started.pid);
    // Time enough for a server to serve, were there one.
    std::this_thread::sleep_for(50ms);
  }
}

BOOST_AUTO_TEST_CASE(actors_in_forked_worker_processes_serve_and_crash_alone) {
  // Sanitizers pass a worker's own signals through, as a build without them
  // does.
  std::string asan =
      std::getenv("ASAN_OPTIONS") != nullptr ? std::getenv("ASAN_OPTIONS") : "";
  ::setenv("ASAN_OPTIONS", (asan + ":handle_segv=0").c_str(), 1);
  prism::config cfg;
  cfg.num_cpus = 2;
  cfg.worker_processes = true;
  prism::init(cfg);
  {
    // Each instance is a process of its own; once the program's server
    // serves, they are forked from it.
    std::optional<prism::actor_handle<fork_test::probe>> forked;
    auto deadline = std::chrono::steady_clock::now() + 30s;
    while (!forked && std::chrono::steady_clock::now() < deadline) {
      auto a = prism::actor(fork_test::probe::create).max_restarts(0).remote();
      if (prism::get(a.task(&fork_test::probe::parent).remote(), 60s) !=
          ::getpid())
        forked = a;
      else
        prism::kill(a);
    }
    BOOST_REQUIRE(forked.has_value());
    BOOST_TEST(prism::get(forked->task(&fork_test::probe::twice).remote(21),
                          60s) == 42);
    // Tasks run in forked workers too, once there are some.
    BOOST_TEST(prism::get(prism::task(fork_test::parent_pid).remote(), 60s) >
               0);
    // A crash ends only its own process: the server forks the next one.
    BOOST_CHECK_THROW(
        prism::get(forked->task(&fork_test::probe::crash).remote(), 60s),
        prism::actor_died_error);
    auto next = prism::actor(fork_test::probe::create).remote();
    BOOST_TEST(prism::get(next.task(&fork_test::probe::parent).remote(), 60s) !=
               ::getpid());
    BOOST_TEST(prism::get(next.task(&fork_test::probe::twice).remote(4), 60s) ==
               8);
  }
  prism::shutdown();
  ::setenv("ASAN_OPTIONS", asan.c_str(), 1);
}

// A launch waits for the fork server's answer without holding the node: with
// the server frozen (SIGSTOP) in the middle of a launch, the node still
// answers; the worker starts once the server is back.
BOOST_AUTO_TEST_CASE(a_node_answers_while_its_fork_server_hangs) {
  prism::config cfg;
  cfg.worker_processes = true;
  // Longer than every wait below: the launch waits on the frozen server
  // until the test lets it go.
  cfg.fork_answer_timeout_ms = 600000;
  prism::testing::local_cluster cluster{{{{"CPU", 2}}}, cfg};
  auto node = cluster.node(0);
  auto cpus_free = [&](double n) {
    auto r = cluster.available_resources(node);
    return r.has_value() && r->count("CPU") > 0 && r->at("CPU") == n;
  };
  // The program's fork server, once it serves: the parent of a forked
  // instance.
  pid_t server = 0;
  auto deadline = std::chrono::steady_clock::now() + 30s;
  while (server == 0 && std::chrono::steady_clock::now() < deadline) {
    auto a = prism::actor(fork_test::probe::create).max_restarts(0).remote();
    auto parent = prism::get(a.task(&fork_test::probe::parent).remote(), 60s);
    if (parent != ::getpid())
      server = parent;
    prism::kill(a);
  }
  BOOST_REQUIRE(server != 0);
  BOOST_REQUIRE(eventually(10s, [&] { return cpus_free(2); }));

  ::kill(server, SIGSTOP);
  auto held = prism::actor(fork_test::probe::create)
                  .resources({{"CPU", 1}})
                  .max_restarts(0)
                  .remote();
  auto answer = held.task(&fork_test::probe::parent).remote();
  // The node takes the instance's CPU as it launches its process, and
  // answers a status request while the launch waits for the server.
  bool answered = eventually(10s, [&] { return cpus_free(1); });
  bool waiting = prism::wait(std::vector{answer}, 1, 0ms).ready.empty();
  ::kill(server, SIGCONT);
  BOOST_TEST(answered);
  BOOST_TEST(waiting);
  // Once the server is back, it forks the worker.
  BOOST_TEST(prism::get(answer, 60s) == server);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace fork_server_test
