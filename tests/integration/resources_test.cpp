// Resource requests of tasks: which are accepted, and how custom resources
// such as a GPU are shared between tasks.

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "cluster_fixture.hpp"

namespace resources_test {

using namespace std::chrono_literals;
using prism_test::result_timeout;

int plus1(int x) {
  return x + 1;
}

prism_test::rendezvous gpu_pair;

bool meet_the_other_gpu_task() {
  return gpu_pair.arrive_and_wait();
}

prism_test::concurrency_gauge gauge;

// Holds its GPU share for a while, so that runs the scheduler lets overlap
// do.
void sleep_200ms_in_gauge() {
  prism_test::concurrency_gauge::scope inside{gauge};
  std::this_thread::sleep_for(200ms);
}

PRISM_REMOTE(resources_test::plus1, resources_test::meet_the_other_gpu_task,
             resources_test::sleep_200ms_in_gauge);

using namespace resources_test;

namespace {

/// A node with two CPUs and one GPU.
struct gpu_node_fixture : prism_test::cluster {
  gpu_node_fixture() : cluster(prism_test::make_config(2, {{"GPU", 1}})) {
    gpu_pair.reset(2);
    gauge.reset();
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(resources, gpu_node_fixture)

// -- validation of requests
// ----------------------------------------------------

BOOST_AUTO_TEST_CASE(resource_with_an_empty_name_is_rejected) {
  BOOST_CHECK_THROW(prism::task(plus1).resources({{"", 1}}),
                    prism::invalid_argument_error);
}

BOOST_AUTO_TEST_CASE(resource_quantity_of_zero_is_rejected) {
  BOOST_CHECK_THROW(prism::task(plus1).resources({{"CPU", 0}}),
                    prism::invalid_argument_error);
}

BOOST_AUTO_TEST_CASE(negative_resource_quantity_is_rejected) {
  BOOST_CHECK_THROW(prism::task(plus1).resources({{"CPU", -1}}),
                    prism::invalid_argument_error);
}

BOOST_AUTO_TEST_CASE(fractional_resource_quantity_above_one_is_rejected) {
  BOOST_CHECK_THROW(prism::task(plus1).resources({{"GPU", 1.5}}),
                    prism::invalid_argument_error);
}

BOOST_AUTO_TEST_CASE(half_a_gpu_is_accepted_and_the_task_runs) {
  auto ref = prism::task(plus1).resources({{"GPU", 0.5}}).remote(1);
  BOOST_TEST(prism::get(ref, result_timeout) == 2);
}

BOOST_AUTO_TEST_CASE(two_whole_cpus_are_accepted_and_the_task_runs) {
  auto ref = prism::task(plus1).resources({{"CPU", 2}}).remote(1);
  BOOST_TEST(prism::get(ref, result_timeout) == 2);
}

BOOST_AUTO_TEST_CASE(cpu_and_gpu_together_are_accepted_and_the_task_runs) {
  auto ref = prism::task(plus1).resources({{"CPU", 1}, {"GPU", 1}}).remote(1);
  BOOST_TEST(prism::get(ref, result_timeout) == 2);
}

// -- sharing of custom resources
// -----------------------------------------------

BOOST_AUTO_TEST_CASE(two_tasks_needing_half_a_gpu_each_run_at_the_same_time) {
  std::vector<prism::object_ref<bool>> refs;
  for (int i = 0; i < 2; ++i)
    refs.push_back(prism::task(meet_the_other_gpu_task)
                       .resources({{"GPU", 0.5}})
                       .remote());
  for (bool met : prism::get(refs, result_timeout))
    BOOST_TEST(met);
}

BOOST_AUTO_TEST_CASE(tasks_needing_half_a_gpu_never_run_three_at_once) {
  std::vector<prism::object_ref<void>> refs;
  for (int i = 0; i < 4; ++i)
    refs.push_back(
        prism::task(sleep_200ms_in_gauge).resources({{"GPU", 0.5}}).remote());
  prism::get(refs, result_timeout);
  BOOST_TEST(gauge.peak() <= 2);
}

// Pending, not dropped nor failed: the node reports the request as one no
// node can fit, and its owner still has the task queued (not running).
BOOST_AUTO_TEST_CASE(task_needing_more_gpus_than_the_node_has_stays_pending) {
  const prism::resource_map two_gpus{{"GPU", 2}};
  auto ref = prism::task(plus1).resources(two_gpus).remote(1);
  BOOST_REQUIRE_MESSAGE(prism_test::wait_until([&] {
                          auto pending = prism::testing::pending_infeasible();
                          return std::find(pending.begin(), pending.end(),
                                           two_gpus) != pending.end();
                        }),
                        "the node does not report the request as waiting");
  BOOST_TEST(prism::testing::task_state(ref.id()) == "queued");
}

BOOST_AUTO_TEST_CASE(pending_gpu_task_does_not_hold_back_cpu_tasks) {
  auto pending = prism::task(plus1).resources({{"GPU", 2}}).remote(1);
  auto ref = prism::task(plus1).remote(41);
  BOOST_TEST(prism::get(ref, result_timeout) == 42);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace resources_test
