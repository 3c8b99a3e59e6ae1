// The decisions of a supervisor, without actors: which children stop and
// start, in which order and when, and when the supervisor gives up.

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <string>
#include <vector>

#include "prism/error.hpp"
#include "prism/internal/supervision_core.hpp"
#include "prism/supervision.hpp"

namespace supervision_core_test {

namespace {

using namespace prism;
using namespace prism::internal;
using prism::internal::child_spec;
using std::chrono::milliseconds;
using std::chrono::seconds;
using time_point = supervision_core::time_point;

const time_point t0 = time_point{} + std::chrono::hours{1};

child_spec spec(std::string id,
                restart_type restart = restart_type::permanent) {
  return child_spec{std::move(id), restart, shutdown_spec{}};
}

supervisor_flags flags(restart_strategy strategy, int intensity = 10,
                       milliseconds period = seconds{60}) {
  supervisor_flags result;
  result.strategy = strategy;
  result.intensity = intensity;
  result.period = period;
  return result;
}

// "start:a stop:b escalate": the plan, one word per action.
std::string describe(const supervision_plan& plan) {
  std::string result;
  for (auto& a : plan) {
    if (!result.empty())
      result += ' ';
    result += to_string(a.kind);
    if (!a.child.empty())
      result += ':' + a.child;
  }
  return result;
}

// Carries out the plan as an obedient executor would at `now`: children start
// at once and stop as soon as asked. Stops at a start that is not due, and at
// `escalate` or `exit`. Returns the steps taken, as `describe` writes them.
std::string carry_out(supervision_core& core, time_point now) {
  supervision_plan done;
  for (;;) {
    auto plan = core.plan();
    if (plan.empty())
      break;
    auto& next = plan.front();
    done.push_back(next);
    if (next.kind == action_kind::start) {
      if (next.not_before > now) {
        done.pop_back();
        break;
      }
      core.on_started(next.child, now);
    } else if (next.kind == action_kind::stop) {
      core.on_stop_sent(next.child);
      core.on_exit(next.child, child_exit::shutdown, now);
    } else {
      break;
    }
  }
  return describe(done);
}

// A core whose children all run.
supervision_core started(supervisor_flags f, std::vector<child_spec> children) {
  supervision_core core{f, std::move(children), supervision_core::seeded(7)};
  core.start_all();
  carry_out(core, t0);
  return core;
}

bool running(const supervision_core& core, const std::string& id) {
  auto info = core.find(id);
  return info && info->running;
}

} // namespace

BOOST_AUTO_TEST_SUITE(supervision_core_test)

// -- validation ---------------------------------------------------------------

BOOST_AUTO_TEST_CASE(default_flags_are_one_restart_in_five_seconds) {
  supervisor_flags f;
  BOOST_TEST((f.strategy == restart_strategy::one_for_one));
  BOOST_TEST(f.intensity == 1);
  BOOST_TEST(f.period.count() == 5000);
  BOOST_TEST(!f.restart_backoff.has_value());
  BOOST_CHECK_NO_THROW(validate(f));
}

BOOST_AUTO_TEST_CASE(negative_intensity_is_rejected) {
  supervisor_flags f;
  f.intensity = -1;
  BOOST_CHECK_THROW(validate(f), invalid_argument_error);
}

BOOST_AUTO_TEST_CASE(period_that_is_not_positive_is_rejected) {
  supervisor_flags f;
  f.period = milliseconds{0};
  BOOST_CHECK_THROW(validate(f), invalid_argument_error);
  f.period = milliseconds{-5};
  BOOST_CHECK_THROW(validate(f), invalid_argument_error);
}

BOOST_AUTO_TEST_CASE(backoff_min_above_max_is_rejected) {
  supervisor_flags f;
  f.restart_backoff = backoff{milliseconds{200}, milliseconds{100}, 0.0};
  BOOST_CHECK_THROW(validate(f), invalid_argument_error);
}

BOOST_AUTO_TEST_CASE(backoff_jitter_outside_zero_to_one_is_rejected) {
  supervisor_flags f;
  f.restart_backoff = backoff{milliseconds{1}, milliseconds{2}, 1.5};
  BOOST_CHECK_THROW(validate(f), invalid_argument_error);
  f.restart_backoff->jitter = -0.1;
  BOOST_CHECK_THROW(validate(f), invalid_argument_error);
  f.restart_backoff->jitter = 1.0;
  BOOST_CHECK_NO_THROW(validate(f));
}

BOOST_AUTO_TEST_CASE(negative_shutdown_timeout_is_rejected) {
  BOOST_CHECK_THROW(validate(shutdown_spec{false, milliseconds{-1}}),
                    invalid_argument_error);
  auto bad = spec("a");
  bad.shutdown.timeout = milliseconds{-1};
  BOOST_CHECK_THROW(supervision_core(supervisor_flags{}, {bad}),
                    invalid_argument_error);
}

BOOST_AUTO_TEST_CASE(core_rejects_invalid_flags) {
  auto f = flags(restart_strategy::one_for_one);
  f.intensity = -2;
  BOOST_CHECK_THROW(supervision_core(f, {spec("a")}), invalid_argument_error);
}

BOOST_AUTO_TEST_CASE(empty_or_duplicate_child_ids_are_rejected) {
  supervisor_flags f;
  BOOST_CHECK_THROW(supervision_core(f, {spec("")}), invalid_argument_error);
  BOOST_CHECK_THROW(supervision_core(f, {spec("a"), spec("b"), spec("a")}),
                    invalid_argument_error);
}

BOOST_AUTO_TEST_CASE(simple_one_for_one_needs_exactly_one_template) {
  auto f = flags(restart_strategy::simple_one_for_one);
  BOOST_CHECK_THROW(supervision_core(f, {}), invalid_argument_error);
  BOOST_CHECK_THROW(supervision_core(f, {spec("a"), spec("b")}),
                    invalid_argument_error);
  BOOST_CHECK_NO_THROW(supervision_core(f, {spec("worker")}));
}

// -- start and stop order -----------------------------------------------------

BOOST_AUTO_TEST_CASE(children_start_in_order) {
  supervision_core core{flags(restart_strategy::one_for_one),
                        {spec("a"), spec("b"), spec("c")}};
  BOOST_TEST(describe(core.start_all()) == "start:a start:b start:c");
  BOOST_TEST(carry_out(core, t0) == "start:a start:b start:c");
  BOOST_TEST(running(core, "a"));
  BOOST_TEST(running(core, "c"));
}

BOOST_AUTO_TEST_CASE(stop_all_stops_children_in_reverse_order_then_exits) {
  auto core = started(flags(restart_strategy::one_for_one),
                      {spec("a"), spec("b"), spec("c")});
  BOOST_TEST(describe(core.stop_all()) == "stop:c stop:b stop:a exit");
  BOOST_TEST(carry_out(core, t0) == "stop:c stop:b stop:a exit");
  BOOST_TEST(!running(core, "a"));
}

BOOST_AUTO_TEST_CASE(one_stop_is_in_flight_at_a_time) {
  auto core =
      started(flags(restart_strategy::one_for_one), {spec("a"), spec("b")});
  core.stop_all();
  core.on_stop_sent("b");
  BOOST_TEST(core.stop_in_flight());
  BOOST_TEST(describe(core.plan()) == "stop:a exit");
  core.on_exit("b", child_exit::shutdown, t0);
  BOOST_TEST(!core.stop_in_flight());
}

BOOST_AUTO_TEST_CASE(exits_during_shutdown_are_not_failures) {
  auto core =
      started(flags(restart_strategy::one_for_one, 0), {spec("a"), spec("b")});
  core.stop_all();
  BOOST_TEST(describe(core.on_exit("a", child_exit::abnormal, t0)) ==
             "stop:b exit");
  BOOST_TEST((core.escalation() == escalation_cause::none));
}

// -- strategies ---------------------------------------------------------------

BOOST_AUTO_TEST_CASE(one_for_one_restarts_only_the_failed_child) {
  auto core = started(flags(restart_strategy::one_for_one),
                      {spec("a"), spec("b"), spec("c")});
  BOOST_TEST(describe(core.on_exit("b", child_exit::abnormal, t0)) ==
             "start:b");
  BOOST_TEST(carry_out(core, t0) == "start:b");
  BOOST_TEST(core.find("b")->restarts == 1);
  BOOST_TEST(core.find("a")->restarts == 0);
}

BOOST_AUTO_TEST_CASE(one_for_all_stops_others_in_reverse_then_restarts_all) {
  auto core = started(flags(restart_strategy::one_for_all),
                      {spec("a"), spec("b"), spec("c")});
  BOOST_TEST(describe(core.on_exit("b", child_exit::abnormal, t0)) ==
             "stop:c stop:a start:a start:b start:c");
  BOOST_TEST(carry_out(core, t0) == "stop:c stop:a start:a start:b start:c");
  for (auto& info : core.which_children()) {
    BOOST_TEST(info.running);
    BOOST_TEST(info.restarts == 1);
  }
}

BOOST_AUTO_TEST_CASE(rest_for_one_restarts_the_failed_child_and_later_ones) {
  auto core = started(flags(restart_strategy::rest_for_one),
                      {spec("a"), spec("b"), spec("c"), spec("d")});
  BOOST_TEST(describe(core.on_exit("b", child_exit::abnormal, t0)) ==
             "stop:d stop:c start:b start:c start:d");
  BOOST_TEST(carry_out(core, t0) == "stop:d stop:c start:b start:c start:d");
  BOOST_TEST(core.find("a")->restarts == 0);
}

BOOST_AUTO_TEST_CASE(siblings_stopped_for_a_restart_are_not_failures) {
  // Intensity 1: one more counted failure would escalate.
  auto core = started(flags(restart_strategy::one_for_all, 1),
                      {spec("a"), spec("b"), spec("c")});
  core.on_exit("b", child_exit::abnormal, t0);
  core.on_stop_sent("c");
  // c was killed after its timeout, a crashed while waiting for its stop.
  core.on_exit("c", child_exit::abnormal, t0);
  core.on_exit("a", child_exit::abnormal, t0);
  BOOST_TEST(describe(core.plan()) == "start:a start:b start:c");
  BOOST_TEST((core.escalation() == escalation_cause::none));
}

BOOST_AUTO_TEST_CASE(a_failure_during_a_restart_joins_the_pending_restart) {
  auto core = started(flags(restart_strategy::rest_for_one),
                      {spec("a"), spec("b"), spec("c")});
  core.on_exit("b", child_exit::abnormal, t0);
  core.on_stop_sent("c");
  // a fails before c is down: everything restarts, each child once, in order.
  core.on_exit("a", child_exit::abnormal, t0);
  BOOST_TEST(describe(core.plan()) == "start:a start:b start:c");
  core.on_exit("c", child_exit::shutdown, t0);
  BOOST_TEST(carry_out(core, t0) == "start:a start:b start:c");
}

BOOST_AUTO_TEST_CASE(simple_one_for_one_children_are_added_at_run_time) {
  auto core =
      started(flags(restart_strategy::simple_one_for_one), {spec("worker")});
  BOOST_TEST(core.which_children().empty());
  BOOST_TEST((core.add_child("x") == supervisor_errc::none));
  BOOST_TEST((core.start_child("y") == supervisor_errc::none));
  BOOST_TEST(carry_out(core, t0) == "start:x start:y");
  BOOST_TEST((core.add_child("x") == supervisor_errc::child_exists));
  BOOST_TEST((core.add_child("") == supervisor_errc::invalid_id));
  BOOST_TEST(core.which_children().size() == 2u);
}

BOOST_AUTO_TEST_CASE(simple_one_for_one_restarts_only_the_failed_child) {
  auto core = started(flags(restart_strategy::simple_one_for_one),
                      {spec("worker", restart_type::transient)});
  BOOST_TEST((core.add_child("x") == supervisor_errc::none));
  BOOST_TEST((core.add_child("y") == supervisor_errc::none));
  carry_out(core, t0);
  BOOST_TEST(describe(core.on_exit("x", child_exit::abnormal, t0)) ==
             "start:x");
  BOOST_TEST((core.find("x")->restart == restart_type::transient));
  BOOST_TEST(describe(core.stop_all()) == "stop:y exit");
}

BOOST_AUTO_TEST_CASE(add_child_needs_simple_one_for_one) {
  auto core = started(flags(restart_strategy::one_for_one), {spec("a")});
  BOOST_TEST((core.add_child("b") == supervisor_errc::not_supported));
  BOOST_TEST((core.start_child("b") == supervisor_errc::unknown_child));
}

// -- restart types ------------------------------------------------------------

BOOST_AUTO_TEST_CASE(permanent_child_restarts_after_any_exit) {
  auto core = started(flags(restart_strategy::one_for_one), {spec("a")});
  BOOST_TEST(describe(core.on_exit("a", child_exit::normal, t0)) == "start:a");
  carry_out(core, t0);
  BOOST_TEST(describe(core.on_exit("a", child_exit::shutdown, t0)) ==
             "start:a");
  carry_out(core, t0);
  BOOST_TEST(describe(core.on_exit("a", child_exit::abnormal, t0)) ==
             "start:a");
}

BOOST_AUTO_TEST_CASE(transient_child_restarts_only_after_abnormal_exit) {
  auto core = started(flags(restart_strategy::one_for_one),
                      {spec("n", restart_type::transient),
                       spec("s", restart_type::transient),
                       spec("x", restart_type::transient)});
  BOOST_TEST(describe(core.on_exit("n", child_exit::normal, t0)).empty());
  BOOST_TEST(describe(core.on_exit("s", child_exit::shutdown, t0)).empty());
  BOOST_TEST(describe(core.on_exit("x", child_exit::abnormal, t0)) ==
             "start:x");
  // The ones that finished stay known, stopped.
  BOOST_TEST(core.find("n").has_value());
  BOOST_TEST(!running(core, "n"));
}

BOOST_AUTO_TEST_CASE(temporary_child_is_never_restarted_and_is_forgotten) {
  auto core = started(flags(restart_strategy::one_for_one),
                      {spec("a", restart_type::temporary)});
  BOOST_TEST(describe(core.on_exit("a", child_exit::abnormal, t0)).empty());
  BOOST_TEST(!core.find("a").has_value());
}

BOOST_AUTO_TEST_CASE(temporary_sibling_stopped_for_a_restart_is_forgotten) {
  auto core =
      started(flags(restart_strategy::one_for_all),
              {spec("a"), spec("t", restart_type::temporary), spec("c")});
  BOOST_TEST(describe(core.on_exit("a", child_exit::abnormal, t0)) ==
             "stop:c stop:t start:a start:c");
  carry_out(core, t0);
  BOOST_TEST(!core.find("t").has_value());
  BOOST_TEST(core.which_children().size() == 2u);
}

// -- intensity and period -----------------------------------------------------

BOOST_AUTO_TEST_CASE(intensity_zero_escalates_on_the_first_restart) {
  auto core = started(flags(restart_strategy::one_for_one, 0),
                      {spec("a"), spec("b"), spec("c")});
  BOOST_TEST(describe(core.on_exit("b", child_exit::abnormal, t0)) ==
             "stop:c stop:a escalate");
  BOOST_TEST((core.escalation() == escalation_cause::intensity_exceeded));
}

BOOST_AUTO_TEST_CASE(one_restart_more_than_intensity_within_period_escalates) {
  auto core = started(flags(restart_strategy::one_for_one, 2, seconds{10}),
                      {spec("a"), spec("b")});
  core.on_exit("a", child_exit::abnormal, t0);
  carry_out(core, t0);
  core.on_exit("a", child_exit::abnormal, t0 + seconds{1});
  carry_out(core, t0 + seconds{1});
  BOOST_TEST((core.escalation() == escalation_cause::none));
  BOOST_TEST(describe(core.on_exit("a", child_exit::abnormal,
                                   t0 + seconds{2})) == "stop:b escalate");
}

BOOST_AUTO_TEST_CASE(restarts_slide_out_of_the_period_window) {
  auto core =
      started(flags(restart_strategy::one_for_one, 1, seconds{5}), {spec("a")});
  core.on_exit("a", child_exit::abnormal, t0);
  carry_out(core, t0);
  // 6 s later the first restart is out of the window.
  core.on_exit("a", child_exit::abnormal, t0 + seconds{6});
  carry_out(core, t0 + seconds{6});
  BOOST_TEST((core.escalation() == escalation_cause::none));
  // 1 s after that, two restarts are in the window.
  BOOST_TEST(describe(core.on_exit("a", child_exit::abnormal,
                                   t0 + seconds{7})) == "escalate");
}

BOOST_AUTO_TEST_CASE(a_restart_exactly_one_period_old_still_counts) {
  // OTP keeps a restart in the window while it is at most `period` old.
  auto core =
      started(flags(restart_strategy::one_for_one, 1, seconds{5}), {spec("a")});
  core.on_exit("a", child_exit::abnormal, t0);
  carry_out(core, t0);
  BOOST_TEST(describe(core.on_exit("a", child_exit::abnormal,
                                   t0 + seconds{5})) == "escalate");
}

BOOST_AUTO_TEST_CASE(exits_that_need_no_restart_do_not_count) {
  auto core = started(
      flags(restart_strategy::one_for_one, 0),
      {spec("t", restart_type::transient), spec("x", restart_type::temporary)});
  core.on_exit("t", child_exit::normal, t0);
  core.on_exit("x", child_exit::abnormal, t0);
  BOOST_TEST((core.escalation() == escalation_cause::none));
}

BOOST_AUTO_TEST_CASE(escalation_cancels_pending_restarts) {
  auto f = flags(restart_strategy::one_for_one, 1, seconds{5});
  f.restart_backoff = backoff{milliseconds{100}, milliseconds{100}, 0.0};
  auto core = started(f, {spec("a"), spec("b")});
  core.on_exit("a", child_exit::abnormal, t0);
  BOOST_TEST(describe(core.on_exit("b", child_exit::abnormal, t0)) ==
             "escalate");
  BOOST_TEST((core.start_child("a") == supervisor_errc::shutting_down));
}

BOOST_AUTO_TEST_CASE(failed_start_during_start_up_escalates) {
  supervision_core core{flags(restart_strategy::one_for_one),
                        {spec("a"), spec("b"), spec("c")}};
  core.start_all();
  core.on_started("a", t0);
  BOOST_TEST(describe(core.on_start_failed("b", t0)) == "stop:a escalate");
  BOOST_TEST((core.escalation() == escalation_cause::start_failed));
}

BOOST_AUTO_TEST_CASE(failed_restart_counts_as_a_failure) {
  auto core = started(flags(restart_strategy::one_for_one, 1), {spec("a")});
  core.on_exit("a", child_exit::abnormal, t0);
  BOOST_TEST(describe(core.on_start_failed("a", t0)) == "escalate");
}

// -- starts in flight ---------------------------------------------------------

BOOST_AUTO_TEST_CASE(a_start_in_flight_completes_before_the_child_runs) {
  supervision_core core{flags(restart_strategy::one_for_one),
                        {spec("a"), spec("b")}};
  core.start_all();
  BOOST_TEST(describe(core.on_start_sent("a")) == "start:b");
  BOOST_TEST(core.start_in_flight());
  BOOST_TEST(core.starting_up());
  BOOST_TEST(!running(core, "a"));
  BOOST_TEST(!core.down("a"));
  BOOST_TEST(describe(core.on_started("a", t0)) == "start:b");
  BOOST_TEST(!core.start_in_flight());
  BOOST_TEST(running(core, "a"));
  BOOST_TEST(carry_out(core, t0) == "start:b");
  BOOST_TEST(!core.starting_up());
}

BOOST_AUTO_TEST_CASE(child_that_exits_while_starting_failed_its_start) {
  supervision_core core{flags(restart_strategy::one_for_one),
                        {spec("a"), spec("b")}};
  core.start_all();
  core.on_started("a", t0);
  core.on_start_sent("b");
  BOOST_TEST(describe(core.on_exit("b", child_exit::normal, t0)) ==
             "stop:a escalate");
  BOOST_TEST((core.escalation() == escalation_cause::start_failed));
}

BOOST_AUTO_TEST_CASE(stop_all_during_a_start_stops_the_child_once_started) {
  supervision_core core{flags(restart_strategy::one_for_one),
                        {spec("a"), spec("b")}};
  core.start_all();
  core.on_start_sent("a");
  BOOST_TEST(describe(core.stop_all()) == "exit");
  BOOST_TEST(core.start_in_flight());
  BOOST_TEST(describe(core.on_started("a", t0)) == "stop:a exit");
}

BOOST_AUTO_TEST_CASE(child_asked_to_stop_while_starting_may_fail_to_start) {
  auto core =
      started(flags(restart_strategy::one_for_one, 0), {spec("a"), spec("b")});
  BOOST_TEST((core.terminate_child("b") == supervisor_errc::none));
  core.on_stop_sent("b");
  core.on_exit("b", child_exit::shutdown, t0);
  BOOST_TEST((core.start_child("b") == supervisor_errc::none));
  core.on_start_sent("b");
  BOOST_TEST((core.terminate_child("b") == supervisor_errc::none));
  BOOST_TEST(describe(core.on_start_failed("b", t0)).empty());
  BOOST_TEST((core.escalation() == escalation_cause::none));
  BOOST_TEST(core.down("b"));
}

BOOST_AUTO_TEST_CASE(sibling_failure_restarts_a_starting_child_once_started) {
  supervision_core core{flags(restart_strategy::one_for_all),
                        {spec("a"), spec("b")}};
  core.start_all();
  core.on_started("a", t0);
  core.on_start_sent("b");
  // a fails while b starts: b stops once started, then both start again.
  BOOST_TEST(describe(core.on_exit("a", child_exit::abnormal, t0)) ==
             "start:a start:b");
  BOOST_TEST(describe(core.on_started("b", t0)) == "stop:b start:a start:b");
  BOOST_TEST(carry_out(core, t0) == "stop:b start:a start:b");
  BOOST_TEST(core.find("a")->restarts == 1);
  BOOST_TEST(core.find("b")->restarts == 1);
}

// -- backoff ------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(backoff_delay_doubles_up_to_max) {
  backoff b{milliseconds{100}, milliseconds{1000}, 0.0};
  BOOST_TEST(backoff_delay(b, 1, 0.5).count() == 100);
  BOOST_TEST(backoff_delay(b, 2, 0.5).count() == 200);
  BOOST_TEST(backoff_delay(b, 3, 0.5).count() == 400);
  BOOST_TEST(backoff_delay(b, 4, 0.5).count() == 800);
  BOOST_TEST(backoff_delay(b, 5, 0.5).count() == 1000);
  BOOST_TEST(backoff_delay(b, 1000, 0.5).count() == 1000);
}

BOOST_AUTO_TEST_CASE(backoff_jitter_shortens_the_delay_within_bounds) {
  backoff b{milliseconds{100}, milliseconds{1000}, 0.5};
  BOOST_TEST(backoff_delay(b, 2, 0.0).count() == 200);
  BOOST_TEST(backoff_delay(b, 2, 0.5).count() == 150);
  auto random = supervision_core::seeded(42);
  for (int i = 0; i < 1000; ++i) {
    auto d = backoff_delay(b, 4, random()).count();
    BOOST_TEST_REQUIRE(d >= 400);
    BOOST_TEST_REQUIRE(d <= 800);
  }
}

BOOST_AUTO_TEST_CASE(full_jitter_stays_between_zero_and_the_cap) {
  backoff b{milliseconds{100}, milliseconds{300}, 1.0};
  auto random = supervision_core::seeded(1);
  for (int i = 0; i < 1000; ++i) {
    auto d = backoff_delay(b, 9, random()).count();
    BOOST_TEST_REQUIRE(d >= 0);
    BOOST_TEST_REQUIRE(d <= 300);
  }
}

BOOST_AUTO_TEST_CASE(restart_waits_for_a_growing_backoff) {
  auto f = flags(restart_strategy::one_for_one);
  f.restart_backoff = backoff{milliseconds{100}, milliseconds{250}, 0.0};
  auto core = started(f, {spec("a")});
  auto plan = core.on_exit("a", child_exit::abnormal, t0);
  BOOST_TEST_REQUIRE(plan.size() == 1u);
  BOOST_TEST((plan.front().not_before == t0 + milliseconds{100}));
  BOOST_TEST(carry_out(core, t0 + milliseconds{99}).empty());
  BOOST_TEST(carry_out(core, t0 + milliseconds{100}) == "start:a");
  auto t1 = t0 + milliseconds{150};
  BOOST_TEST((core.on_exit("a", child_exit::abnormal, t1).front().not_before ==
              t1 + milliseconds{200}));
  carry_out(core, t1 + milliseconds{200});
  auto t2 = t1 + milliseconds{300};
  BOOST_TEST((core.on_exit("a", child_exit::abnormal, t2).front().not_before ==
              t2 + milliseconds{250}));
}

BOOST_AUTO_TEST_CASE(backoff_starts_over_after_a_period_of_uptime) {
  auto f = flags(restart_strategy::one_for_one, 10, seconds{5});
  f.restart_backoff = backoff{milliseconds{100}, milliseconds{10000}, 0.0};
  auto core = started(f, {spec("a")});
  core.on_exit("a", child_exit::abnormal, t0);
  carry_out(core, t0 + milliseconds{100});
  core.on_exit("a", child_exit::abnormal, t0 + milliseconds{200});
  carry_out(core, t0 + milliseconds{400});
  // Up since t0 + 400 ms; fails a full period later.
  auto late = t0 + milliseconds{400} + seconds{5};
  BOOST_TEST(
      (core.on_exit("a", child_exit::abnormal, late).front().not_before ==
       late + milliseconds{100}));
}

BOOST_AUTO_TEST_CASE(failed_restarts_keep_growing_the_backoff) {
  auto f = flags(restart_strategy::one_for_one, 10, seconds{5});
  f.restart_backoff = backoff{milliseconds{100}, milliseconds{10000}, 0.0};
  auto core = started(f, {spec("a")});
  auto late = t0 + seconds{60};
  core.on_exit("a", child_exit::abnormal, late);
  auto again = late + milliseconds{100};
  BOOST_TEST((core.on_start_failed("a", again).front().not_before ==
              again + milliseconds{200}));
}

BOOST_AUTO_TEST_CASE(siblings_restart_after_the_same_backoff) {
  auto f = flags(restart_strategy::one_for_all);
  f.restart_backoff = backoff{milliseconds{100}, milliseconds{1000}, 0.0};
  auto core = started(f, {spec("a"), spec("b")});
  auto plan = core.on_exit("b", child_exit::abnormal, t0);
  BOOST_TEST(describe(plan) == "stop:a start:a start:b");
  BOOST_TEST((plan[1].not_before == t0 + milliseconds{100}));
  BOOST_TEST((plan[2].not_before == t0 + milliseconds{100}));
}

BOOST_AUTO_TEST_CASE(jitter_comes_from_the_injected_random_source) {
  auto f = flags(restart_strategy::one_for_one);
  f.restart_backoff = backoff{milliseconds{100}, milliseconds{1000}, 1.0};
  supervision_core core{f, {spec("a")}, [] { return 0.25; }};
  core.start_all();
  carry_out(core, t0);
  BOOST_TEST((core.on_exit("a", child_exit::abnormal, t0).front().not_before ==
              t0 + milliseconds{75}));
}

BOOST_AUTO_TEST_CASE(independent_children_start_by_their_backoff) {
  auto f = flags(restart_strategy::one_for_one);
  f.restart_backoff = backoff{milliseconds{100}, milliseconds{1000}, 0.0};
  auto core = started(f, {spec("a"), spec("b")});
  core.on_exit("a", child_exit::abnormal, t0);
  carry_out(core, t0 + milliseconds{100});
  core.on_exit("a", child_exit::abnormal, t0 + milliseconds{100});
  core.on_exit("b", child_exit::abnormal, t0 + milliseconds{100});
  // a waits 200 ms, b 100 ms: b comes first.
  BOOST_TEST(describe(core.plan()) == "start:b start:a");
}

// -- children at run time -----------------------------------------------------

BOOST_AUTO_TEST_CASE(terminated_child_stays_down_until_started_again) {
  auto core =
      started(flags(restart_strategy::one_for_one), {spec("a"), spec("b")});
  BOOST_TEST((core.terminate_child("a") == supervisor_errc::none));
  BOOST_TEST(carry_out(core, t0) == "stop:a");
  BOOST_TEST(!running(core, "a"));
  BOOST_TEST((core.start_child("a") == supervisor_errc::none));
  BOOST_TEST(carry_out(core, t0) == "start:a");
  BOOST_TEST(core.find("a")->restarts == 0);
}

BOOST_AUTO_TEST_CASE(terminated_child_exiting_abnormally_is_not_restarted) {
  auto core = started(flags(restart_strategy::one_for_one, 0), {spec("a")});
  BOOST_TEST((core.terminate_child("a") == supervisor_errc::none));
  core.on_stop_sent("a");
  BOOST_TEST(core.on_exit("a", child_exit::abnormal, t0).empty());
  BOOST_TEST((core.escalation() == escalation_cause::none));
}

BOOST_AUTO_TEST_CASE(delete_child_forgets_only_stopped_children) {
  auto core =
      started(flags(restart_strategy::one_for_one), {spec("a"), spec("b")});
  BOOST_TEST((core.delete_child("a") == supervisor_errc::child_running));
  BOOST_TEST((core.delete_child("zz") == supervisor_errc::unknown_child));
  BOOST_TEST((core.terminate_child("a") == supervisor_errc::none));
  carry_out(core, t0);
  BOOST_TEST((core.delete_child("a") == supervisor_errc::none));
  BOOST_TEST(!core.find("a").has_value());
}

BOOST_AUTO_TEST_CASE(start_child_refuses_a_running_child) {
  auto core = started(flags(restart_strategy::one_for_one), {spec("a")});
  BOOST_TEST((core.start_child("a") == supervisor_errc::child_running));
}

BOOST_AUTO_TEST_CASE(terminating_a_temporary_child_forgets_it) {
  auto core = started(flags(restart_strategy::one_for_one),
                      {spec("a", restart_type::temporary)});
  BOOST_TEST((core.terminate_child("a") == supervisor_errc::none));
  BOOST_TEST(carry_out(core, t0) == "stop:a");
  BOOST_TEST(!core.find("a").has_value());
}

BOOST_AUTO_TEST_CASE(failed_start_of_a_new_dynamic_child_drops_it) {
  auto core =
      started(flags(restart_strategy::simple_one_for_one, 0), {spec("worker")});
  BOOST_TEST((core.add_child("x") == supervisor_errc::none));
  core.on_start_failed("x", t0);
  BOOST_TEST(!core.find("x").has_value());
  BOOST_TEST((core.escalation() == escalation_cause::none));
}

BOOST_AUTO_TEST_CASE(commands_after_stop_all_are_refused) {
  auto core =
      started(flags(restart_strategy::simple_one_for_one), {spec("worker")});
  core.stop_all();
  BOOST_TEST((core.add_child("x") == supervisor_errc::shutting_down));
  BOOST_TEST((core.start_child("x") == supervisor_errc::shutting_down));
  BOOST_TEST((core.terminate_child("x") == supervisor_errc::shutting_down));
}

BOOST_AUTO_TEST_CASE(which_children_lists_children_in_start_order) {
  auto core = started(flags(restart_strategy::one_for_one),
                      {spec("a"), spec("b", restart_type::transient)});
  core.on_exit("b", child_exit::abnormal, t0);
  carry_out(core, t0);
  auto infos = core.which_children();
  BOOST_TEST_REQUIRE(infos.size() == 2u);
  BOOST_TEST((infos[0] == child_info{"a", true, restart_type::permanent, 0}));
  BOOST_TEST((infos[1] == child_info{"b", true, restart_type::transient, 1}));
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace supervision_core_test
