// The owner's pipelining limits: which tasks count as short, how deep one
// worker's pipeline goes, how the running average moves, which lease gets
// the next task, and how many lease requests stay in flight.

#include <boost/test/unit_test.hpp>

#include <vector>

#include "prism/internal/pipelining.hpp"

namespace pipelining_test {

namespace {

using namespace prism::internal;

/// What `pick` returns when no lease gets the task.
constexpr long none = -1;

/// The index `pick_lease` chooses, or `none`.
long pick(const std::vector<std::size_t>& in_flight, std::size_t depth) {
  auto chosen = pick_lease(in_flight, depth);
  return chosen ? static_cast<long>(*chosen) : none;
}

} // namespace

BOOST_AUTO_TEST_SUITE(pipelining)

BOOST_AUTO_TEST_CASE(tasks_of_unknown_duration_are_not_short) {
  BOOST_TEST(!is_short_task(-1));
}

BOOST_AUTO_TEST_CASE(tasks_under_the_limit_are_short) {
  BOOST_TEST(is_short_task(0));
  BOOST_TEST(is_short_task(short_task_ns - 1));
}

BOOST_AUTO_TEST_CASE(tasks_at_or_over_the_limit_are_long) {
  BOOST_TEST(!is_short_task(short_task_ns));
  BOOST_TEST(!is_short_task(short_task_ns * 10));
}

BOOST_AUTO_TEST_CASE(short_tasks_pipeline_to_the_full_depth) {
  BOOST_TEST(pipeline_depth(short_task_ns / 2) == max_pipeline_depth);
}

BOOST_AUTO_TEST_CASE(long_or_unknown_tasks_go_one_at_a_time) {
  BOOST_TEST(pipeline_depth(-1) == 1u);
  BOOST_TEST(pipeline_depth(short_task_ns) == 1u);
}

BOOST_AUTO_TEST_CASE(the_first_run_sets_the_average) {
  BOOST_TEST(next_avg_run_ns(-1, 1000) == 1000);
}

BOOST_AUTO_TEST_CASE(a_later_run_weighs_a_fifth) {
  BOOST_TEST(next_avg_run_ns(1000, 2000) == 1200,
             boost::test_tools::tolerance(1e-9));
  BOOST_TEST(next_avg_run_ns(0, 500) == 100,
             boost::test_tools::tolerance(1e-9));
}

BOOST_AUTO_TEST_CASE(no_lease_gets_a_task_when_there_is_none) {
  BOOST_TEST(pick({}, max_pipeline_depth) == none);
}

BOOST_AUTO_TEST_CASE(no_lease_gets_a_task_when_all_are_full) {
  BOOST_TEST(pick({1, 1, 1}, 1) == none);
  BOOST_TEST(pick({64, 70}, max_pipeline_depth) == none);
}

BOOST_AUTO_TEST_CASE(the_least_loaded_lease_gets_the_next_task) {
  BOOST_TEST(pick({3, 1, 2}, max_pipeline_depth) == 1);
}

BOOST_AUTO_TEST_CASE(the_first_of_equally_loaded_leases_gets_the_next_task) {
  BOOST_TEST(pick({2, 1, 1}, max_pipeline_depth) == 1);
  BOOST_TEST(pick({0, 0}, 1) == 0);
}

BOOST_AUTO_TEST_CASE(a_full_lease_is_passed_over) {
  BOOST_TEST(pick({1, 0}, 1) == 1);
}

BOOST_AUTO_TEST_CASE(one_lease_request_goes_out_per_waiting_task) {
  BOOST_TEST(lease_requests_to_send(3, 0) == 3u);
  BOOST_TEST(lease_requests_to_send(3, 1) == 2u);
}

BOOST_AUTO_TEST_CASE(lease_requests_in_flight_stop_at_the_limit) {
  BOOST_TEST(lease_requests_to_send(100, 0) == max_pending_lease_requests);
  BOOST_TEST(lease_requests_to_send(100, max_pending_lease_requests - 1) == 1u);
}

BOOST_AUTO_TEST_CASE(no_lease_request_goes_out_when_enough_are_in_flight) {
  BOOST_TEST(lease_requests_to_send(0, 0) == 0u);
  BOOST_TEST(lease_requests_to_send(2, 2) == 0u);
  BOOST_TEST(lease_requests_to_send(2, 5) == 0u);
  BOOST_TEST(lease_requests_to_send(100, max_pending_lease_requests) == 0u);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace pipelining_test
