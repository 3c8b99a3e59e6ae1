// A task that no node can ever fit is not dropped: it waits, is reported by
// `prism::testing::pending_infeasible()`, and runs once a node that fits it
// joins.

#include <boost/test/unit_test.hpp>

#include <algorithm>

#include "cluster_fixture.hpp"

namespace infeasible_test {

using prism_test::result_timeout;
using prism_test::wait_until;

int plus1(int x) {
  return x + 1;
}

PRISM_REMOTE(infeasible_test::plus1);

namespace {

bool reported(const prism::resource_map& shape) {
  auto pending = prism::testing::pending_infeasible();
  return std::find(pending.begin(), pending.end(), shape) != pending.end();
}

} // namespace

BOOST_AUTO_TEST_SUITE(infeasible)

BOOST_AUTO_TEST_CASE(an_infeasible_task_is_reported_and_runs_when_a_node_fits) {
  prism::testing::local_cluster cluster{{{{"CPU", 2}}}};
  const prism::resource_map shape{{"TPU", 1}};
  auto ref = prism::task(infeasible_test::plus1).resources(shape).remote(41);
  BOOST_TEST(wait_until([&] { return reported(shape); }),
             "the waiting task was not reported");
  BOOST_TEST(prism::testing::task_state(ref.id()) == "queued");
  BOOST_TEST(prism::wait(std::vector{ref}, 1, std::chrono::milliseconds{50})
                 .ready.empty());
  cluster.add_node({{"CPU", 1}, {"TPU", 1}});
  BOOST_TEST(prism::get(ref, result_timeout) == 42);
  BOOST_TEST(prism::testing::pending_infeasible().empty());
}

BOOST_AUTO_TEST_CASE(a_task_that_some_node_fits_is_not_reported) {
  prism::testing::local_cluster cluster{
      {{{"CPU", 2}}, {{"CPU", 1}, {"GPU", 1}}}};
  auto ref =
      prism::task(infeasible_test::plus1).resources({{"GPU", 1}}).remote(1);
  BOOST_TEST(prism::get(ref, result_timeout) == 2);
  BOOST_TEST(prism::testing::pending_infeasible().empty());
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace infeasible_test
