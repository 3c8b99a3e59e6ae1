// Supervision trees whose children are Prism actors: each strategy restarts
// the right children, restart types decide whether a child comes back, the
// tree gives up past its intensity, and a child's name finds its current
// instance across restarts.

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cluster_fixture.hpp"

namespace supervision_tree_test {

using namespace prism_test;

class worker {
public:
  static worker* create(int start) {
    return new worker{start};
  }

  int add(int x) {
    return value_ += x;
  }

  int quit() {
    prism::exit_actor();
  }

private:
  explicit worker(int start) : value_(start) {}

  int value_;
};

PRISM_REMOTE(worker::create, &worker::add, &worker::quit);

using handle = prism::actor_handle<worker>;

std::optional<prism::actor_id> id_of(const std::string& name) {
  if (auto h = prism::get_actor<worker>(name))
    return h->id();
  return std::nullopt;
}

// Waits until `name` names a live actor other than `old`, and returns it.
prism::actor_id next_instance(const std::string& name,
                              const std::optional<prism::actor_id>& old) {
  std::optional<prism::actor_id> now;
  BOOST_REQUIRE(wait_until([&] {
    now = id_of(name);
    return now.has_value() && (!old || *now != *old);
  }));
  return *now;
}

int call_add(const std::string& name, int x) {
  auto h = prism::get_actor<worker>(name);
  BOOST_REQUIRE(h.has_value());
  return prism::get(h->task(&worker::add).remote(x), result_timeout);
}

// Waits until every child of `tree` has started: a child actor's name is
// found as soon as the actor is created, before its start has completed, and
// a child that dies while it starts is a failed start, not a crash.
void await_started(const prism::supervisor& tree) {
  BOOST_REQUIRE(wait_until([&] {
    auto xs = tree.which_children();
    return std::all_of(xs.begin(), xs.end(),
                       [](const prism::child_info& x) { return x.running; });
  }));
}

// Kills the child named `name` of `tree`, once every child of the tree has
// started, as a crash would, and returns its old id.
prism::actor_id crash(const prism::supervisor& tree, const std::string& name) {
  await_started(tree);
  auto h = prism::get_actor<worker>(name);
  BOOST_REQUIRE(h.has_value());
  prism::kill(*h);
  return h->id();
}

prism::supervisor_flags flags(prism::restart_strategy s, int intensity = 5) {
  prism::supervisor_flags f;
  f.strategy = s;
  f.intensity = intensity;
  f.period = std::chrono::milliseconds{5000};
  return f;
}

std::vector<prism::child_spec> three_children() {
  return {prism::child_spec::actor("a", worker::create, 0),
          prism::child_spec::actor("b", worker::create, 100),
          prism::child_spec::actor("c", worker::create, 200)};
}

// -- start order --------------------------------------------------------------

/// How long a slow constructor watches for another one to begin before it
/// returns: a sibling started too early begins inside this window.
constexpr std::chrono::milliseconds overlap_window{50};

/// The constructors of `ordered` actors as they begin ("+a") and end ("-a").
struct start_log {
  std::mutex mu;
  std::condition_variable changed;
  std::vector<std::string> events; // guarded by mu

  void clear() {
    std::lock_guard<std::mutex> guard{mu};
    events.clear();
  }

  std::size_t size() {
    std::lock_guard<std::mutex> guard{mu};
    return events.size();
  }

  /// The events, separated by spaces.
  std::string text() {
    std::lock_guard<std::mutex> guard{mu};
    std::string result;
    for (auto& e : events)
      result += (result.empty() ? "" : " ") + e;
    return result;
  }
};

start_log& starts() {
  static start_log log;
  return log;
}

/// An actor whose constructor records when it runs. A slow one waits, up to
/// `overlap_window`, for another constructor to begin before it ends: with
/// children started one at a time none does, so the log reads "+a -a +b -b";
/// started together, the next one begins meanwhile ("+a +b -a").
class ordered {
public:
  static ordered* create(std::string id, bool slow) {
    auto& log = starts();
    std::unique_lock<std::mutex> lock{log.mu};
    log.events.push_back("+" + id);
    log.changed.notify_all();
    if (slow) {
      auto seen = log.events.size();
      log.changed.wait_for(lock, overlap_window,
                           [&] { return log.events.size() > seen; });
    }
    log.events.push_back("-" + id);
    log.changed.notify_all();
    return new ordered{};
  }

  int ping() {
    return 1;
  }
};

PRISM_REMOTE(ordered::create, &ordered::ping);

/// How often each start order is checked: a sibling started concurrently
/// shows in most runs, not in all.
constexpr int order_rounds = 20;

// a and b are slow: a comes first in a start or a one_for_all restart, b in
// a rest_for_one restart of b.
std::vector<prism::child_spec> ordered_children() {
  return {
      prism::child_spec::actor("a", ordered::create, std::string{"a"}, true),
      prism::child_spec::actor("b", ordered::create, std::string{"b"}, true),
      prism::child_spec::actor("c", ordered::create, std::string{"c"}, false)};
}

std::optional<prism::actor_id> ordered_id(const std::string& name) {
  if (auto h = prism::get_actor<ordered>(name))
    return h->id();
  return std::nullopt;
}

// Waits until `n` constructors have ended, then returns the log.
std::string log_after(std::size_t n) {
  BOOST_REQUIRE(wait_until([&] { return starts().size() >= n; }));
  return starts().text();
}

// Kills the live instance of `name` that is not `old`, and returns its id.
prism::actor_id crash_ordered(const std::string& name,
                              const std::optional<prism::actor_id>& old) {
  std::optional<prism::actor_id> now;
  BOOST_REQUIRE(wait_until([&] {
    now = ordered_id(name);
    return now.has_value() && (!old || *now != *old);
  }));
  auto h = prism::get_actor<ordered>(name);
  BOOST_REQUIRE(h.has_value());
  prism::kill(*h);
  return h->id();
}

// Restarts b `order_rounds` times under `strategy` and checks that each
// restart constructs the children in `expected` order, one at a time.
void check_restart_order(prism::restart_strategy strategy,
                         const std::string& expected, std::size_t events) {
  // The log is shared by every test in this process: start from nothing.
  starts().clear();
  auto tree = prism::supervisor::start(flags(strategy, 10 * order_rounds),
                                       ordered_children());
  BOOST_TEST(log_after(6) == "+a -a +b -b +c -c");
  std::optional<prism::actor_id> b;
  for (int round = 0; round < order_rounds; ++round) {
    BOOST_TEST_CONTEXT("round " << round) {
      // The round before ends with c constructed: it is alive or soon is.
      BOOST_REQUIRE(wait_until([] { return ordered_id("c").has_value(); }));
      await_started(tree);
      starts().clear();
      b = crash_ordered("b", b);
      BOOST_TEST(log_after(events) == expected);
    }
  }
}

using namespace supervision_tree_test;

BOOST_FIXTURE_TEST_SUITE(supervision_tree, cluster_fixture)

BOOST_AUTO_TEST_CASE(children_start_in_order_and_are_found_by_name) {
  auto tree = prism::supervisor::start(
      flags(prism::restart_strategy::one_for_one), three_children());
  for (auto name : {"a", "b", "c"})
    next_instance(name, std::nullopt);
  BOOST_TEST(call_add("b", 1) == 101);
  auto children = tree.which_children();
  BOOST_REQUIRE(children.size() == 3u);
  BOOST_TEST(children[0].id == "a");
  BOOST_TEST(children[2].id == "c");
  BOOST_TEST(children[1].running);
}

BOOST_AUTO_TEST_CASE(one_for_one_restarts_only_the_crashed_child) {
  auto tree = prism::supervisor::start(
      flags(prism::restart_strategy::one_for_one), three_children());
  auto a = next_instance("a", std::nullopt);
  next_instance("b", std::nullopt);
  auto c = next_instance("c", std::nullopt);
  BOOST_TEST(call_add("b", 5) == 105);
  auto old_b = crash(tree, "b");
  next_instance("b", old_b);
  // The new instance starts from its factory again; its name finds it.
  BOOST_TEST(call_add("b", 1) == 101);
  BOOST_TEST((id_of("a") == a));
  BOOST_TEST((id_of("c") == c));
}

BOOST_AUTO_TEST_CASE(one_for_all_restarts_every_child) {
  auto tree = prism::supervisor::start(
      flags(prism::restart_strategy::one_for_all), three_children());
  auto a = next_instance("a", std::nullopt);
  next_instance("b", std::nullopt);
  auto c = next_instance("c", std::nullopt);
  auto old_b = crash(tree, "b");
  next_instance("b", old_b);
  next_instance("a", a);
  next_instance("c", c);
}

BOOST_AUTO_TEST_CASE(rest_for_one_restarts_the_child_and_those_after_it) {
  auto tree = prism::supervisor::start(
      flags(prism::restart_strategy::rest_for_one), three_children());
  auto a = next_instance("a", std::nullopt);
  next_instance("b", std::nullopt);
  auto c = next_instance("c", std::nullopt);
  auto old_b = crash(tree, "b");
  next_instance("b", old_b);
  next_instance("c", c);
  BOOST_TEST((id_of("a") == a));
}

BOOST_AUTO_TEST_CASE(transient_child_is_not_restarted_after_a_normal_exit) {
  auto tree =
      prism::supervisor::start(flags(prism::restart_strategy::one_for_one),
                               {prism::child_spec::actor("t", worker::create, 0)
                                    .restart(prism::restart_type::transient)});
  next_instance("t", std::nullopt);
  await_started(tree);
  auto h = prism::get_actor<worker>("t");
  BOOST_REQUIRE(h.has_value());
  BOOST_CHECK_THROW(prism::get(h->task(&worker::quit).remote(), result_timeout),
                    prism::actor_died_error);
  BOOST_REQUIRE(wait_until([&] {
    auto xs = tree.which_children();
    return xs.size() == 1 && !xs[0].running;
  }));
  // The control store frees the name once it learns of the death, which
  // may come after the tree's: the name goes, and no new instance takes it.
  BOOST_TEST(wait_until([&] { return !id_of("t").has_value(); }));
  BOOST_TEST(!tree.which_children().at(0).running);
}

BOOST_AUTO_TEST_CASE(transient_child_is_restarted_after_a_crash) {
  auto tree =
      prism::supervisor::start(flags(prism::restart_strategy::one_for_one),
                               {prism::child_spec::actor("t", worker::create, 0)
                                    .restart(prism::restart_type::transient)});
  auto old = next_instance("t", std::nullopt);
  crash(tree, "t");
  next_instance("t", old);
}

BOOST_AUTO_TEST_CASE(temporary_child_is_never_restarted) {
  auto tree = prism::supervisor::start(
      flags(prism::restart_strategy::one_for_one),
      {prism::child_spec::actor("tmp", worker::create, 0)
           .restart(prism::restart_type::temporary),
       prism::child_spec::actor("keep", worker::create, 0)});
  next_instance("tmp", std::nullopt);
  auto keep = next_instance("keep", std::nullopt);
  crash(tree, "tmp");
  BOOST_REQUIRE(wait_until([&] { return tree.which_children().size() == 1; }));
  BOOST_TEST(!id_of("tmp").has_value());
  BOOST_TEST((id_of("keep") == keep));
}

BOOST_AUTO_TEST_CASE(tree_gives_up_past_its_restart_intensity) {
  auto tree = prism::supervisor::start(
      flags(prism::restart_strategy::one_for_one, 1), three_children());
  auto old = next_instance("a", std::nullopt);
  crash(tree, "a");
  old = next_instance("a", old);
  // A second restart within the period exceeds an intensity of 1.
  crash(tree, "a");
  BOOST_REQUIRE(wait_until([&] { return !tree.alive(); }));
  // Its children went down with it.
  BOOST_REQUIRE(
      wait_until([&] { return !id_of("a") && !id_of("b") && !id_of("c"); }));
}

BOOST_AUTO_TEST_CASE(nested_tree_restarts_inside_its_parent) {
  auto inner = prism::child_spec::supervisor(
      "inner", flags(prism::restart_strategy::one_for_all),
      {prism::child_spec::actor("x", worker::create, 0),
       prism::child_spec::actor("y", worker::create, 0)});
  auto tree = prism::supervisor::start(
      flags(prism::restart_strategy::one_for_one),
      {prism::child_spec::actor("top", worker::create, 0), inner});
  auto top = next_instance("top", std::nullopt);
  auto x = next_instance("x", std::nullopt);
  next_instance("y", std::nullopt);
  auto old_y = crash(tree, "y");
  next_instance("y", old_y);
  next_instance("x", x);
  BOOST_TEST((id_of("top") == top));
}

BOOST_AUTO_TEST_CASE(stopping_the_tree_stops_its_children) {
  auto tree = prism::supervisor::start(
      flags(prism::restart_strategy::one_for_one), three_children());
  for (auto name : {"a", "b", "c"})
    next_instance(name, std::nullopt);
  tree.stop();
  BOOST_TEST(!tree.alive());
  BOOST_REQUIRE(
      wait_until([&] { return !id_of("a") && !id_of("b") && !id_of("c"); }));
}

BOOST_AUTO_TEST_CASE(simple_one_for_one_starts_children_on_demand) {
  auto tree = prism::supervisor::start(
      flags(prism::restart_strategy::simple_one_for_one),
      {prism::child_spec::actor("template", worker::create, 7)});
  tree.start_child("session-1");
  tree.start_child("session-2");
  auto s1 = next_instance("session-1", std::nullopt);
  next_instance("session-2", std::nullopt);
  BOOST_TEST(call_add("session-2", 1) == 8);
  crash(tree, "session-1");
  next_instance("session-1", s1);
  tree.terminate_child("session-2");
  BOOST_REQUIRE(wait_until([&] { return !id_of("session-2"); }));
}

BOOST_AUTO_TEST_SUITE_END()

// The start order, seen from inside the children's constructors: they log
// to this process's memory, so these run with threads only.
BOOST_FIXTURE_TEST_SUITE(supervision_start_order, cluster_fixture)

BOOST_AUTO_TEST_CASE(children_start_one_at_a_time_in_order) {
  for (int round = 0; round < order_rounds; ++round) {
    BOOST_TEST_CONTEXT("round " << round) {
      starts().clear();
      auto tree = prism::supervisor::start(
          flags(prism::restart_strategy::one_for_one), ordered_children(),
          "start-order-" + std::to_string(round));
      BOOST_TEST(log_after(6) == "+a -a +b -b +c -c");
      tree.stop();
    }
  }
}

BOOST_AUTO_TEST_CASE(one_for_all_restarts_children_one_at_a_time_in_order) {
  check_restart_order(prism::restart_strategy::one_for_all, "+a -a +b -b +c -c",
                      6);
}

BOOST_AUTO_TEST_CASE(rest_for_one_restarts_children_one_at_a_time_in_order) {
  check_restart_order(prism::restart_strategy::rest_for_one, "+b -b +c -c", 4);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace supervision_tree_test
