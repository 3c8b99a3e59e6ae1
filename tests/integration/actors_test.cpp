// Actors on an embedded cluster: state across calls, arguments, names and
// namespaces, kill and restart, errors, call order, concurrency, and actors
// that submit tasks and call other actors. Modelled on Ray's C++ actor tests.

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cluster_fixture.hpp"

namespace actors_test {

using prism_test::actor_died_message;
using prism_test::result_timeout;

/// Instances `counter::create` has built, first runs and restarts alike.
std::atomic<int> counter_builds{0};

int square(int x) {
  return x * x;
}

/// An actor that keeps a running total.
class counter {
public:
  static counter* create(int start) {
    ++counter_builds;
    return new counter(start);
  }

  int add(int x) {
    total_ += x;
    return total_;
  }

  int read() const {
    return total_;
  }

  bool restarted() const {
    return prism::was_current_actor_restarted();
  }

  int fail(std::string why) {
    throw std::out_of_range(why);
  }

  int quit() {
    prism::exit_actor();
  }

  /// Submits one task per square and adds up their results.
  int sum_of_squares(int n) {
    std::vector<prism::object_ref<int>> squares;
    for (int i = 1; i <= n; ++i)
      squares.push_back(prism::task(square).remote(i));
    auto values = prism::get(squares, result_timeout);
    return std::accumulate(values.begin(), values.end(), 0);
  }

  /// Adds `x` to another counter and returns that counter's new total.
  int add_to(prism::actor_handle<counter> other, int x) {
    return prism::get(other.task(&counter::add).remote(x), result_timeout);
  }

private:
  explicit counter(int start) : total_(start) {}

  int total_;
};

/// An actor that holds a handle of a counter, and makes new counters.
class keeper {
public:
  static std::unique_ptr<keeper> create(prism::actor_handle<counter> held) {
    return std::unique_ptr<keeper>(new keeper(std::move(held)));
  }

  prism::actor_handle<counter> held() const {
    return held_;
  }

  prism::actor_handle<counter> spawn(int start) {
    return prism::actor(counter::create).remote(start);
  }

private:
  explicit keeper(prism::actor_handle<counter> held) : held_(std::move(held)) {}

  prism::actor_handle<counter> held_;
};

/// An actor whose constructor always throws.
class broken {
public:
  static broken* create(std::string reason) {
    throw std::runtime_error(reason);
  }

  int ping() {
    return 1;
  }
};

/// Calls of `meet` wait for each other: they only all return true if they
/// run at the same time.
class meeting_point {
public:
  static meeting_point* create(int expected) {
    return new meeting_point(expected);
  }

  bool meet() {
    return meeting_.arrive_and_wait();
  }

private:
  explicit meeting_point(int expected) {
    meeting_.reset(expected);
  }

  prism_test::rendezvous meeting_;
};

/// An actor that records its arguments in the order its calls ran.
class appender {
public:
  static appender* create() {
    return new appender;
  }

  void append(int x) {
    items_.push_back(x);
  }

  std::vector<int> items() const {
    return items_;
  }

private:
  std::vector<int> items_;
};

/// A task that calls an actor through a handle it received.
int add_through(prism::actor_handle<counter> target, int x) {
  return prism::get(target.task(&counter::add).remote(x), result_timeout);
}

/// A task that looks up the counter named "tally" in its job's namespace
/// and reads it; -1 if there is none.
int read_tally() {
  auto found = prism::get_actor<counter>("tally");
  if (!found)
    return -1;
  return prism::get(found->task(&counter::read).remote(), result_timeout);
}

/// An actor that reads the counter named "tally" in its own namespace.
class tally_reader {
public:
  static tally_reader* create() {
    return new tally_reader;
  }

  int read() {
    return read_tally();
  }
};

PRISM_REMOTE(actors_test::square, actors_test::add_through,
             actors_test::read_tally);
PRISM_REMOTE(actors_test::tally_reader::create,
             &actors_test::tally_reader::read);
PRISM_REMOTE(actors_test::counter::create, &actors_test::counter::add,
             &actors_test::counter::read, &actors_test::counter::restarted,
             &actors_test::counter::fail, &actors_test::counter::quit,
             &actors_test::counter::sum_of_squares,
             &actors_test::counter::add_to);
PRISM_REMOTE(actors_test::keeper::create, &actors_test::keeper::held,
             &actors_test::keeper::spawn);
PRISM_REMOTE(actors_test::broken::create, &actors_test::broken::ping);
PRISM_REMOTE(actors_test::meeting_point::create,
             &actors_test::meeting_point::meet);
PRISM_REMOTE(actors_test::appender::create, &actors_test::appender::append,
             &actors_test::appender::items);

using namespace actors_test;

namespace {

int call_add(const prism::actor_handle<counter>& h, int x) {
  return prism::get(h.task(&counter::add).remote(x), result_timeout);
}

int call_read(const prism::actor_handle<counter>& h) {
  return prism::get(h.task(&counter::read).remote(), result_timeout);
}

bool call_restarted(const prism::actor_handle<counter>& h) {
  return prism::get(h.task(&counter::restarted).remote(), result_timeout);
}

struct actors_fixture : prism_test::cluster_fixture {
  actors_fixture() {
    counter_builds = 0;
  }
};

/// A cluster whose driver's job lives in the namespace "team_a".
struct team_a_fixture : prism_test::cluster {
  team_a_fixture() : cluster(config()) {}

  static prism::config config() {
    auto cfg = prism_test::make_config(2);
    cfg.ns = "team_a";
    return cfg;
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(actors, actors_fixture)

// -- state and arguments ------------------------------------------------------

BOOST_AUTO_TEST_CASE(actor_state_accumulates_over_calls) {
  auto h = prism::actor(counter::create).remote(10);
  BOOST_TEST(call_add(h, 1) == 11);
  BOOST_TEST(call_add(h, 2) == 13);
  BOOST_TEST(call_read(h) == 13);
}

BOOST_AUTO_TEST_CASE(ref_from_put_reaches_a_method_as_its_value) {
  auto h = prism::actor(counter::create).remote(0);
  auto five = prism::put(5);
  BOOST_TEST(prism::get(h.task(&counter::add).remote(five), result_timeout) ==
             5);
}

BOOST_AUTO_TEST_CASE(ref_from_a_task_reaches_a_method_as_its_value) {
  auto h = prism::actor(counter::create).remote(0);
  auto nine = prism::task(square).remote(3);
  BOOST_TEST(prism::get(h.task(&counter::add).remote(nine), result_timeout) ==
             9);
}

// A job's actors take the ids of a run, which hash to consecutive values:
// tables of actors then hold a burst of creations side by side. Another
// job's run starts elsewhere.
BOOST_AUTO_TEST_CASE(a_jobs_actors_take_the_ids_of_a_run) {
  std::hash<prism::actor_id> hash;
  auto a = prism::actor(counter::create).remote(0);
  auto b = prism::actor(counter::create).remote(0);
  BOOST_TEST(hash(b.id()) == hash(a.id()) + 1);
  BOOST_TEST(a.id().hex().substr(0, 12) != b.id().hex().substr(0, 12));
  auto other = prism::client::connect();
  auto c = other.actor(counter::create).remote(0);
  BOOST_TEST(c.id().lo != a.id().lo);
  BOOST_TEST(
      other.get(other.task(c, &counter::add).remote(2), result_timeout) == 2);
  BOOST_TEST(call_add(b, 3) == 3);
  other.shutdown();
}

// -- names and namespaces -----------------------------------------------------

BOOST_AUTO_TEST_CASE(get_actor_finds_a_named_actor) {
  auto h = prism::actor(counter::create).name("tally").remote(0);
  BOOST_REQUIRE(call_add(h, 7) == 7);
  auto found = prism::get_actor<counter>("tally");
  BOOST_REQUIRE(found.has_value());
  BOOST_TEST(found->id().hex() == h.id().hex());
  BOOST_TEST(call_read(*found) == 7);
}

BOOST_AUTO_TEST_CASE(get_actor_returns_nothing_for_a_missing_name) {
  BOOST_TEST(!prism::get_actor<counter>("nobody").has_value());
}

// The actors of a node share their clients' settings by namespace: each
// still looks names up in its own.
BOOST_AUTO_TEST_CASE(an_actor_looks_up_names_in_its_own_namespace) {
  auto tally_x = prism::actor(counter::create).name("tally", "ns_x").remote(1);
  auto tally_y = prism::actor(counter::create).name("tally", "ns_y").remote(2);
  BOOST_REQUIRE(call_read(tally_x) == 1);
  BOOST_REQUIRE(call_read(tally_y) == 2);
  auto in_x =
      prism::actor(tally_reader::create).name("reader", "ns_x").remote();
  auto in_y =
      prism::actor(tally_reader::create).name("reader", "ns_y").remote();
  auto in_x_again =
      prism::actor(tally_reader::create).name("reader_2", "ns_x").remote();
  BOOST_TEST(
      prism::get(in_x.task(&tally_reader::read).remote(), result_timeout) == 1);
  BOOST_TEST(
      prism::get(in_y.task(&tally_reader::read).remote(), result_timeout) == 2);
  BOOST_TEST(prism::get(in_x_again.task(&tally_reader::read).remote(),
                        result_timeout) == 1);
}

BOOST_AUTO_TEST_CASE(same_name_in_two_namespaces_names_two_actors) {
  auto in_a = prism::actor(counter::create).name("shared", "ns_a").remote(1);
  auto in_b = prism::actor(counter::create).name("shared", "ns_b").remote(2);
  BOOST_TEST(in_a.id().hex() != in_b.id().hex());
  auto found_a = prism::get_actor<counter>("shared", "ns_a");
  auto found_b = prism::get_actor<counter>("shared", "ns_b");
  BOOST_REQUIRE(found_a.has_value());
  BOOST_REQUIRE(found_b.has_value());
  BOOST_TEST(call_read(*found_a) == 1);
  BOOST_TEST(call_read(*found_b) == 2);
}

BOOST_AUTO_TEST_CASE(get_actor_in_another_namespace_finds_nothing) {
  auto h = prism::actor(counter::create).name("solo", "ns_a").remote(0);
  BOOST_REQUIRE(call_add(h, 1) == 1);
  BOOST_TEST(!prism::get_actor<counter>("solo", "ns_b").has_value());
  // The driver's own namespace is anonymous, so it is not "ns_a" either.
  BOOST_TEST(!prism::get_actor<counter>("solo").has_value());
}

BOOST_AUTO_TEST_CASE(get_if_exists_returns_the_live_actor_of_the_name) {
  auto first = prism::actor(counter::create).name("only").remote(5);
  BOOST_REQUIRE(call_add(first, 1) == 6);
  auto second =
      prism::actor(counter::create).name("only").get_if_exists().remote(100);
  BOOST_TEST(second.id().hex() == first.id().hex());
  BOOST_TEST(call_read(second) == 6);
  BOOST_TEST(counter_builds.load() == 1);
}

BOOST_AUTO_TEST_CASE(get_if_exists_creates_the_actor_when_the_name_is_free) {
  auto h =
      prism::actor(counter::create).name("fresh").get_if_exists().remote(3);
  BOOST_TEST(call_read(h) == 3);
  auto found = prism::get_actor<counter>("fresh");
  BOOST_REQUIRE(found.has_value());
  BOOST_TEST(found->id().hex() == h.id().hex());
}

BOOST_AUTO_TEST_CASE(callers_racing_with_get_if_exists_get_one_actor) {
  constexpr int callers = 8;
  std::vector<std::string> ids(callers);
  prism_test::rendezvous start;
  start.reset(callers);
  std::vector<std::thread> threads;
  for (int i = 0; i < callers; ++i)
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      ids[i] = prism::actor(counter::create)
                   .name("raced", "racing")
                   .get_if_exists()
                   .remote(i)
                   .id()
                   .hex();
    });
  for (auto& t : threads)
    t.join();
  for (const auto& id : ids)
    BOOST_TEST(id == ids[0]);
  auto found = prism::get_actor<counter>("raced", "racing");
  BOOST_REQUIRE(found.has_value());
  BOOST_TEST(found->id().hex() == ids[0]);
  call_read(*found);
  BOOST_TEST(counter_builds.load() == 1);
}

BOOST_AUTO_TEST_CASE(get_if_exists_after_a_kill_makes_a_new_actor) {
  auto old = prism::actor(counter::create).name("again").remote(1);
  prism::kill(old);
  BOOST_REQUIRE_MESSAGE(prism_test::wait_until(
                            [] { return !prism::get_actor<counter>("again"); }),
                        "the killed actor's name was not freed");
  auto fresh =
      prism::actor(counter::create).name("again").get_if_exists().remote(2);
  BOOST_TEST(fresh.id().hex() != old.id().hex());
  BOOST_TEST(call_read(fresh) == 2);
}

BOOST_AUTO_TEST_CASE(get_if_exists_of_another_class_is_a_type_mismatch) {
  auto h = prism::actor(counter::create).name("typed").remote(0);
  BOOST_REQUIRE(call_add(h, 1) == 1);
  BOOST_CHECK_THROW(
      prism::actor(appender::create).name("typed").get_if_exists().remote(),
      prism::type_mismatch_error);
}

BOOST_AUTO_TEST_CASE(get_if_exists_without_a_name_is_an_invalid_argument) {
  BOOST_CHECK_THROW(prism::actor(counter::create).get_if_exists().remote(0),
                    prism::invalid_argument_error);
}

// -- kill and restart ---------------------------------------------------------

BOOST_AUTO_TEST_CASE(kill_with_restart_rebuilds_the_actor_from_its_factory) {
  auto h = prism::actor(counter::create).max_restarts(1).remote(100);
  BOOST_REQUIRE(call_add(h, 5) == 105);
  BOOST_REQUIRE(!call_restarted(h));
  prism::kill(h, false);
  BOOST_REQUIRE_MESSAGE(
      prism_test::wait_until([] { return counter_builds.load() == 2; }),
      "the killed actor was not rebuilt within the deadline");
  BOOST_TEST(call_restarted(h));
  BOOST_TEST(call_read(h) == 100);
}

BOOST_AUTO_TEST_CASE(killed_actor_fails_later_calls_with_actor_died_error) {
  auto h = prism::actor(counter::create).max_restarts(3).remote(0);
  BOOST_REQUIRE(call_add(h, 1) == 1);
  prism::kill(h);
  try {
    prism::get(h.task(&counter::read).remote(), result_timeout);
    BOOST_FAIL("a call of a killed actor returned a value");
  } catch (const prism::actor_died_error& e) {
    BOOST_TEST((e.code() == prism::errc::actor_died));
    BOOST_TEST(!e.retryable());
  }
  BOOST_TEST(counter_builds.load() == 1);
}

BOOST_AUTO_TEST_CASE(every_later_call_of_a_dead_actor_names_its_cause) {
  // The caller forgets a dead actor's route once its calls have failed; each
  // later call learns the death, and its cause, from the control store.
  auto h = prism::actor(counter::create).remote(0);
  BOOST_REQUIRE(call_add(h, 1) == 1);
  prism::kill(h);
  for (int i = 0; i < 3; ++i) {
    auto message = actor_died_message(h.task(&counter::read).remote());
    BOOST_REQUIRE(message.has_value());
    BOOST_TEST(message->find("killed") != std::string::npos, *message);
  }
}

BOOST_AUTO_TEST_CASE(killed_actor_frees_its_name_for_a_new_actor) {
  auto old = prism::actor(counter::create).name("reused").remote(50);
  BOOST_REQUIRE(call_add(old, 1) == 51);
  prism::kill(old);
  BOOST_REQUIRE(
      actor_died_message(old.task(&counter::read).remote()).has_value());
  BOOST_REQUIRE_MESSAGE(prism_test::wait_until([] {
                          return !prism::get_actor<counter>("reused");
                        }),
                        "the killed actor's name was not freed");
  auto fresh = prism::actor(counter::create).name("reused").remote(0);
  BOOST_TEST(fresh.id().hex() != old.id().hex());
  auto found = prism::get_actor<counter>("reused");
  BOOST_REQUIRE(found.has_value());
  BOOST_TEST(found->id().hex() == fresh.id().hex());
  BOOST_TEST(call_read(*found) == 0);
}

// -- handles as values --------------------------------------------------------

BOOST_AUTO_TEST_CASE(handle_passed_to_a_task_calls_the_same_actor) {
  auto h = prism::actor(counter::create).remote(0);
  BOOST_TEST(
      prism::get(prism::task(add_through).remote(h, 4), result_timeout) == 4);
  BOOST_TEST(call_read(h) == 4);
}

BOOST_AUTO_TEST_CASE(handle_returned_from_an_actor_calls_the_same_actor) {
  auto h = prism::actor(counter::create).remote(0);
  auto k = prism::actor(keeper::create).remote(h);
  auto returned = prism::get(k.task(&keeper::held).remote(), result_timeout);
  BOOST_TEST(returned.id().hex() == h.id().hex());
  BOOST_TEST(call_add(returned, 3) == 3);
  BOOST_TEST(call_read(h) == 3);
}

BOOST_AUTO_TEST_CASE(actor_created_by_an_actor_is_callable_from_the_driver) {
  auto h = prism::actor(counter::create).remote(0);
  auto k = prism::actor(keeper::create).remote(h);
  auto spawned = prism::get(k.task(&keeper::spawn).remote(40), result_timeout);
  BOOST_TEST(spawned.id().hex() != h.id().hex());
  BOOST_TEST(call_add(spawned, 2) == 42);
}

// -- concurrency and order ----------------------------------------------------

BOOST_AUTO_TEST_CASE(max_concurrency_two_runs_two_calls_at_once) {
  // Each call waits for the other to start: run one at a time, the first
  // would give up at its deadline and return false.
  auto h = prism::actor(meeting_point::create).max_concurrency(2).remote(2);
  auto first = h.task(&meeting_point::meet).remote();
  auto second = h.task(&meeting_point::meet).remote();
  BOOST_TEST(prism::get(first, result_timeout));
  BOOST_TEST(prism::get(second, result_timeout));
}

BOOST_AUTO_TEST_CASE(calls_from_one_caller_run_in_the_order_sent) {
  auto h = prism::actor(appender::create).remote();
  std::vector<prism::object_ref<void>> appends;
  for (int i = 0; i < 1000; ++i)
    appends.push_back(h.task(&appender::append).remote(i));
  prism::get(appends, result_timeout);
  auto items = prism::get(h.task(&appender::items).remote(), result_timeout);
  std::vector<int> expected(1000);
  std::iota(expected.begin(), expected.end(), 0);
  BOOST_TEST(items.size() == expected.size());
  BOOST_TEST((items == expected));
}

// -- errors and exit ----------------------------------------------------------

BOOST_AUTO_TEST_CASE(throwing_factory_fails_calls_with_the_cause) {
  auto h = prism::actor(broken::create).remote("no database at db://nowhere");
  auto message = actor_died_message(h.task(&broken::ping).remote());
  BOOST_REQUIRE_MESSAGE(message.has_value(),
                        "a call of an actor whose constructor threw returned");
  BOOST_TEST(message->find("no database at db://nowhere") != std::string::npos,
             "message: " << *message);
}

BOOST_AUTO_TEST_CASE(throwing_method_fails_its_call_with_task_error) {
  auto h = prism::actor(counter::create).remote(0);
  try {
    prism::get(h.task(&counter::fail).remote("index 9"), result_timeout);
    BOOST_FAIL("a throwing method returned a value");
  } catch (const prism::task_error& e) {
    BOOST_TEST(e.exception_type() == "std::out_of_range");
    BOOST_TEST(e.exception_message() == "index 9");
  }
}

BOOST_AUTO_TEST_CASE(actor_keeps_its_state_after_a_method_throws) {
  auto h = prism::actor(counter::create).remote(0);
  BOOST_REQUIRE(call_add(h, 1) == 1);
  BOOST_CHECK_THROW(
      prism::get(h.task(&counter::fail).remote("boom"), result_timeout),
      prism::task_error);
  BOOST_TEST(call_add(h, 1) == 2);
}

BOOST_AUTO_TEST_CASE(exit_actor_fails_the_exiting_call_with_actor_died_error) {
  auto h = prism::actor(counter::create).remote(0);
  BOOST_REQUIRE(call_add(h, 1) == 1);
  BOOST_TEST(actor_died_message(h.task(&counter::quit).remote()).has_value());
}

BOOST_AUTO_TEST_CASE(exited_actor_fails_later_calls_with_actor_died_error) {
  auto h = prism::actor(counter::create).max_restarts(3).remote(0);
  BOOST_REQUIRE(call_add(h, 1) == 1);
  auto quit = h.task(&counter::quit).remote();
  BOOST_REQUIRE(actor_died_message(quit).has_value());
  BOOST_TEST(actor_died_message(h.task(&counter::read).remote()).has_value());
  BOOST_TEST(counter_builds.load() == 1);
}

BOOST_AUTO_TEST_CASE(exit_actor_outside_an_actor_is_an_invalid_argument) {
  BOOST_CHECK_THROW(prism::exit_actor(), prism::invalid_argument_error);
}

BOOST_AUTO_TEST_CASE(driver_is_not_a_restarted_actor) {
  BOOST_TEST(!prism::was_current_actor_restarted());
}

// -- actors that call tasks and actors ----------------------------------------

BOOST_AUTO_TEST_CASE(actor_method_gets_the_tasks_it_submits) {
  auto h = prism::actor(counter::create).remote(0);
  BOOST_TEST(prism::get(h.task(&counter::sum_of_squares).remote(4),
                        result_timeout) == 1 + 4 + 9 + 16);
}

BOOST_AUTO_TEST_CASE(actor_method_calls_another_actor) {
  auto caller = prism::actor(counter::create).remote(0);
  auto callee = prism::actor(counter::create).remote(10);
  BOOST_TEST(prism::get(caller.task(&counter::add_to).remote(callee, 5),
                        result_timeout) == 15);
  BOOST_TEST(call_read(callee) == 15);
  BOOST_TEST(call_read(caller) == 0);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_FIXTURE_TEST_SUITE(actor_namespaces, team_a_fixture)

BOOST_AUTO_TEST_CASE(name_without_a_namespace_lives_in_the_jobs_namespace) {
  auto h = prism::actor(counter::create).name("tally").remote(3);
  BOOST_REQUIRE(call_add(h, 1) == 4);
  auto found = prism::get_actor<counter>("tally", "team_a");
  BOOST_REQUIRE(found.has_value());
  BOOST_TEST(found->id().hex() == h.id().hex());
  BOOST_TEST(!prism::get_actor<counter>("tally", "team_b").has_value());
}

BOOST_AUTO_TEST_CASE(a_task_looks_up_names_in_its_jobs_namespace) {
  auto h = prism::actor(counter::create).name("tally").remote(41);
  BOOST_REQUIRE(call_add(h, 1) == 42);
  BOOST_TEST(prism::get(prism::task(read_tally).remote(), result_timeout) ==
             42);
}

BOOST_AUTO_TEST_CASE(a_task_of_another_namespace_finds_nothing) {
  auto h = prism::actor(counter::create).name("tally").remote(1);
  BOOST_REQUIRE(call_add(h, 1) == 2);
  auto other = prism::client::connect("team_b");
  BOOST_TEST(prism::get(other.task(read_tally).remote(), result_timeout) == -1);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace actors_test
