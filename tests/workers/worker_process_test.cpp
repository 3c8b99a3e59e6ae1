// Tasks in worker processes: each task runs in a process of its own, so a
// crash kills only that process, and its owner retries or reports it with
// the signal or exit code and the function's name.

#include <boost/test/unit_test.hpp>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <unistd.h>
#include <utility>
#include <vector>

#include <prism/prism.hpp>
#include <prism/testing.hpp>

#include "worker_env.hpp"

using namespace std::chrono_literals;

namespace worker_test {

int pid_here() {
  return static_cast<int>(::getpid());
}

int square(int x) {
  return x * x;
}

int crash_segv() {
  std::raise(SIGSEGV);
  return 0;
}

int crash_abort() {
  std::abort();
}

int crash_exit() {
  std::exit(3);
}

/// Aborts on its first run, returns 42 on a retry.
int abort_first_attempt() {
  if (prism::get_runtime_context().attempt == 0)
    std::abort();
  return 42;
}

/// Squares 1..n in tasks of their own and sums them.
int sum_of_squares(int n) {
  std::vector<prism::object_ref<int>> refs;
  for (int i = 1; i <= n; ++i)
    refs.push_back(prism::task(square).remote(i));
  int sum = 0;
  for (auto x : prism::get(refs))
    sum += x;
  return sum;
}

/// A value above the inline limit: it stays in the node's object store.
std::string big_text(int size) {
  return std::string(static_cast<std::size_t>(size), 'x');
}

std::size_t text_size(const std::string& text) {
  return text.size();
}

/// Holds its worker for a while: runs that overlap need workers of their own.
int pid_after(int ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds{ms});
  return static_cast<int>(::getpid());
}

/// Runs `n` `pid_after` tasks while it waits in `get`: its CPU is lent to
/// them, so more workers than CPUs run at once.
std::vector<int> fan_out(int n) {
  std::vector<prism::object_ref<int>> refs;
  for (int i = 0; i < n; ++i)
    refs.push_back(prism::task(pid_after).remote(300));
  return prism::get(refs);
}

/// Gets each ref itself: refs nested in a value reach a worker process with
/// their owner's address.
int sum_refs(std::vector<prism::object_ref<int>> refs) {
  int sum = 0;
  for (const auto& ref : refs)
    sum += prism::get(ref, std::chrono::seconds{60});
  return sum;
}

/// Puts a value in the worker's process, which owns it, and returns the ref.
prism::object_ref<int> put_here(int x) {
  return prism::put(x);
}

/// Hands the refs it was given back inside its result: their owner learns
/// of the new borrower before this worker lets go of them.
std::vector<prism::object_ref<int>>
hand_back(std::vector<prism::object_ref<int>> refs) {
  return refs;
}

/// Puts a value and returns the ref together with the pid of the process
/// that owns it.
std::pair<int, prism::object_ref<int>> put_and_say_where(int x) {
  return {static_cast<int>(::getpid()), prism::put(x)};
}

/// An actor whose instance lives in a worker process of its own.
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
    return static_cast<int>(::getpid());
  }

  /// Its process's parent, and 1 if `LD_BIND_NOW` is in its environment.
  std::vector<int> parent_and_bind_now() const {
    return {static_cast<int>(::getppid()),
            std::getenv("LD_BIND_NOW") != nullptr ? 1 : 0};
  }

  /// Kills the instance's process, as a crash of user code would.
  int crash() {
    std::abort();
  }

  /// Crashes the first instance; a restarted one returns its total.
  int crash_once() {
    if (!prism::was_current_actor_restarted())
      std::abort();
    return total_;
  }

  bool restarted() const {
    return prism::was_current_actor_restarted();
  }

private:
  explicit tally(int start) : total_(start) {}

  int total_;
};

/// An actor whose construction leaves a line (its pid) in a file: what a
/// test counts to see how many instances were started at all.
class noted {
public:
  static noted* create(std::string path) {
    std::ofstream{path, std::ios::app} << ::getpid() << '\n';
    return new noted;
  }

  int ping() const {
    return 1;
  }
};

} // namespace worker_test

PRISM_REMOTE(worker_test::noted::create, &worker_test::noted::ping);
PRISM_REMOTE(worker_test::tally::create, &worker_test::tally::add,
             &worker_test::tally::pid, &worker_test::tally::crash,
             &worker_test::tally::restarted, &worker_test::tally::crash_once,
             &worker_test::tally::parent_and_bind_now);
PRISM_REMOTE(worker_test::sum_refs);
PRISM_REMOTE(worker_test::put_here);
PRISM_REMOTE(worker_test::hand_back);
PRISM_REMOTE(worker_test::put_and_say_where);
PRISM_REMOTE(worker_test::pid_here);
PRISM_REMOTE(worker_test::square);
PRISM_REMOTE(worker_test::crash_segv);
PRISM_REMOTE(worker_test::crash_abort);
PRISM_REMOTE(worker_test::crash_exit);
PRISM_REMOTE(worker_test::abort_first_attempt);
PRISM_REMOTE(worker_test::sum_of_squares);
PRISM_REMOTE(worker_test::big_text);
PRISM_REMOTE(worker_test::text_size);
PRISM_REMOTE(worker_test::pid_after);
PRISM_REMOTE(worker_test::fan_out);

namespace {

using namespace worker_test;

constexpr auto result_timeout = std::chrono::seconds{60};

/// The message of the error `get` throws for `ref`, if of type `E`.
template <class E, class T>
std::string error_of(const prism::object_ref<T>& ref) {
  try {
    prism::get(ref, result_timeout);
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string{"an error of another type: "} + e.what();
  }
  return "no error";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// An embedded cluster of 2 CPUs whose workers are processes. Sanitizers
/// pass a worker's own signals through, as a build without them does.
struct worker_processes {
  explicit worker_processes(std::uint32_t start_timeout_ms = 10000) {
    std::string asan = std::getenv("ASAN_OPTIONS") != nullptr
                           ? std::getenv("ASAN_OPTIONS")
                           : "";
    ::setenv("ASAN_OPTIONS", (asan + ":handle_segv=0:handle_abort=0").c_str(),
             1);
    prism::config cfg;
    cfg.num_cpus = 2;
    cfg.worker_processes = true;
    cfg.worker_start_timeout_ms = start_timeout_ms;
    cfg.idle_worker_timeout_ms = 300;
    prism::init(cfg);
  }

  ~worker_processes() {
    prism::shutdown();
    ::unsetenv(exit_before_init);
    ::unsetenv(hang_before_init);
  }
};

} // namespace

BOOST_AUTO_TEST_SUITE(worker_processes_suite)

BOOST_AUTO_TEST_CASE(tasks_run_in_processes_of_their_own) {
  worker_processes cluster;
  auto pid = prism::get(prism::task(pid_here).remote(), result_timeout);
  BOOST_TEST(pid != pid_here());
  std::vector<prism::object_ref<int>> refs;
  for (int i = 0; i < 200; ++i)
    refs.push_back(prism::task(square).remote(i));
  long sum = 0;
  for (auto x : prism::get(refs, result_timeout))
    sum += x;
  BOOST_TEST(sum == 2646700); // 0^2 + ... + 199^2
}

BOOST_AUTO_TEST_CASE(a_segfault_kills_only_its_worker_and_names_the_signal) {
  worker_processes cluster;
  auto message = error_of<prism::worker_crashed_error>(
      prism::task(crash_segv).max_retries(0).remote());
  BOOST_TEST(contains(message, "SIGSEGV"), message);
  BOOST_TEST(contains(message, "crash_segv"), message);
  // The driver and the node go on.
  BOOST_TEST(prism::get(prism::task(square).remote(9), result_timeout) == 81);
}

BOOST_AUTO_TEST_CASE(abort_and_exit_are_crashes_of_the_worker) {
  worker_processes cluster;
  auto aborted = error_of<prism::worker_crashed_error>(
      prism::task(crash_abort).max_retries(0).remote());
  BOOST_TEST(contains(aborted, "SIGABRT"), aborted);
  BOOST_TEST(contains(aborted, "crash_abort"), aborted);
  auto exited = error_of<prism::worker_crashed_error>(
      prism::task(crash_exit).max_retries(0).remote());
  BOOST_TEST(contains(exited, "exited with code 3"), exited);
  BOOST_TEST(contains(exited, "crash_exit"), exited);
}

BOOST_AUTO_TEST_CASE(a_crashed_task_is_retried_in_a_new_process) {
  worker_processes cluster;
  BOOST_TEST(
      prism::get(prism::task(abort_first_attempt).max_retries(1).remote(),
                 result_timeout) == 42);
}

BOOST_AUTO_TEST_CASE(tasks_in_worker_processes_submit_tasks) {
  worker_processes cluster;
  BOOST_TEST(prism::get(prism::task(sum_of_squares).remote(20),
                        result_timeout) == 2870);
}

BOOST_AUTO_TEST_CASE(large_values_cross_between_driver_and_workers) {
  worker_processes cluster;
  constexpr int size = 3 * 1024 * 1024;
  auto text = prism::get(prism::task(big_text).remote(size), result_timeout);
  BOOST_TEST(text.size() == static_cast<std::size_t>(size));
  auto ref = prism::put(std::string(size, 'y'));
  BOOST_TEST(prism::get(prism::task(text_size).remote(ref), result_timeout) ==
             static_cast<std::size_t>(size));
}

BOOST_AUTO_TEST_CASE(refs_inside_values_reach_their_owner_from_a_worker) {
  worker_processes cluster;
  std::vector<prism::object_ref<int>> refs;
  for (int i = 1; i <= 5; ++i)
    refs.push_back(prism::put(i));
  for (int i = 6; i <= 10; ++i)
    refs.push_back(prism::task(square).remote(i));
  // 1..5 plus 6^2..10^2.
  BOOST_TEST(prism::get(prism::task(sum_refs).remote(refs), result_timeout) ==
             15 + 330);
}

BOOST_AUTO_TEST_CASE(a_ref_owned_by_a_worker_process_is_read_by_the_driver) {
  worker_processes cluster;
  auto inner = prism::get(prism::task(put_here).remote(41), result_timeout);
  BOOST_TEST(prism::get(inner, result_timeout) == 41);
  // And by another task, in whatever process it runs.
  BOOST_TEST(prism::get(prism::task(sum_refs).remote(
                            std::vector<prism::object_ref<int>>{inner}),
                        result_timeout) == 41);
}

BOOST_AUTO_TEST_CASE(refs_handed_back_by_a_worker_outlive_its_hold) {
  worker_processes cluster;
  std::vector<prism::object_ref<int>> refs;
  for (int i = 0; i < 20; ++i)
    refs.push_back(prism::put(i));
  auto back = prism::task(hand_back).remote(refs);
  // The driver's own refs go: only the handed-back copies keep the objects.
  refs.clear();
  auto returned = prism::get(back, result_timeout);
  int sum = 0;
  for (const auto& r : returned)
    sum += prism::get(r, result_timeout);
  BOOST_TEST(sum == 190);
}

BOOST_AUTO_TEST_CASE(borrowers_get_owner_died_when_the_owning_process_dies) {
  worker_processes cluster;
  auto [pid, inner] =
      prism::get(prism::task(put_and_say_where).remote(5), result_timeout);
  BOOST_REQUIRE(pid != pid_here());
  ::kill(pid, SIGKILL);
  BOOST_TEST(eventually(10s, [pid = pid] { return process_gone(pid); }));
  auto started = std::chrono::steady_clock::now();
  auto message = error_of<prism::owner_died_error>(inner);
  BOOST_TEST(contains(message, "died"), message);
  BOOST_TEST((std::chrono::steady_clock::now() - started < 10s));
}

BOOST_AUTO_TEST_CASE(an_actor_runs_in_a_process_of_its_own) {
  worker_processes cluster;
  auto a = prism::actor(tally::create).remote(10);
  auto b = prism::actor(tally::create).remote(20);
  auto pid_a = prism::get(a.task(&tally::pid).remote(), result_timeout);
  auto pid_b = prism::get(b.task(&tally::pid).remote(), result_timeout);
  BOOST_TEST(pid_a != pid_here());
  BOOST_TEST(pid_b != pid_here());
  BOOST_TEST(pid_a != pid_b);
  std::vector<prism::object_ref<int>> totals;
  for (int i = 1; i <= 100; ++i)
    totals.push_back(a.task(&tally::add).remote(i));
  BOOST_TEST(prism::get(totals, result_timeout).back() == 10 + 5050);
  // Killed, the actor's process goes with it.
  prism::kill(a);
  BOOST_TEST(eventually(10s, [&] { return process_gone(pid_a); }));
  BOOST_TEST(prism::get(b.task(&tally::add).remote(1), result_timeout) == 21);
}

BOOST_AUTO_TEST_CASE(a_fork_server_binds_symbols_once_and_its_workers_do_not) {
  if (std::getenv("LD_BIND_NOW") != nullptr)
    return; // Set by the user: every process has it, as they asked.
  worker_processes cluster;
  // The first workers start by exec while their fork server starts.
  std::vector<int> info;
  auto deadline = std::chrono::steady_clock::now() + 30s;
  while (std::chrono::steady_clock::now() < deadline) {
    auto a = prism::actor(tally::create).remote(0);
    info = prism::get(a.task(&tally::parent_and_bind_now).remote(),
                      result_timeout);
    prism::kill(a);
    if (info.at(0) != pid_here())
      break;
  }
  BOOST_REQUIRE(info.size() == 2u);
  BOOST_REQUIRE_MESSAGE(info[0] != pid_here(), "no worker was forked in 30 s");
  // The server, this program started again, was started with it...
  std::ifstream in{"/proc/" + std::to_string(info[0]) + "/environ"};
  std::string environ{std::istreambuf_iterator<char>{in}, {}};
  BOOST_TEST(contains(environ, std::string{"LD_BIND_NOW=1"} + '\0'));
  // ... and took it out of the environment its workers inherit.
  BOOST_TEST(info[1] == 0);
}

BOOST_AUTO_TEST_CASE(an_actor_whose_process_crashes_restarts_in_a_new_one) {
  worker_processes cluster;
  auto a =
      prism::actor(tally::create).max_restarts(1).max_task_retries(0).remote(5);
  auto first = prism::get(a.task(&tally::pid).remote(), result_timeout);
  auto crashed =
      error_of<prism::actor_died_error>(a.task(&tally::crash).remote());
  BOOST_TEST(crashed != "no error", crashed);
  BOOST_TEST(eventually(10s, [&] { return process_gone(first); }));
  // The restarted instance starts over, in a process of its own.
  BOOST_TEST(prism::get(a.task(&tally::add).remote(1), result_timeout) == 6);
  BOOST_TEST(prism::get(a.task(&tally::restarted).remote(), result_timeout));
  BOOST_TEST(prism::get(a.task(&tally::pid).remote(), result_timeout) != first);
  // No restarts left: the next crash ends the actor for good.
  auto last = error_of<prism::actor_died_error>(a.task(&tally::crash).remote());
  BOOST_TEST(contains(last, "max_restarts=1"), last);
}

BOOST_AUTO_TEST_CASE(
    calls_to_a_crashed_actor_are_retried_within_max_task_retries) {
  worker_processes cluster;
  auto a = prism::actor(tally::create)
               .max_restarts(-1)
               .max_task_retries(-1)
               .remote(0);
  auto first = prism::get(a.task(&tally::pid).remote(), result_timeout);
  // The call that crashed and the calls sent behind it run again on the
  // restarted instance, in order.
  auto crash = a.task(&tally::crash_once).remote();
  std::vector<prism::object_ref<int>> adds;
  for (int i = 0; i < 10; ++i)
    adds.push_back(a.task(&tally::add).remote(1));
  BOOST_TEST(prism::get(crash, result_timeout) == 0);
  auto totals = prism::get(adds, result_timeout);
  BOOST_TEST(totals.size() == 10u);
  BOOST_TEST(totals.back() == 10);
  BOOST_TEST(eventually(10s, [&] { return process_gone(first); }));
}

/// `n` tallies in processes their node shares, starting at 0, 1, ...
std::vector<prism::actor_handle<tally>> shared_tallies(int n,
                                                       int max_restarts = 0) {
  std::vector<prism::actor_handle<tally>> actors;
  for (int i = 0; i < n; ++i)
    actors.push_back(prism::actor(tally::create)
                         .isolation(prism::isolation::shared)
                         .max_restarts(max_restarts)
                         .remote(i));
  return actors;
}

std::vector<int> pids_of(const std::vector<prism::actor_handle<tally>>& as) {
  std::vector<prism::object_ref<int>> refs;
  for (auto& a : as)
    refs.push_back(a.task(&tally::pid).remote());
  return prism::get(refs, result_timeout);
}

BOOST_AUTO_TEST_CASE(
    a_task_behind_actor_processes_starting_runs_once_they_did) {
  worker_processes cluster;
  // Two CPUs: two processes start at a time. The actors' processes fill
  // both start-up slots, one after the other, while the task waits for a
  // slot of its own; the last of them to register must hand it one.
  std::vector<prism::actor_handle<tally>> actors;
  for (int i = 0; i < 12; ++i)
    actors.push_back(prism::actor(tally::create).remote(i));
  prism::get(actors[0].task(&tally::pid).remote(), result_timeout);
  auto squared = prism::task(square).remote(7);
  auto pids = pids_of(actors);
  BOOST_TEST(std::set<int>(pids.begin(), pids.end()).size() == 12u);
  BOOST_TEST(prism::get(squared, result_timeout) == 49);
}

BOOST_AUTO_TEST_CASE(shared_actors_share_a_process_per_cpu) {
  worker_processes cluster;
  auto actors = shared_tallies(50);
  auto pids = pids_of(actors);
  std::set<int> processes{pids.begin(), pids.end()};
  // Two CPUs: two processes, none of them the driver's.
  BOOST_TEST(processes.size() == 2u);
  BOOST_TEST(!processes.contains(pid_here()));
  // Each actor keeps its own state.
  for (int i = 0; i < 50; ++i)
    BOOST_TEST(prism::get(actors[i].task(&tally::add).remote(100),
                          result_timeout) == i + 100);
  // One actor's end is not its process's: the others go on in it.
  prism::kill(actors[0]);
  auto gone =
      error_of<prism::actor_died_error>(actors[0].task(&tally::add).remote(1));
  BOOST_TEST(gone != "no error", gone);
  BOOST_TEST(!process_gone(pids[0]));
  for (int i = 1; i < 50; ++i)
    BOOST_TEST(prism::get(actors[i].task(&tally::pid).remote(),
                          result_timeout) == pids[i]);
  // An actor of a process of its own is not put in a shared one.
  auto own = prism::actor(tally::create).remote(0);
  BOOST_TEST(!processes.contains(
      prism::get(own.task(&tally::pid).remote(), result_timeout)));
  // Once it hosts no actor, a shared process stops after idling as long
  // as an idle worker (300 ms here). The actor of its own process is hosted
  // by one of them.
  for (int i = 1; i < 50; ++i)
    prism::kill(actors[i]);
  prism::kill(own);
  for (auto pid : processes)
    BOOST_TEST(eventually(10s, [&] { return process_gone(pid); }),
               "shared process " << pid << " still runs");
}

BOOST_AUTO_TEST_CASE(
    a_crash_of_a_shared_process_restarts_each_of_its_actors_by_its_own_max_restarts) {
  worker_processes cluster;
  // One of each kind per process: the first two start a process each, the
  // next two go to the process that hosts the fewest.
  auto restarting = shared_tallies(2, 1);
  auto mortal = shared_tallies(2, 0);
  auto restarting_pids = pids_of(restarting);
  auto mortal_pids = pids_of(mortal);
  BOOST_REQUIRE(restarting_pids[0] != restarting_pids[1]);
  auto neighbour = mortal_pids[0] == restarting_pids[0] ? 0 : 1;
  BOOST_REQUIRE(mortal_pids[neighbour] == restarting_pids[0]);
  auto crashed = error_of<prism::actor_died_error>(
      restarting[0].task(&tally::crash).remote());
  BOOST_TEST(crashed != "no error", crashed);
  BOOST_TEST(eventually(10s, [&] { return process_gone(restarting_pids[0]); }));
  // The crashed actor restarts, in another process, from its start.
  BOOST_TEST(prism::get(restarting[0].task(&tally::add).remote(1),
                        result_timeout) == 1);
  BOOST_TEST(prism::get(restarting[0].task(&tally::restarted).remote(),
                        result_timeout));
  BOOST_TEST(prism::get(restarting[0].task(&tally::pid).remote(),
                        result_timeout) != restarting_pids[0]);
  // Its neighbour had no restarts: it is dead, and says why.
  auto dead = error_of<prism::actor_died_error>(
      mortal[neighbour].task(&tally::add).remote(1));
  BOOST_TEST(contains(dead, "max_restarts=0"), dead);
  // The other process's actors never noticed.
  BOOST_TEST(prism::get(restarting[1].task(&tally::add).remote(1),
                        result_timeout) == 2);
  BOOST_TEST(!prism::get(restarting[1].task(&tally::restarted).remote(),
                         result_timeout));
  BOOST_TEST(prism::get(mortal[1 - neighbour].task(&tally::pid).remote(),
                        result_timeout) == restarting_pids[1]);
}

BOOST_AUTO_TEST_CASE(a_program_that_ends_before_init_is_reported) {
  // Set before the node starts: its program's fork server ends the same
  // way (a forked worker is a copy of a server that passed init).
  ::setenv(exit_before_init, "1", 1);
  worker_processes cluster;
  auto message =
      error_of<prism::worker_crashed_error>(prism::task(square).remote(3));
  BOOST_TEST(contains(message, "exited with code 7"), message);
  BOOST_TEST(contains(message, "prism::init"), message);
  ::unsetenv(exit_before_init);
  BOOST_TEST(prism::get(prism::task(square).remote(3), result_timeout) == 9);
}

BOOST_AUTO_TEST_CASE(a_process_that_does_not_register_in_time_is_killed) {
  // Set before the node starts, as above: its fork server never serves.
  ::setenv(hang_before_init, "1", 1);
  worker_processes cluster{500};
  auto message =
      error_of<prism::worker_crashed_error>(prism::task(square).remote(3));
  BOOST_TEST(contains(message, "did not register within 500 ms"), message);
  ::unsetenv(hang_before_init);
  BOOST_TEST(prism::get(prism::task(square).remote(4), result_timeout) == 16);
}

BOOST_AUTO_TEST_CASE(
    a_short_task_never_waits_behind_a_long_one_of_another_function) {
  worker_processes cluster;
  // Short tasks of one shape: pushed to a worker many at a time.
  for (int i = 0; i < 20; ++i)
    BOOST_TEST(prism::get(prism::task(square).remote(i), result_timeout) ==
               i * i);
  // A long task of the same shape holds one worker; a short task after it
  // runs on the other CPU, not queued behind it.
  auto long_one = prism::task(pid_after).remote(8000);
  auto started = std::chrono::steady_clock::now();
  BOOST_TEST(prism::get(prism::task(pid_here).remote(), 5s) > 0);
  BOOST_TEST((std::chrono::steady_clock::now() - started < 5s));
  prism::get(long_one, result_timeout);
}

BOOST_AUTO_TEST_CASE(idle_workers_above_the_cpus_are_reaped) {
  worker_processes cluster;
  // A task blocked in get lends its CPU: six run at once on 2 CPUs.
  auto pids = prism::get(prism::task(fan_out).remote(6), result_timeout);
  BOOST_TEST(pids.size() == 6u);
  BOOST_TEST(prism::testing::num_workers() > 2u);
  BOOST_TEST(
      eventually(10s, [] { return prism::testing::num_workers() <= 2u; }),
      "workers left: " << prism::testing::num_workers());
}

BOOST_AUTO_TEST_CASE(a_finished_jobs_workers_go_and_none_serves_another_job) {
  worker_processes cluster;
  auto driver_pid = prism::get(prism::task(pid_here).remote(), result_timeout);
  int other_pid = 0;
  {
    auto job = prism::client::connect();
    other_pid = prism::get(job.task(pid_here).remote(), result_timeout);
    // The job's worker is its own, not the default job's.
    BOOST_TEST(other_pid != driver_pid);
  }
  BOOST_TEST(eventually(10s, [&] { return process_gone(other_pid); }));
  BOOST_TEST(!process_gone(driver_pid));
}

BOOST_AUTO_TEST_CASE(instances_of_actors_dead_before_they_start_never_start) {
  worker_processes cluster;
  char pattern[] = "/tmp/prism-noted-XXXXXX";
  auto fd = ::mkstemp(pattern);
  BOOST_REQUIRE(fd >= 0);
  ::close(fd);
  std::string path = pattern;
  constexpr int actors = 40;
  {
    // Its actors share fate with the job's driver: they die as it ends,
    // queued on the node, which starts their processes two at a time.
    auto job = prism::client::connect();
    for (int i = 0; i < actors; ++i)
      job.actor(noted::create).remote(path);
  }
  // Settled: no worker process starts or runs for half a second.
  int quiet_polls = 0;
  BOOST_TEST(eventually(60s, [&] {
    quiet_polls = prism::testing::num_workers() == 0u ? quiet_polls + 1 : 0;
    return quiet_polls >= 50;
  }));
  std::ifstream in{path};
  int started = 0;
  for (std::string line; std::getline(in, line);)
    ++started;
  std::remove(path.c_str());
  // Those whose processes started before the job ended, at most.
  BOOST_TEST(started < actors / 4,
             started << " of " << actors << " dead actors were started");
}

BOOST_AUTO_TEST_CASE(worker_processes_end_with_their_node) {
  int pid = 0;
  {
    worker_processes cluster;
    pid = prism::get(prism::task(pid_here).remote(), result_timeout);
    BOOST_TEST(!process_gone(pid));
  }
  BOOST_TEST(eventually(10s, [&] { return process_gone(pid); }));
}

BOOST_AUTO_TEST_SUITE_END()
