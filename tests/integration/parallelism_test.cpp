// Tasks run in parallel up to the node's CPUs, and no further.

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <thread>
#include <vector>

#include "cluster_fixture.hpp"

namespace parallelism_test {

using namespace std::chrono_literals;
using prism_test::result_timeout;

// Time is the subject of these tests: a task that sleeps holds its CPU for a
// known while, so overlapping runs show up in the wall-clock time.
int sleep_400ms(int x) {
  std::this_thread::sleep_for(400ms);
  return x;
}

prism_test::rendezvous all_four;

bool meet_the_other_three() {
  return all_four.arrive_and_wait();
}

prism_test::concurrency_gauge gauge;

// Holds its CPU for a while, so that runs the scheduler lets overlap do.
void sleep_100ms_in_gauge() {
  prism_test::concurrency_gauge::scope inside{gauge};
  std::this_thread::sleep_for(100ms);
}

PRISM_REMOTE(parallelism_test::sleep_400ms,
             parallelism_test::meet_the_other_three,
             parallelism_test::sleep_100ms_in_gauge);

using namespace parallelism_test;

namespace {

struct four_cpus_fixture : prism_test::cpus_fixture<4> {
  four_cpus_fixture() {
    all_four.reset(4);
  }
};

struct two_cpus_fixture : prism_test::cpus_fixture<2> {
  two_cpus_fixture() {
    gauge.reset();
  }
};

} // namespace

BOOST_AUTO_TEST_SUITE(parallelism)

BOOST_FIXTURE_TEST_CASE(four_sleeping_tasks_on_four_cpus_take_one_tasks_time,
                        four_cpus_fixture) {
  // Four workers first: with worker processes, starting them is not what
  // this measures (about half a second each in a sanitized build).
  std::vector<prism::object_ref<int>> warm;
  for (int i = 0; i < 4; ++i)
    warm.push_back(prism::task(sleep_400ms).remote(i));
  prism::get(warm, result_timeout);
  auto start = std::chrono::steady_clock::now();
  std::vector<prism::object_ref<int>> refs;
  for (int i = 0; i < 4; ++i)
    refs.push_back(prism::task(sleep_400ms).remote(i));
  auto values = prism::get(refs, result_timeout);
  auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  BOOST_TEST(values == (std::vector<int>{0, 1, 2, 3}),
             boost::test_tools::per_element());
  // One after the other would take 1600 ms; two at a time, 800 ms.
  BOOST_TEST(elapsed.count() < 1100);
}

BOOST_FIXTURE_TEST_CASE(four_tasks_on_four_cpus_run_at_the_same_time,
                        four_cpus_fixture) {
  std::vector<prism::object_ref<bool>> refs;
  for (int i = 0; i < 4; ++i)
    refs.push_back(prism::task(meet_the_other_three).remote());
  for (bool met : prism::get(refs, result_timeout))
    BOOST_TEST(met);
}

BOOST_FIXTURE_TEST_CASE(tasks_never_run_on_more_cpus_than_the_node_has,
                        two_cpus_fixture) {
  std::vector<prism::object_ref<void>> refs;
  for (int i = 0; i < 6; ++i)
    refs.push_back(prism::task(sleep_100ms_in_gauge).remote());
  prism::get(refs, result_timeout);
  BOOST_TEST(gauge.peak() <= 2);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace parallelism_test
