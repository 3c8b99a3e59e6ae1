// Refs passed on between borrowers, over links of unequal speed. The driver
// owns an object, and actor `b` comes to borrow it from another holder:
//
// - in a call from actor `a`, which lent it and lets go of it once `b` has
//   answered;
// - inside another object (a box, which actor `c` made and hands over),
//   which `b` reads and lets go of: `c`, which held the object for the box,
//   lets go of it once the box is freed.
//
// `b` registers with the driver over its own connection to it. Made slow,
// that registration must still reach the driver before the other holder's
// release does, or the object is freed while `b` holds it.
//
// The test program runs each case again in a network namespace of its own
// (`unshare --net`), where traffic control on the namespace's loopback
// slows only the connections from `b` to the driver. It needs root,
// iproute2 (`tc`, `ss`) and the kernel's `htb` and `u32`; CI runs as root.

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include <prism/prism.hpp>

#include "worker_env.hpp"

namespace borrower_link_test {

using refs = std::vector<prism::object_ref<int>>;

constexpr auto result_timeout = std::chrono::seconds{60};

/// Keeps the refs it is given after the call that gave them returns.
class holder {
public:
  static holder* create() {
    return new holder;
  }

  int keep(refs r) {
    kept_.insert(kept_.end(), r.begin(), r.end());
    return static_cast<int>(kept_.size());
  }

  /// Passes what it holds on to `next` and lets go of it once answered.
  int hand_over(prism::actor_handle<holder> next) {
    auto n = prism::get(next.task(&holder::keep).remote(kept_), result_timeout);
    kept_.clear();
    return n;
  }

  /// Puts what it holds into an object of its own, which holds it from
  /// then on.
  int box_kept() {
    box_ = prism::put(kept_);
    kept_.clear();
    return 1;
  }

  /// Hands over the object `box_kept` made and lets go of it: the caller
  /// holds it alone.
  prism::object_ref<refs> hand_box() {
    return std::exchange(box_, {});
  }

  /// Gets the box that `from` hands over, keeps the refs inside it, and
  /// lets go of the box.
  int unbox_from(prism::actor_handle<holder> from) {
    auto box =
        prism::get(from.task(&holder::hand_box).remote(), result_timeout);
    return keep(prism::get(box, result_timeout));
  }

  /// Makes another holder, which this actor creates: the driver has not
  /// called it.
  prism::actor_handle<holder> make_holder() {
    return prism::actor(holder::create).remote();
  }

  int sum() {
    int total = 0;
    for (auto& r : kept_)
      total += prism::get(r, result_timeout);
    return total;
  }

  int pid() const {
    return static_cast<int>(::getpid());
  }

private:
  refs kept_;
  prism::object_ref<refs> box_;
};

} // namespace borrower_link_test

PRISM_REMOTE(borrower_link_test::holder::create,
             &borrower_link_test::holder::keep,
             &borrower_link_test::holder::hand_over,
             &borrower_link_test::holder::box_kept,
             &borrower_link_test::holder::hand_box,
             &borrower_link_test::holder::unbox_from,
             &borrower_link_test::holder::make_holder,
             &borrower_link_test::holder::sum,
             &borrower_link_test::holder::pid);

namespace borrower_link_test {

/// Set when the test program runs in a network namespace of its own.
constexpr const char* own_network = "PRISM_TEST_OWN_NETWORK";

/// An embedded cluster of 2 CPUs whose workers are processes, each actor in
/// a worker process of its own: each talks to the driver over a connection
/// of its own (an instance process's host talks for several).
struct worker_processes {
  worker_processes() {
    prism::config cfg;
    cfg.num_cpus = 2;
    cfg.worker_processes = true;
    cfg.actor_instance_processes = false;
    prism::init(cfg);
  }

  ~worker_processes() {
    prism::shutdown();
  }

  worker_processes(const worker_processes&) = delete;
  worker_processes& operator=(const worker_processes&) = delete;
};

bool sh(const std::string& command) {
  return std::system((command + " >/dev/null 2>&1").c_str()) == 0;
}

std::string output_of(const std::string& command) {
  std::string out;
  if (FILE* p = ::popen(command.c_str(), "r")) {
    std::array<char, 4096> buf{};
    while (auto n = std::fread(buf.data(), 1, buf.size(), p))
      out.append(buf.data(), n);
    ::pclose(p);
  }
  return out;
}

struct tcp_socket {
  std::string local;
  std::string peer;
  std::vector<int> pids;
};

/// The established TCP sockets of this namespace and the processes that
/// have each open.
std::vector<tcp_socket> tcp_sockets() {
  static const std::regex line{R"(^\S+\s+\S+\s+(\S+)\s+(\S+)\s+users:(.*)$)"};
  static const std::regex pid{R"(pid=(\d+))"};
  std::vector<tcp_socket> out;
  auto text = output_of("ss -tnpH state established");
  std::size_t at = 0;
  while (at < text.size()) {
    auto end = text.find('\n', at);
    if (end == std::string::npos)
      end = text.size();
    std::smatch m;
    std::string l = text.substr(at, end - at);
    if (std::regex_match(l, m, line)) {
      tcp_socket s{m[1], m[2], {}};
      std::string users = m[3];
      for (std::sregex_iterator i{users.begin(), users.end(), pid}, e; i != e;
           ++i)
        s.pids.push_back(std::stoi((*i)[1]));
      out.push_back(std::move(s));
    }
    at = end + 1;
  }
  return out;
}

bool has_pid(const tcp_socket& s, int pid) {
  return std::find(s.pids.begin(), s.pids.end(), pid) != s.pids.end();
}

std::string port_of(const std::string& address) {
  return address.substr(address.rfind(':') + 1);
}

/// The ports (from, to) of each connection between process `from` and
/// process `to`, seen from `from`.
std::vector<std::pair<std::string, std::string>> connections(int from, int to) {
  std::vector<std::pair<std::string, std::string>> out;
  auto sockets = tcp_sockets();
  for (const auto& s : sockets) {
    if (!has_pid(s, from))
      continue;
    for (const auto& t : sockets)
      if (has_pid(t, to) && t.local == s.peer && t.peer == s.local)
        out.emplace_back(port_of(s.local), port_of(s.peer));
  }
  return out;
}

/// Slows what is sent over the given connections of this namespace's
/// loopback to about a kilobyte a second; everything else goes at full
/// speed.
void slow_down(const std::vector<std::pair<std::string, std::string>>& links) {
  sh("tc qdisc del dev lo root"); // what a case before in this run set
  BOOST_REQUIRE_MESSAGE(
      sh("tc qdisc add dev lo root handle 1: htb default 10 && "
         "tc class add dev lo parent 1: classid 1:10 htb rate 10gbit && "
         "tc class add dev lo parent 1: classid 1:20 htb rate 8kbit ceil "
         "8kbit burst 1 cburst 1"),
      "cannot shape the loopback: the test needs tc and the kernel's htb");
  for (const auto& [sport, dport] : links)
    BOOST_REQUIRE_MESSAGE(
        sh("tc filter add dev lo parent 1: protocol ip prio 1 u32 match ip "
           "sport " +
           sport + " 0xffff match ip dport " + dport + " 0xffff flowid 1:20"),
        "cannot filter the loopback: the test needs the kernel's u32");
}

/// Whether this run of the test program is the one in a namespace of its
/// own. If not, runs `test` (suite/case) again there, alone, and checks
/// that it passed.
bool in_own_network(const std::string& test) {
  if (std::getenv(own_network) != nullptr) {
    BOOST_REQUIRE_MESSAGE(sh("ip link set lo up"),
                          "cannot bring up the namespace's loopback");
    return true;
  }
  std::array<char, 4096> exe{};
  auto n = ::readlink("/proc/self/exe", exe.data(), exe.size() - 1);
  BOOST_REQUIRE(n > 0);
  ::setenv(own_network, "1", 1);
  auto rc = std::system(("unshare --net " +
                         std::string{exe.data(), static_cast<size_t>(n)} +
                         " --run_test=borrower_link/" + test)
                            .c_str());
  ::unsetenv(own_network);
  BOOST_TEST(rc == 0, "the run in a namespace of its own failed: " << rc);
  return false;
}

/// Slows what the process of actor `h` sends the driver from now on.
void slow_to_driver(const prism::actor_handle<holder>& h) {
  auto pid = prism::get(h.task(&holder::pid).remote(), result_timeout);
  std::vector<std::pair<std::string, std::string>> links;
  BOOST_REQUIRE_MESSAGE(worker_test::eventually(std::chrono::seconds{10},
                                                [&] {
                                                  links = connections(
                                                      pid, ::getpid());
                                                  return !links.empty();
                                                }),
                        "the actor has no connection to the driver");
  slow_down(links);
}

/// Milliseconds since `start`.
long ms_since(std::chrono::steady_clock::time_point start) {
  return static_cast<long>(
      std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::steady_clock::now() - start)
          .count());
}

} // namespace borrower_link_test

BOOST_AUTO_TEST_SUITE(borrower_link)

// The second borrower's registration crawls to the driver; its answer to the
// first borrower, and the first borrower's release, do not.
BOOST_AUTO_TEST_CASE(a_borrower_answers_once_the_owner_counted_it) {
  namespace t = borrower_link_test;
  if (!t::in_own_network("a_borrower_answers_once_the_owner_counted_it"))
    return;
  t::worker_processes cluster;
  auto a = prism::actor(t::holder::create).remote();
  auto b =
      prism::get(a.task(&t::holder::make_holder).remote(), t::result_timeout);
  {
    auto x = prism::put(9);
    BOOST_TEST(prism::get(a.task(&t::holder::keep).remote(t::refs{x}),
                          t::result_timeout) == 1);
  }
  t::slow_to_driver(b);
  auto handed = std::chrono::steady_clock::now();
  BOOST_TEST(prism::get(a.task(&t::holder::hand_over).remote(b),
                        t::result_timeout) == 1);
  BOOST_TEST_MESSAGE("handed over in " << t::ms_since(handed) << " ms");
  BOOST_TEST(prism::get(b.task(&t::holder::sum).remote(), t::result_timeout) ==
             9);
}

// The driver's object is inside another process's object (actor `c`'s box),
// which `b` reads and lets go of: `b`'s registration for the inner object
// crawls to the driver, while the end of `c`'s, once the box is freed, does
// not.
BOOST_AUTO_TEST_CASE(a_ref_read_from_a_box_outlives_the_box) {
  namespace t = borrower_link_test;
  if (!t::in_own_network("a_ref_read_from_a_box_outlives_the_box"))
    return;
  t::worker_processes cluster;
  auto b = prism::actor(t::holder::create).remote();
  auto c = prism::actor(t::holder::create).remote();
  {
    auto x = prism::put(9);
    BOOST_TEST(prism::get(c.task(&t::holder::keep).remote(t::refs{x}),
                          t::result_timeout) == 1);
  }
  BOOST_TEST(prism::get(c.task(&t::holder::box_kept).remote(),
                        t::result_timeout) == 1);
  t::slow_to_driver(b);
  auto read = std::chrono::steady_clock::now();
  BOOST_TEST(prism::get(b.task(&t::holder::unbox_from).remote(c),
                        t::result_timeout) == 1);
  BOOST_TEST_MESSAGE("read from the box in " << t::ms_since(read) << " ms");
  BOOST_TEST(prism::get(b.task(&t::holder::sum).remote(), t::result_timeout) ==
             9);
}

BOOST_AUTO_TEST_SUITE_END()
