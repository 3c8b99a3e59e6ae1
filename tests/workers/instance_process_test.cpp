// Actors of processes of their own, as instance processes: each instance
// runs in a process forked for it alone, with no actor system of its own,
// and its host runs in a worker process of its job that hosts others too.
// What the instance's process runs is its user's alone: a crash or an exit
// there ends that actor only; its host ends it with the actor; and a peer
// that is not one of its instance processes gets nothing from the host's
// socket.

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <prism/prism.hpp>

#include "worker/instance_wire.hpp"
#include "worker_env.hpp"

namespace instance_process_test {

/// Counts, says where it runs, and fails in the ways asked.
class probe {
public:
  static probe* create(int start) {
    return new probe{start};
  }

  int add(int n) {
    total_ += n;
    return total_;
  }

  int pid() {
    return static_cast<int>(::getpid());
  }

  /// The threads of its process.
  int threads() {
    int n = 0;
    for (auto& e : std::filesystem::directory_iterator{"/proc/self/task"})
      n += e.is_directory() ? 1 : 0;
    return n;
  }

  /// The TCP sockets its process has open (an actor system listens and
  /// connects over TCP; an instance process talks to its host alone).
  int tcp_sockets() {
    std::set<std::string> inodes;
    for (const char* table : {"/proc/self/net/tcp", "/proc/self/net/tcp6"}) {
      std::ifstream in{table};
      std::string line;
      std::getline(in, line);
      while (std::getline(in, line)) {
        std::istringstream fields{line};
        std::string field;
        for (int i = 0; i < 10 && fields >> field; ++i) {
        }
        inodes.insert(field);
      }
    }
    int n = 0;
    for (auto& e : std::filesystem::directory_iterator{"/proc/self/fd"}) {
      std::error_code ec;
      auto target = std::filesystem::read_symlink(e.path(), ec).string();
      if (target.rfind("socket:[", 0) == 0 &&
          inodes.contains(target.substr(8, target.size() - 9)))
        ++n;
    }
    return n;
  }

  /// Puts `n` and reads it back: Prism's API from the instance's process.
  int put_and_get(int n) {
    return prism::get(prism::put(n), std::chrono::seconds{30});
  }

  int crash() {
    std::abort();
  }

  int quit(int code) {
    std::exit(code);
  }

private:
  explicit probe(int start) : total_(start) {}
  int total_;
};

} // namespace instance_process_test

PRISM_REMOTE(instance_process_test::probe::create,
             &instance_process_test::probe::add,
             &instance_process_test::probe::pid,
             &instance_process_test::probe::threads,
             &instance_process_test::probe::tcp_sockets,
             &instance_process_test::probe::put_and_get,
             &instance_process_test::probe::crash,
             &instance_process_test::probe::quit);

namespace instance_process_test {

using namespace std::chrono_literals;
using worker_test::eventually;
using worker_test::process_gone;

constexpr auto answer_timeout = std::chrono::seconds{30};

/// An embedded cluster of 2 CPUs whose workers are processes.
struct instance_cluster {
  explicit instance_cluster(bool instance_processes = true,
                            std::uint32_t idle_timeout_ms = 300) {
    std::string asan = std::getenv("ASAN_OPTIONS") != nullptr
                           ? std::getenv("ASAN_OPTIONS")
                           : "";
    ::setenv("ASAN_OPTIONS", (asan + ":handle_segv=0:handle_abort=0").c_str(),
             1);
    prism::config cfg;
    cfg.num_cpus = 2;
    cfg.worker_processes = true;
    cfg.idle_worker_timeout_ms = idle_timeout_ms;
    cfg.actor_instance_processes = instance_processes;
    prism::init(cfg);
  }

  ~instance_cluster() {
    prism::shutdown();
  }
};

int pid_of(const prism::actor_handle<probe>& a) {
  return prism::get(a.task(&probe::pid).remote(), answer_timeout);
}

/// The pids of the worker processes of the cluster that host actors.
std::vector<int> host_pids() {
  std::vector<int> pids;
  for (auto& e : prism::state::list(prism::state::kind::workers).entries)
    if (e["actors"] != "0" && !e["pid"].empty())
      pids.push_back(std::stoi(e["pid"]));
  return pids;
}

/// The state of actor `a`, as the control store lists it.
prism::state::entry entry_of(const prism::actor_handle<probe>& a) {
  auto e = prism::state::get(prism::state::kind::actors, a.id().hex());
  BOOST_REQUIRE(e.has_value());
  return *e;
}

/// The names of the abstract sockets instance processes connect to.
std::vector<std::string> instance_sockets() {
  std::ifstream in{"/proc/net/unix"};
  std::string line;
  std::set<std::string> names;
  while (std::getline(in, line)) {
    auto at = line.find("@prism-instances-");
    if (at != std::string::npos)
      names.insert(line.substr(at + 1));
  }
  return {names.begin(), names.end()};
}

/// Connects to the abstract socket `name`; -1 if it cannot. A read waits
/// 10 s at most.
int connect_to(const std::string& name) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  timeval wait{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path + 1, name.data(), name.size());
  auto len =
      static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

} // namespace instance_process_test

using namespace instance_process_test;

BOOST_AUTO_TEST_SUITE(instance_processes)

BOOST_AUTO_TEST_CASE(an_actor_of_its_own_process_runs_without_an_actor_system) {
  instance_cluster cluster;
  auto a = prism::actor(probe::create).remote(1);
  auto b = prism::actor(probe::create).remote(2);
  BOOST_TEST(prism::get(a.task(&probe::add).remote(10), answer_timeout) == 11);
  BOOST_TEST(prism::get(b.task(&probe::add).remote(10), answer_timeout) == 12);
  // A process each, neither the driver's nor their hosts'.
  auto pa = pid_of(a);
  auto pb = pid_of(b);
  BOOST_TEST(pa != pb);
  BOOST_TEST(pa != static_cast<int>(::getpid()));
  for (auto host : host_pids()) {
    BOOST_TEST(host != pa);
    BOOST_TEST(host != pb);
  }
  // No actor system: a thread that reads its host, one that runs its
  // calls; no connection but its host's socket.
  BOOST_TEST(prism::get(a.task(&probe::threads).remote(), answer_timeout) <= 3);
  BOOST_TEST(prism::get(a.task(&probe::tcp_sockets).remote(), answer_timeout) ==
             0);
  // The control store lists the instance's own process.
  BOOST_TEST(entry_of(a)["pid"] == std::to_string(pa));
  // Prism's API works from there, through its host.
  BOOST_TEST(
      prism::get(a.task(&probe::put_and_get).remote(42), answer_timeout) == 42);
}

BOOST_AUTO_TEST_CASE(off_an_actor_of_its_own_process_has_a_worker_process) {
  instance_cluster cluster{false};
  auto a = prism::actor(probe::create).remote(1);
  auto pid = pid_of(a);
  // Its own worker process, with an actor system and its connections.
  auto hosts = host_pids();
  BOOST_TEST((std::find(hosts.begin(), hosts.end(), pid) != hosts.end()));
  BOOST_TEST(prism::get(a.task(&probe::threads).remote(), answer_timeout) > 3);
}

BOOST_AUTO_TEST_CASE(a_crash_in_an_instance_process_restarts_that_actor_only) {
  instance_cluster cluster;
  auto a = prism::actor(probe::create).max_restarts(1).remote(5);
  auto b = prism::actor(probe::create).remote(7);
  auto pa = pid_of(a);
  auto pb = pid_of(b);
  auto hosts = host_pids();
  // The call that crashed fails as a crash; the actor starts again, anew.
  BOOST_CHECK_THROW(prism::get(a.task(&probe::crash).remote(), answer_timeout),
                    prism::error);
  BOOST_TEST(eventually(10s, [&] { return process_gone(pa); }));
  BOOST_TEST(prism::get(a.task(&probe::add).remote(1), answer_timeout) == 6);
  BOOST_TEST(pid_of(a) != pa);
  auto e = entry_of(a);
  BOOST_TEST(e["restarts"] == "1");
  BOOST_REQUIRE(!e.history.empty());
  auto cause = prism::state::entry{e.history.front(), {}}["cause"];
  BOOST_TEST(cause.find("signal 6") != std::string::npos, cause);
  // Its neighbour and their hosts go on.
  BOOST_TEST(pid_of(b) == pb);
  BOOST_TEST(prism::get(b.task(&probe::add).remote(1), answer_timeout) == 8);
  for (auto host : hosts)
    BOOST_TEST(!process_gone(host));
}

BOOST_AUTO_TEST_CASE(an_exit_in_an_instance_process_ends_its_actor) {
  instance_cluster cluster;
  auto a = prism::actor(probe::create).remote(0);
  auto pa = pid_of(a);
  BOOST_CHECK_THROW(prism::get(a.task(&probe::quit).remote(3), answer_timeout),
                    prism::error);
  BOOST_TEST(eventually(10s, [&] { return process_gone(pa); }));
  BOOST_TEST(eventually(10s, [&] { return entry_of(a)["state"] == "DEAD"; }));
  auto cause = entry_of(a)["death_cause"];
  BOOST_TEST(cause.find("code 3") != std::string::npos, cause);
}

BOOST_AUTO_TEST_CASE(a_killed_actors_instance_process_exits) {
  // Hosts that idle stay: the instance process goes with its actor, not
  // with a host that stopped.
  instance_cluster cluster{true, 60'000};
  auto a = prism::actor(probe::create).remote(0);
  auto pa = pid_of(a);
  auto hosts = host_pids();
  prism::kill(a);
  BOOST_TEST(eventually(10s, [&] { return process_gone(pa); }));
  for (auto host : hosts)
    BOOST_TEST(!process_gone(host));
}

BOOST_AUTO_TEST_CASE(instance_processes_end_with_their_host) {
  instance_cluster cluster;
  auto a = prism::actor(probe::create).max_restarts(1).remote(1);
  auto pa = pid_of(a);
  auto hosts = host_pids();
  BOOST_REQUIRE(hosts.size() == 1u);
  ::kill(hosts.front(), SIGKILL);
  BOOST_TEST(eventually(10s, [&] { return process_gone(pa); }));
  // Lost with its host, the actor starts again where it may.
  BOOST_TEST(eventually(20s, [&] {
    try {
      return prism::get(a.task(&probe::add).remote(1), 2s) == 2;
    } catch (const prism::error&) {
      return false;
    }
  }));
  BOOST_TEST(pid_of(a) != pa);
}

BOOST_AUTO_TEST_CASE(a_stranger_on_the_instance_socket_gets_nothing) {
  instance_cluster cluster;
  auto a = prism::actor(probe::create).remote(1);
  BOOST_TEST(prism::get(a.task(&probe::add).remote(1), answer_timeout) == 2);
  auto sockets = instance_sockets();
  BOOST_REQUIRE(!sockets.empty());
  for (const auto& name : sockets) {
    // Bytes that are no frame.
    int junk = connect_to(name);
    BOOST_REQUIRE(junk >= 0);
    std::string garbage(4096, '\xff');
    BOOST_TEST(::write(junk, garbage.data(), garbage.size()) > 0);
    // A hello that names no instance this host waits for.
    int liar = connect_to(name);
    BOOST_REQUIRE(liar >= 0);
    namespace wire = prism::actors::instance_wire;
    auto frame =
        wire::encode(wire::kind::hello, wire::hello{"not-a-token", ::getpid()});
    BOOST_TEST(::write(liar, frame.data(), frame.size()) > 0);
    // The host closes both (a read ends the stream, not its wait).
    char c;
    BOOST_TEST(::read(junk, &c, 1) == 0);
    BOOST_TEST(::read(liar, &c, 1) == 0);
    ::close(junk);
    ::close(liar);
  }
  // Its instances go on.
  BOOST_TEST(prism::get(a.task(&probe::add).remote(1), answer_timeout) == 3);
  auto b = prism::actor(probe::create).remote(5);
  BOOST_TEST(prism::get(b.task(&probe::add).remote(1), answer_timeout) == 6);
}

BOOST_AUTO_TEST_SUITE_END()
