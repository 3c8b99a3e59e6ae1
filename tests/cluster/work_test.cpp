// Tasks and actors of an attached driver, run by worker processes that the
// nodes start from the driver's own program: this test program.

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <unistd.h>
#include <utility>
#include <vector>

#include <boost/test/unit_test.hpp>

#include <prism/prism.hpp>

#include "net/bulk.hpp"
#include "prism_command.hpp"
#include "raw_peer.hpp"

namespace work_test {

using namespace prism::cluster_test;
using namespace std::chrono_literals;

constexpr auto result_timeout = std::chrono::seconds{60};

int pid_here() {
  return static_cast<int>(::getpid());
}

int square(int x) {
  return x * x;
}

/// Squares 1..n in tasks of their own, wherever they run, and sums them.
int sum_of_squares(int n) {
  std::vector<prism::object_ref<int>> refs;
  for (int i = 1; i <= n; ++i)
    refs.push_back(prism::task(square).remote(i));
  int sum = 0;
  for (auto x : prism::get(refs, result_timeout))
    sum += x;
  return sum;
}

/// Gets each ref itself: refs inside values reach their owners across
/// processes.
int sum_refs(std::vector<prism::object_ref<int>> refs) {
  int sum = 0;
  for (const auto& ref : refs)
    sum += prism::get(ref, result_timeout);
  return sum;
}

/// A ref owned by the worker process this runs in.
prism::object_ref<int> put_here(int x) {
  return prism::put(x);
}

/// Runs on the node that holds the resource "where": the pid and the node.
std::pair<int, std::string> where_am_i() {
  return {pid_here(), prism::get_runtime_context().node.hex()};
}

/// `n` bytes in a pattern that shows any byte out of place.
std::string patterned(int n) {
  std::string s(static_cast<std::size_t>(n), '\0');
  for (std::size_t i = 0; i < s.size(); ++i)
    s[i] = static_cast<char>((i * 31 + i / 4093) % 251);
  return s;
}

/// Whether `s` is `patterned(s.size())`, read in a worker process.
bool is_patterned(const std::string& s) {
  return s == patterned(static_cast<int>(s.size()));
}

/// Whether the object behind the ref it borrowed is `patterned`.
bool borrowed_is_patterned(std::vector<prism::object_ref<std::string>> refs) {
  return is_patterned(prism::get(refs.at(0), result_timeout));
}

/// Aborts on its first attempt: a crash kills only its worker process.
int abort_first_attempt() {
  if (prism::get_runtime_context().attempt == 0)
    std::abort();
  return 42;
}

class tally {
public:
  static tally* create(int start) {
    return new tally(start);
  }

  int add(int x) {
    total_ += x;
    return total_;
  }

  int pid() const {
    return pid_here();
  }

private:
  explicit tally(int start) : total_(start) {}

  int total_;
};

PRISM_REMOTE(work_test::pid_here, work_test::square, work_test::sum_of_squares,
             work_test::sum_refs, work_test::where_am_i,
             work_test::abort_first_attempt, work_test::put_here,
             work_test::patterned, work_test::is_patterned,
             work_test::borrowed_is_patterned);
PRISM_REMOTE(work_test::tally::create, &work_test::tally::add,
             &work_test::tally::pid);

using namespace work_test;

BOOST_AUTO_TEST_SUITE(cluster_work)

BOOST_AUTO_TEST_CASE(tasks_run_in_worker_processes_of_the_drivers_program) {
  process_cluster cluster{attached_cluster(1)};
  auto pid = prism::get(prism::task(pid_here).remote(), result_timeout);
  BOOST_TEST(pid != pid_here());
  BOOST_TEST(pid != cluster.node_pid(0));
  BOOST_TEST(pid != cluster.node_pid(1));
  BOOST_TEST(prism::get(prism::task(square).remote(7), result_timeout) == 49);
  // Nested tasks, submitted from worker processes.
  BOOST_TEST(prism::get(prism::task(sum_of_squares).remote(10),
                        result_timeout) == 385);
  // Refs inside values, owned by the driver and by workers.
  std::vector<prism::object_ref<int>> refs;
  for (int i = 1; i <= 4; ++i)
    refs.push_back(prism::put(i));
  refs.push_back(prism::task(square).remote(3));
  BOOST_TEST(prism::get(prism::task(sum_refs).remote(refs), result_timeout) ==
             10 + 9);
  BOOST_TEST(cluster.sanitizer_reports() == "");
}

BOOST_AUTO_TEST_CASE(an_actor_lives_in_a_worker_process_of_the_head_node) {
  process_cluster cluster{attached_cluster(0)};
  auto counter = prism::actor(tally::create).remote(100);
  std::vector<prism::object_ref<int>> totals;
  for (int i = 1; i <= 50; ++i)
    totals.push_back(counter.task(&tally::add).remote(1));
  BOOST_TEST(prism::get(totals, result_timeout).back() == 150);
  auto pid = prism::get(counter.task(&tally::pid).remote(), result_timeout);
  BOOST_TEST(pid != pid_here());
  BOOST_TEST(pid != cluster.node_pid(0));
  BOOST_TEST(cluster.sanitizer_reports() == "");
}

// A burst of shared actors on two nodes: the control store tells each node
// of many at once, each node hands many to each of its shared processes at
// once, and each process reports many starts at once; every actor starts,
// once, with its own state, in a process per CPU of its node.
BOOST_AUTO_TEST_CASE(a_burst_of_shared_actors_starts_in_a_process_per_cpu) {
  auto o = attached_cluster(1);
  o.cpus = 2;
  process_cluster cluster{o};
  constexpr int n = 400;
  std::vector<prism::actor_handle<tally>> actors;
  for (int i = 0; i < n; ++i)
    actors.push_back(prism::actor(tally::create)
                         .isolation(prism::isolation::shared)
                         .remote(i));
  std::vector<prism::object_ref<int>> totals;
  std::vector<prism::object_ref<int>> pids;
  for (auto& a : actors) {
    totals.push_back(a.task(&tally::add).remote(1000));
    pids.push_back(a.task(&tally::pid).remote());
  }
  auto got = prism::get(totals, result_timeout);
  for (int i = 0; i < n; ++i)
    BOOST_TEST(got[i] == i + 1000);
  auto where = prism::get(pids, result_timeout);
  std::set<int> processes{where.begin(), where.end()};
  // Two nodes of two CPUs: at most two processes each, all of workers.
  BOOST_TEST(processes.size() >= 2u);
  BOOST_TEST(processes.size() <= 4u);
  BOOST_TEST(!processes.contains(pid_here()));
  BOOST_TEST(!processes.contains(cluster.node_pid(0)));
  BOOST_TEST(!processes.contains(cluster.node_pid(1)));
  BOOST_TEST(cluster.sanitizer_reports() == "");
}

// Work that runs behind another node than the head's: the driver's tasks
// spill there, and the driver, the worker processes there and the actor's
// process reach each other directly (through the head, CAF 0.17 would lose
// their messages).
BOOST_AUTO_TEST_CASE(work_behind_another_node_reaches_the_driver_directly) {
  process_cluster cluster{attached_cluster(0)};
  cluster.add_node({"--resources", R"({"far": 4})"});
  const prism::resource_map far{{"far", 1}};
  auto head_node =
      prism::get(prism::task(where_am_i).remote(), result_timeout).second;
  auto [pid, node] = prism::get(prism::task(where_am_i).resources(far).remote(),
                                result_timeout);
  BOOST_TEST(node != head_node);
  BOOST_TEST(pid != cluster.node_pid(1));
  // Nested tasks submitted there; refs owned by the driver read there.
  BOOST_TEST(prism::get(prism::task(sum_of_squares).resources(far).remote(10),
                        result_timeout) == 385);
  std::vector<prism::object_ref<int>> refs;
  for (int i = 1; i <= 4; ++i)
    refs.push_back(prism::put(i));
  BOOST_TEST(prism::get(prism::task(sum_refs).resources(far).remote(refs),
                        result_timeout) == 10);
  // A ref owned by a worker process there, read by the driver and by a
  // worker process on the head's node.
  auto inner = prism::get(prism::task(put_here).resources(far).remote(36),
                          result_timeout);
  BOOST_TEST(prism::get(inner, result_timeout) == 36);
  BOOST_TEST(prism::get(prism::task(sum_refs).remote(
                            std::vector<prism::object_ref<int>>{inner}),
                        result_timeout) == 36);
  // An actor in a worker process there, called in order.
  auto counter = prism::actor(tally::create).resources(far).remote(100);
  std::vector<prism::object_ref<int>> totals;
  for (int i = 1; i <= 50; ++i)
    totals.push_back(counter.task(&tally::add).remote(1));
  auto all = prism::get(totals, result_timeout);
  for (int i = 0; i < 50; ++i)
    BOOST_TEST(all[i] == 101 + i);
  auto actor_pid =
      prism::get(counter.task(&tally::pid).remote(), result_timeout);
  BOOST_TEST(actor_pid != cluster.node_pid(1));
  BOOST_TEST(actor_pid != pid_here());
  BOOST_TEST(cluster.sanitizer_reports() == "");
}

// A large result stays in the store of the node that made it; a read from
// another node pulls it in chunks and keeps a copy in that node's store,
// which serves once the first node is gone (no rebuild: the task that made
// it could not even run again, no node offers "far" any more).
BOOST_AUTO_TEST_CASE(a_large_object_read_elsewhere_outlives_its_node) {
  process_cluster cluster{attached_cluster(0)};
  auto far_node = cluster.add_node({"--resources", R"({"far": 4})"});
  constexpr int size = (10 << 20) + 12345; // 11 chunks, the last short
  auto ref = prism::task(patterned)
                 .resources({{"far", 1}})
                 .max_retries(3)
                 .remote(size);
  auto bulk_before = prism::testing::bulk_reads();
  BOOST_TEST(prism::get(ref, result_timeout) == patterned(size));
  // All but its first chunk came over the far node's bulk port.
  BOOST_TEST(prism::testing::bulk_reads() == bulk_before + 1);
  // A worker process of the head's node reads it too.
  BOOST_TEST(prism::get(prism::task(is_patterned).remote(ref), result_timeout));
  auto rebuilt = prism::testing::objects_rebuilt();
  cluster.kill_node(far_node);
  BOOST_TEST(prism::get(ref, 30s) == patterned(size));
  BOOST_TEST(prism::get(prism::task(is_patterned).remote(ref), result_timeout));
  BOOST_TEST(prism::testing::objects_rebuilt() == rebuilt);
  BOOST_TEST(cluster.sanitizer_reports() == "");
}

/// The TCP ports process `pid` listens on (IPv4), from its sockets'
/// inodes and the kernel's table of TCP sockets.
std::vector<int> listening_ports(int pid) {
  std::set<std::string> inodes;
  auto fds = std::filesystem::path{"/proc"} / std::to_string(pid) / "fd";
  for (const auto& fd : std::filesystem::directory_iterator{fds}) {
    std::error_code ec;
    auto target = std::filesystem::read_symlink(fd.path(), ec).string();
    if (!ec && target.rfind("socket:[", 0) == 0)
      inodes.insert(target.substr(8, target.size() - 9));
  }
  std::vector<int> ports;
  std::ifstream table{"/proc/net/tcp"};
  std::string line;
  std::getline(table, line); // The header.
  while (std::getline(table, line)) {
    std::istringstream fields{line};
    std::string slot, local, remote, state, queues, timer, retransmits, uid,
        timeouts, inode;
    fields >> slot >> local >> remote >> state >> queues >> timer >>
        retransmits >> uid >> timeouts >> inode;
    if (state == "0A" && inodes.count(inode) != 0)
      ports.push_back(
          std::stoi(local.substr(local.find(':') + 1), nullptr, 16));
  }
  return ports;
}

/// Fills the bulk port of the node whose process is `pid`: holds as many
/// silent connections to it as it serves at once (it closes them after its
/// ticket timeout, 5 s), so that it closes any other at once. Every port
/// the node listens on gets as many, and the one that closes one more at
/// once is its bulk port: the connections held there are returned, the
/// others closed. Empty if no port did.
std::vector<int> fill_bulk_port(int pid) {
  constexpr auto held = prism::actors::bulk_server::max_connections;
  struct port_under_test {
    std::vector<int> holders;
    int probe = -1;
  };
  std::vector<port_under_test> ports;
  for (auto port : listening_ports(pid)) {
    auto address = "127.0.0.1:" + std::to_string(port);
    port_under_test p;
    for (std::size_t i = 0; i < held; ++i)
      p.holders.push_back(connect_to(address));
    // Accepted after those, in the order they came.
    p.probe = connect_to(address);
    ports.push_back(std::move(p));
  }
  std::vector<int> bulk;
  auto deadline = std::chrono::steady_clock::now() + 3s;
  while (bulk.empty() && std::chrono::steady_clock::now() < deadline) {
    for (auto& p : ports) {
      bool closed = false;
      if (p.probe >= 0)
        heard_from(p.probe, 10ms, &closed);
      if (closed && std::find(p.holders.begin(), p.holders.end(), -1) ==
                        p.holders.end()) {
        bulk = std::exchange(p.holders, {});
        break;
      }
    }
  }
  for (auto& p : ports) {
    for (auto fd : p.holders)
      if (fd >= 0)
        ::close(fd);
    if (p.probe >= 0)
      ::close(p.probe);
  }
  return bulk;
}

// A read from another node whose bulk port fails goes on in chunks over
// the cluster connection from where it was, and the reader's later reads
// from that node go in chunks from the start. Here the port is full (as
// many silent peers as it serves at once), so it closes the reader's
// connection as soon as it comes.
BOOST_AUTO_TEST_CASE(a_read_whose_bulk_port_fails_goes_on_in_chunks) {
  process_cluster cluster{attached_cluster(0)};
  auto far_node = cluster.add_node({"--resources", R"({"far": 4})"});
  std::vector<prism::object_ref<std::string>> refs;
  for (int i = 0; i < 3; ++i)
    refs.push_back(prism::task(patterned)
                       .resources({{"far", 1}})
                       .remote((3 << 20) + 1000 * i));
  auto bulk_before = prism::testing::bulk_reads();
  BOOST_TEST(prism::wait(refs, refs.size(), result_timeout).ready.size() ==
             refs.size());
  // A read while the port serves: the rest comes over it.
  BOOST_TEST(prism::get(refs[0], result_timeout) == patterned(3 << 20));
  BOOST_TEST(prism::testing::bulk_reads() == bulk_before + 1);
  auto holders = fill_bulk_port(cluster.node_pid(far_node));
  BOOST_TEST_REQUIRE(!holders.empty());
  BOOST_TEST(prism::get(refs[1], result_timeout) ==
             patterned((3 << 20) + 1000));
  for (auto fd : holders)
    ::close(fd);
  // The port serves again, but this reader no longer tries it.
  BOOST_TEST(prism::get(refs[2], result_timeout) ==
             patterned((3 << 20) + 2000));
  BOOST_TEST(prism::testing::bulk_reads() == bulk_before + 1);
  BOOST_TEST(cluster.sanitizer_reports() == "");
}

// A task on another node that borrows a large object reads it from the
// store of the node that made it, straight from that node's process, and
// keeps a copy in its own node's store; the owner, which never read it,
// counts that copy and reads it once the first node is gone.
BOOST_AUTO_TEST_CASE(a_borrower_on_a_third_node_keeps_a_copy_of_its_own) {
  process_cluster cluster{attached_cluster(0)};
  auto maker = cluster.add_node({"--resources", R"({"maker": 4})"});
  cluster.add_node({"--resources", R"({"reader": 4})"});
  constexpr int size = (6 << 20) + 777;
  // No retries: with every copy lost, it could not be made again.
  auto ref = prism::task(patterned)
                 .resources({{"maker", 1}})
                 .max_retries(0)
                 .remote(size);
  BOOST_TEST(prism::get(prism::task(borrowed_is_patterned)
                            .resources({{"reader", 1}})
                            .remote(std::vector{ref}),
                        result_timeout));
  BOOST_TEST(eventually(
      30s, [&] { return prism::testing::object_copies(ref.id()) == 2u; }));
  cluster.kill_node(maker);
  BOOST_TEST(prism::get(ref, 30s) == patterned(size));
  BOOST_TEST(cluster.sanitizer_reports() == "");
}

BOOST_AUTO_TEST_CASE(a_crash_in_a_task_kills_only_its_worker_process) {
  process_cluster cluster{attached_cluster(0)};
  BOOST_TEST(
      prism::get(prism::task(abort_first_attempt).max_retries(1).remote(),
                 result_timeout) == 42);
  // The node runs on.
  BOOST_TEST(prism::get(prism::task(square).remote(5), result_timeout) == 25);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace work_test
