// The supervisor actor over tiny CAF children, on CAF's deterministic test
// scheduler: every message is delivered by `drain`, and time only moves when a
// test advances the virtual clock, so no test sleeps.
//
// CAF's own test DSL (caf/test/dsl.hpp) cannot be mixed with Boost.Test: its
// fixture needs caf::test::engine, which only caf/test/unit_test_impl.hpp
// defines, together with a `main` of its own. So the fixture below drives
// `caf::scheduler::test_coordinator` by hand, as the DSL would.

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "deterministic_system.hpp"
#include "prism/error.hpp"
#include "protocol/supervisor.hpp"
#include "supervisor/supervisor.hpp"

namespace supervisor_actor_test {

namespace {

using namespace prism;
using prism::actors::child_definition;
using prism::actors::spawn_supervisor;
using prism::protocol::supervisor_errc;
using std::chrono::milliseconds;
using std::chrono::seconds;

using crash_atom = caf::atom_constant<caf::atom("crash")>;
using finish_atom = caf::atom_constant<caf::atom("finish")>;
using ready_atom = caf::atom_constant<caf::atom("ready")>;

// What happened to the children, in order: "start:a", "stop:a:crashed".
struct journal {
  std::vector<std::string> events;
  /// The latest incarnation of each child.
  std::map<std::string, caf::actor> current;
  /// Every actor a start function spawned, for the teardown.
  std::vector<caf::actor> spawned;

  /// The events since the last call, separated by spaces.
  std::string take() {
    std::string result;
    for (auto& e : events)
      result += (result.empty() ? "" : " ") + e;
    events.clear();
    return result;
  }
};

std::string reason_name(const caf::error& reason) {
  if (!reason)
    return "normal";
  if (reason == caf::exit_reason::user_shutdown)
    return "shutdown";
  if (reason == caf::exit_reason::kill)
    return "killed";
  return "crashed";
}

// A child that crashes or finishes when told. A stubborn one ignores requests
// to stop; only a kill ends it. A slow one has started only once told `ready`
// (as a child actor has once its constructor ran), and answers
// `await_started` then.
caf::behavior probe(caf::event_based_actor* self, std::shared_ptr<journal> j,
                    std::string id, bool stubborn, bool slow) {
  if (stubborn)
    self->set_exit_handler([](caf::exit_msg&) {});
  self->attach_functor([j, id](const caf::error& reason) {
    j->events.push_back("stop:" + id + ":" + reason_name(reason));
  });
  auto ready = std::make_shared<bool>(!slow);
  auto waiting = std::make_shared<std::vector<caf::response_promise>>();
  return {
      [self](crash_atom) { self->quit(caf::sec::runtime_error); },
      [self](finish_atom) { self->quit(); },
      [self, ready, waiting](protocol::await_started) -> caf::result<void> {
        if (*ready)
          return caf::unit;
        waiting->push_back(self->make_response_promise());
        return waiting->back();
      },
      [j, id, ready, waiting](ready_atom) {
        j->events.push_back("ready:" + id);
        *ready = true;
        for (auto& rp : *waiting)
          rp.deliver(caf::unit);
        waiting->clear();
      },
  };
}

struct probe_options {
  restart_type restart = restart_type::permanent;
  shutdown_spec shutdown = {};
  bool stubborn = false;
  /// If set, the supervisor waits this long for the probe to be `ready`.
  std::optional<milliseconds> start_timeout;
};

child_definition probe_child(std::shared_ptr<journal> j, std::string id,
                             probe_options opts = {}) {
  auto start = [j, id, stubborn = opts.stubborn,
                slow = opts.start_timeout.has_value()](caf::actor_system& sys) {
    auto handle = sys.spawn(probe, j, id, stubborn, slow);
    j->events.push_back("start:" + id);
    j->current[id] = handle;
    j->spawned.push_back(handle);
    return handle;
  };
  return child_definition{
      id, start, opts.restart, opts.shutdown, {}, opts.start_timeout};
}

probe_options slow_start(milliseconds timeout = seconds{5}) {
  probe_options result;
  result.start_timeout = timeout;
  return result;
}

// A child that is a supervisor itself; with a start timeout, the parent waits
// for it to have started its own children.
child_definition
supervisor_child(std::shared_ptr<journal> j, std::string id,
                 supervisor_flags flags, std::vector<child_definition> children,
                 std::optional<milliseconds> start_timeout = std::nullopt) {
  auto start = [j, id, flags, children](caf::actor_system& sys) {
    auto handle = spawn_supervisor(sys, flags, children);
    j->current[id] = handle;
    j->spawned.push_back(handle);
    return handle;
  };
  return child_definition{id, start, restart_type::permanent,
                          {}, {},    start_timeout};
}

supervisor_flags flags(restart_strategy strategy, int intensity = 10,
                       milliseconds period = seconds{60}) {
  supervisor_flags result;
  result.strategy = strategy;
  result.intensity = intensity;
  result.period = period;
  return result;
}

struct supervisor_fixture : prism_unit::deterministic_system {

  ~supervisor_fixture() {
    for (auto& s : supervisors)
      caf::anon_send_exit(s, caf::exit_reason::kill);
    for (auto& a : j->spawned)
      caf::anon_send_exit(a, caf::exit_reason::kill);
    // Late stop timeouts too.
    fire_remaining_timers();
  }

  // -- driving the scheduler ---

  /// Moves the virtual clock by `d`, firing the timers due, and drains.
  void advance(milliseconds d) {
    sched.advance_time(d);
    drain();
  }

  // -- talking to actors ---

  caf::actor spawn(supervisor_flags f, std::vector<child_definition> children) {
    auto s = spawn_supervisor(sys, f, std::move(children));
    supervisors.push_back(s);
    drain();
    return s;
  }

  template <class... Ts>
  void tell(const std::string& child, Ts... xs) {
    caf::anon_send(j->current.at(child), xs...);
    drain();
  }

  /// The reason `a` exits with, once it has.
  std::shared_ptr<std::optional<caf::error>> watch(const caf::actor& a) {
    auto reason = std::make_shared<std::optional<caf::error>>();
    caf::actor_cast<caf::abstract_actor*>(a)->attach_functor(
        [reason](const caf::error& x) { *reason = x; });
    return reason;
  }

  /// Sends `req` to `to` and returns the reply (or error) after draining.
  template <class T, class Request>
  caf::expected<T> ask(const caf::actor& to, Request req) {
    auto result = std::make_shared<std::optional<caf::expected<T>>>();
    // With an argument: CAF 0.17.6 dereferences a null argument tuple when a
    // function-based actor is spawned without one.
    sys.spawn(
        [to, req, result](caf::event_based_actor* client, int) {
          client->request(to, caf::infinite, req)
              .then([result](T& x) { *result = std::move(x); },
                    [result](caf::error& err) { *result = std::move(err); });
        },
        0);
    drain();
    BOOST_REQUIRE_MESSAGE(result->has_value(), "no reply");
    return std::move(**result);
  }

  /// Like `ask`, for requests answered with an empty message.
  template <class Request>
  caf::error ask_done(const caf::actor& to, Request req) {
    auto result = std::make_shared<std::optional<caf::error>>();
    sys.spawn(
        [to, req, result](caf::event_based_actor* client, int) {
          client->request(to, caf::infinite, req)
              .then([result]() { *result = caf::error{}; },
                    [result](caf::error& err) { *result = std::move(err); });
        },
        0);
    drain();
    BOOST_REQUIRE_MESSAGE(result->has_value(), "no reply");
    return std::move(**result);
  }

  std::vector<child_info> which_children(const caf::actor& sup) {
    auto result = ask<std::vector<child_info>>(sup, protocol::which_children{});
    BOOST_REQUIRE(result);
    return *result;
  }

  std::shared_ptr<journal> j = std::make_shared<journal>();
  std::vector<caf::actor> supervisors;
};

bool is(const caf::error& x, supervisor_errc code) {
  return x == protocol::make_error(code);
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(supervisor_actor_test, supervisor_fixture)

// -- start and shutdown order -------------------------------------------------

BOOST_AUTO_TEST_CASE(children_start_in_order_and_stop_in_reverse) {
  auto sup =
      spawn(flags(restart_strategy::one_for_one),
            {probe_child(j, "a"), probe_child(j, "b"), probe_child(j, "c")});
  BOOST_TEST(j->take() == "start:a start:b start:c");
  auto reason = watch(sup);
  caf::anon_send_exit(sup, caf::exit_reason::user_shutdown);
  drain();
  BOOST_TEST(j->take() == "stop:c:shutdown stop:b:shutdown stop:a:shutdown");
  BOOST_REQUIRE(reason->has_value());
  BOOST_TEST((**reason == caf::exit_reason::user_shutdown));
}

BOOST_AUTO_TEST_CASE(stubborn_child_is_killed_after_its_shutdown_timeout) {
  probe_options stubborn;
  stubborn.stubborn = true;
  stubborn.shutdown.timeout = milliseconds{1000};
  auto sup = spawn(flags(restart_strategy::one_for_one),
                   {probe_child(j, "a"), probe_child(j, "s", stubborn),
                    probe_child(j, "c")});
  j->take();
  auto reason = watch(sup);
  caf::anon_send_exit(sup, caf::exit_reason::user_shutdown);
  drain();
  BOOST_TEST(j->take() == "stop:c:shutdown");
  advance(milliseconds{999});
  BOOST_TEST(j->take().empty());
  BOOST_TEST(!reason->has_value());
  advance(milliseconds{1});
  BOOST_TEST(j->take() == "stop:s:killed stop:a:shutdown");
  BOOST_TEST(reason->has_value());
}

BOOST_AUTO_TEST_CASE(brutal_kill_stops_a_child_without_waiting) {
  probe_options brutal;
  brutal.stubborn = true;
  brutal.shutdown.brutal_kill = true;
  auto sup = spawn(flags(restart_strategy::one_for_one),
                   {probe_child(j, "a"), probe_child(j, "s", brutal)});
  j->take();
  auto reason = watch(sup);
  caf::anon_send_exit(sup, caf::exit_reason::user_shutdown);
  drain();
  BOOST_TEST(j->take() == "stop:s:killed stop:a:shutdown");
  BOOST_TEST(reason->has_value());
}

BOOST_AUTO_TEST_CASE(killed_supervisor_takes_its_children_with_it) {
  auto sup = spawn(flags(restart_strategy::one_for_one),
                   {probe_child(j, "a"), probe_child(j, "b")});
  j->take();
  caf::anon_send_exit(sup, caf::exit_reason::kill);
  drain();
  auto events = j->events;
  std::sort(events.begin(), events.end());
  BOOST_TEST(
      (events == std::vector<std::string>{"stop:a:killed", "stop:b:killed"}));
}

// -- strategies ---------------------------------------------------------------

BOOST_AUTO_TEST_CASE(one_for_one_restarts_only_the_crashed_child) {
  spawn(flags(restart_strategy::one_for_one),
        {probe_child(j, "a"), probe_child(j, "b"), probe_child(j, "c")});
  j->take();
  tell("b", crash_atom::value);
  BOOST_TEST(j->take() == "stop:b:crashed start:b");
}

BOOST_AUTO_TEST_CASE(one_for_all_restarts_every_child_in_order) {
  spawn(flags(restart_strategy::one_for_all),
        {probe_child(j, "a"), probe_child(j, "b"), probe_child(j, "c")});
  j->take();
  tell("b", crash_atom::value);
  BOOST_TEST(j->take() ==
             "stop:b:crashed stop:c:shutdown stop:a:shutdown start:a "
             "start:b start:c");
}

BOOST_AUTO_TEST_CASE(rest_for_one_restarts_the_crashed_child_and_later_ones) {
  spawn(flags(restart_strategy::rest_for_one),
        {probe_child(j, "a"), probe_child(j, "b"), probe_child(j, "c"),
         probe_child(j, "d")});
  j->take();
  tell("b", crash_atom::value);
  BOOST_TEST(j->take() ==
             "stop:b:crashed stop:d:shutdown stop:c:shutdown start:b "
             "start:c start:d");
}

BOOST_AUTO_TEST_CASE(simple_one_for_one_starts_children_on_request) {
  auto sup = spawn(flags(restart_strategy::simple_one_for_one),
                   {probe_child(j, "worker")});
  BOOST_TEST(which_children(sup).empty());
  BOOST_TEST(j->take().empty());
  auto x = ask<caf::actor>(sup, protocol::start_child{"x"});
  BOOST_REQUIRE(x);
  // The template's start function made it, under the template's name.
  BOOST_TEST(j->take() == "start:worker");
  BOOST_TEST((*x == j->current.at("worker")));
  auto again = ask<caf::actor>(sup, protocol::start_child{"x"});
  BOOST_TEST(is(again.error(), supervisor_errc::child_running));
  caf::anon_send(*x, crash_atom::value);
  drain();
  BOOST_TEST(j->take() == "stop:worker:crashed start:worker");
  auto infos = which_children(sup);
  BOOST_REQUIRE(infos.size() == 1u);
  BOOST_TEST(infos[0].id == "x");
  BOOST_TEST(infos[0].restarts == 1);
}

// -- restart types ------------------------------------------------------------

BOOST_AUTO_TEST_CASE(permanent_child_restarts_after_a_normal_exit) {
  spawn(flags(restart_strategy::one_for_one), {probe_child(j, "a")});
  j->take();
  tell("a", finish_atom::value);
  BOOST_TEST(j->take() == "stop:a:normal start:a");
}

BOOST_AUTO_TEST_CASE(transient_child_restarts_only_after_a_crash) {
  probe_options transient;
  transient.restart = restart_type::transient;
  auto sup =
      spawn(flags(restart_strategy::one_for_one),
            {probe_child(j, "n", transient), probe_child(j, "x", transient)});
  j->take();
  tell("n", finish_atom::value);
  BOOST_TEST(j->take() == "stop:n:normal");
  tell("x", crash_atom::value);
  BOOST_TEST(j->take() == "stop:x:crashed start:x");
  auto infos = which_children(sup);
  BOOST_REQUIRE(infos.size() == 2u);
  BOOST_TEST(!infos[0].running);
  BOOST_TEST(infos[1].running);
}

BOOST_AUTO_TEST_CASE(temporary_child_is_never_restarted) {
  probe_options temporary;
  temporary.restart = restart_type::temporary;
  auto sup = spawn(flags(restart_strategy::one_for_one),
                   {probe_child(j, "t", temporary)});
  j->take();
  tell("t", crash_atom::value);
  BOOST_TEST(j->take() == "stop:t:crashed");
  BOOST_TEST(which_children(sup).empty());
}

// -- intensity and escalation -------------------------------------------------

BOOST_AUTO_TEST_CASE(supervisor_past_its_intensity_exits_abnormally) {
  auto sup = spawn(flags(restart_strategy::one_for_one, 0),
                   {probe_child(j, "a"), probe_child(j, "b")});
  j->take();
  auto reason = watch(sup);
  tell("a", crash_atom::value);
  BOOST_TEST(j->take() == "stop:a:crashed stop:b:shutdown");
  BOOST_REQUIRE(reason->has_value());
  BOOST_TEST(is(**reason, supervisor_errc::intensity_exceeded));
}

BOOST_AUTO_TEST_CASE(escalation_reaches_the_parent_supervisor) {
  // inner: default flags, one restart in 5 s.
  auto inner = supervisor_child(j, "inner", supervisor_flags{},
                                {probe_child(j, "w"), probe_child(j, "v")});
  auto outer = spawn(flags(restart_strategy::one_for_one), {inner});
  BOOST_TEST(j->take() == "start:w start:v");
  auto first_inner = j->current.at("inner");
  auto reason = watch(first_inner);
  tell("w", crash_atom::value);
  BOOST_TEST(j->take() == "stop:w:crashed start:w");
  tell("w", crash_atom::value);
  // inner gives up: stops v, exits; outer starts a new inner.
  BOOST_TEST(j->take() == "stop:w:crashed stop:v:shutdown start:w start:v");
  BOOST_REQUIRE(reason->has_value());
  BOOST_TEST(is(**reason, supervisor_errc::intensity_exceeded));
  BOOST_TEST((j->current.at("inner") != first_inner));
  auto infos = which_children(outer);
  BOOST_REQUIRE(infos.size() == 1u);
  BOOST_TEST(infos[0].running);
  BOOST_TEST(infos[0].restarts == 1);
}

BOOST_AUTO_TEST_CASE(shutdown_of_a_tree_stops_the_nested_supervisor_first) {
  auto inner = supervisor_child(j, "inner", supervisor_flags{},
                                {probe_child(j, "w"), probe_child(j, "v")});
  auto outer =
      spawn(flags(restart_strategy::one_for_one), {probe_child(j, "a"), inner});
  BOOST_TEST(j->take() == "start:a start:w start:v");
  auto reason = watch(outer);
  caf::anon_send_exit(outer, caf::exit_reason::user_shutdown);
  drain();
  BOOST_TEST(j->take() == "stop:v:shutdown stop:w:shutdown stop:a:shutdown");
  BOOST_TEST(reason->has_value());
}

BOOST_AUTO_TEST_CASE(failed_start_at_start_up_makes_the_supervisor_exit) {
  child_definition broken{"broken",
                          [](caf::actor_system&) { return caf::actor{}; },
                          restart_type::permanent,
                          {},
                          {},
                          {}};
  auto sup = spawn_supervisor(sys, flags(restart_strategy::one_for_one),
                              {probe_child(j, "a"), broken});
  supervisors.push_back(sup);
  auto reason = watch(sup);
  drain();
  BOOST_TEST(j->take() == "start:a stop:a:shutdown");
  BOOST_REQUIRE(reason->has_value());
  BOOST_TEST(is(**reason, supervisor_errc::start_failed));
}

// -- starts that take time ----------------------------------------------------

BOOST_AUTO_TEST_CASE(each_child_starts_once_the_one_before_it_has_started) {
  auto sup = spawn(flags(restart_strategy::one_for_one),
                   {probe_child(j, "a", slow_start()),
                    probe_child(j, "b", slow_start()), probe_child(j, "c")});
  BOOST_TEST(j->take() == "start:a");
  BOOST_TEST(!which_children(sup)[0].running);
  tell("a", ready_atom::value);
  BOOST_TEST(j->take() == "ready:a start:b");
  BOOST_TEST(which_children(sup)[0].running);
  tell("b", ready_atom::value);
  BOOST_TEST(j->take() == "ready:b start:c");
}

BOOST_AUTO_TEST_CASE(one_for_all_restart_starts_each_child_after_the_last) {
  spawn(flags(restart_strategy::one_for_all),
        {probe_child(j, "a", slow_start()), probe_child(j, "b", slow_start()),
         probe_child(j, "c", slow_start())});
  for (auto id : {"a", "b", "c"})
    tell(id, ready_atom::value);
  j->take();
  tell("b", crash_atom::value);
  BOOST_TEST(j->take() ==
             "stop:b:crashed stop:c:shutdown stop:a:shutdown start:a");
  tell("a", ready_atom::value);
  BOOST_TEST(j->take() == "ready:a start:b");
  tell("b", ready_atom::value);
  BOOST_TEST(j->take() == "ready:b start:c");
}

BOOST_AUTO_TEST_CASE(child_not_started_in_time_fails_the_start_up) {
  auto sup =
      spawn_supervisor(sys, flags(restart_strategy::one_for_one),
                       {probe_child(j, "a", slow_start(milliseconds{1000})),
                        probe_child(j, "b")});
  supervisors.push_back(sup);
  auto reason = watch(sup);
  drain();
  BOOST_TEST(j->take() == "start:a");
  advance(milliseconds{999});
  BOOST_TEST(j->take().empty());
  advance(milliseconds{1});
  // Killed for being late; b never starts, and the supervisor gives up.
  BOOST_TEST(j->take() == "stop:a:killed");
  BOOST_REQUIRE(reason->has_value());
  BOOST_TEST(is(**reason, supervisor_errc::start_failed));
}

BOOST_AUTO_TEST_CASE(child_that_dies_while_starting_fails_the_start_up) {
  auto sup =
      spawn_supervisor(sys, flags(restart_strategy::one_for_one),
                       {probe_child(j, "a"), probe_child(j, "b", slow_start()),
                        probe_child(j, "c")});
  supervisors.push_back(sup);
  auto reason = watch(sup);
  drain();
  BOOST_TEST(j->take() == "start:a start:b");
  tell("b", crash_atom::value);
  BOOST_TEST(j->take() == "stop:b:crashed stop:a:shutdown");
  BOOST_REQUIRE(reason->has_value());
  BOOST_TEST(is(**reason, supervisor_errc::start_failed));
}

BOOST_AUTO_TEST_CASE(shutdown_during_a_start_stops_the_child_once_started) {
  auto sup = spawn(flags(restart_strategy::one_for_one),
                   {probe_child(j, "a", slow_start()), probe_child(j, "b")});
  BOOST_TEST(j->take() == "start:a");
  auto reason = watch(sup);
  caf::anon_send_exit(sup, caf::exit_reason::user_shutdown);
  drain();
  BOOST_TEST(!reason->has_value());
  tell("a", ready_atom::value);
  BOOST_TEST(j->take() == "ready:a stop:a:shutdown");
  BOOST_REQUIRE(reason->has_value());
  BOOST_TEST((**reason == caf::exit_reason::user_shutdown));
}

BOOST_AUTO_TEST_CASE(nested_supervisor_has_started_once_its_children_have) {
  auto inner = supervisor_child(
      j, "inner", supervisor_flags{},
      {probe_child(j, "w", slow_start()), probe_child(j, "v")}, seconds{5});
  spawn(flags(restart_strategy::one_for_one), {inner, probe_child(j, "z")});
  BOOST_TEST(j->take() == "start:w");
  tell("w", ready_atom::value);
  BOOST_TEST(j->take() == "ready:w start:v start:z");
}

// -- backoff ------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(restart_waits_for_the_backoff_delay) {
  auto f = flags(restart_strategy::one_for_one);
  f.restart_backoff = backoff{milliseconds{100}, milliseconds{150}, 0.0};
  spawn(f, {probe_child(j, "a")});
  j->take();
  tell("a", crash_atom::value);
  BOOST_TEST(j->take() == "stop:a:crashed");
  advance(milliseconds{99});
  BOOST_TEST(j->take().empty());
  advance(milliseconds{1});
  BOOST_TEST(j->take() == "start:a");
  // Second restart in a row: twice the delay, capped at 150 ms.
  tell("a", crash_atom::value);
  advance(milliseconds{149});
  BOOST_TEST(j->take() == "stop:a:crashed");
  advance(milliseconds{1});
  BOOST_TEST(j->take() == "start:a");
}

BOOST_AUTO_TEST_CASE(shutdown_during_a_backoff_cancels_the_restart) {
  auto f = flags(restart_strategy::one_for_one);
  f.restart_backoff = backoff{milliseconds{100}, milliseconds{100}, 0.0};
  auto sup = spawn(f, {probe_child(j, "a"), probe_child(j, "b")});
  j->take();
  auto reason = watch(sup);
  tell("a", crash_atom::value);
  caf::anon_send_exit(sup, caf::exit_reason::user_shutdown);
  drain();
  BOOST_TEST(j->take() == "stop:a:crashed stop:b:shutdown");
  BOOST_TEST(reason->has_value());
  advance(milliseconds{100});
  BOOST_TEST(j->take().empty());
}

// -- requests -----------------------------------------------------------------

BOOST_AUTO_TEST_CASE(which_children_reports_children_in_start_order) {
  probe_options transient;
  transient.restart = restart_type::transient;
  auto sup = spawn(flags(restart_strategy::one_for_one),
                   {probe_child(j, "a"), probe_child(j, "b", transient)});
  tell("b", crash_atom::value);
  auto infos = which_children(sup);
  BOOST_REQUIRE(infos.size() == 2u);
  BOOST_TEST((infos[0] == child_info{"a", true, restart_type::permanent, 0}));
  BOOST_TEST((infos[1] == child_info{"b", true, restart_type::transient, 1}));
}

BOOST_AUTO_TEST_CASE(terminate_start_and_delete_manage_a_child) {
  auto sup = spawn(flags(restart_strategy::one_for_one),
                   {probe_child(j, "a"), probe_child(j, "b")});
  j->take();
  BOOST_TEST(!ask_done(sup, protocol::terminate_child{"b"}));
  BOOST_TEST(j->take() == "stop:b:shutdown");
  BOOST_TEST(!which_children(sup)[1].running);
  auto b = ask<caf::actor>(sup, protocol::start_child{"b"});
  BOOST_REQUIRE(b);
  BOOST_TEST(j->take() == "start:b");
  BOOST_TEST((*b == j->current.at("b")));
  BOOST_TEST(is(ask_done(sup, protocol::delete_child{"b"}),
                supervisor_errc::child_running));
  BOOST_TEST(!ask_done(sup, protocol::terminate_child{"b"}));
  BOOST_TEST(!ask_done(sup, protocol::delete_child{"b"}));
  BOOST_TEST(which_children(sup).size() == 1u);
  BOOST_TEST(is(ask_done(sup, protocol::delete_child{"b"}),
                supervisor_errc::unknown_child));
  BOOST_TEST(is(ask<caf::actor>(sup, protocol::start_child{"zz"}).error(),
                supervisor_errc::unknown_child));
}

BOOST_AUTO_TEST_CASE(unexpected_request_gets_an_error_reply) {
  auto sup = spawn(flags(restart_strategy::one_for_one), {probe_child(j, "a")});
  auto reply = ask<int>(sup, std::string{"hello"});
  BOOST_TEST(!reply);
  BOOST_TEST(which_children(sup).size() == 1u);
}

BOOST_AUTO_TEST_CASE(invalid_flags_are_rejected_at_spawn) {
  auto f = flags(restart_strategy::one_for_one);
  f.period = milliseconds{0};
  BOOST_CHECK_THROW(spawn_supervisor(sys, f, {probe_child(j, "a")}),
                    invalid_argument_error);
  child_definition no_start{"a", {}, restart_type::permanent, {}, {}, {}};
  BOOST_CHECK_THROW(spawn_supervisor(sys, supervisor_flags{}, {no_start}),
                    invalid_argument_error);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace supervisor_actor_test
