// Tasks that submit tasks and wait for them. A task blocked in `get` lends its
// CPU back, so nesting deeper than the node has CPUs must not deadlock.

#include <boost/test/unit_test.hpp>

#include <vector>

#include "cluster_fixture.hpp"

namespace nested_tasks_test {

using prism_test::result_timeout;

int inner(int x) {
  return x * 2;
}

// Submits three nested tasks and blocks in get until they finish.
int parent(int x) {
  std::vector<prism::object_ref<int>> refs;
  for (int i = 0; i < 3; ++i)
    refs.push_back(prism::task(inner).remote(x * 10 + i));
  int result = 0;
  for (auto value : prism::get(refs, prism_test::result_timeout))
    result += value;
  return result;
}

int fib(int n) {
  if (n < 2)
    return n;
  auto a = prism::task(fib).remote(n - 1);
  auto b = prism::task(fib).remote(n - 2);
  return prism::get(a, prism_test::result_timeout) +
         prism::get(b, prism_test::result_timeout);
}

PRISM_REMOTE(nested_tasks_test::inner, nested_tasks_test::parent,
             nested_tasks_test::fib);

using namespace nested_tasks_test;

BOOST_FIXTURE_TEST_SUITE(nested_tasks, prism_test::cluster_fixture)

BOOST_AUTO_TEST_CASE(task_gets_the_results_of_its_children) {
  BOOST_TEST(prism::get(prism::task(parent).remote(1), result_timeout) ==
             2 * (10 + 11 + 12));
}

BOOST_AUTO_TEST_CASE(more_blocked_parents_than_cpus_do_not_deadlock) {
  std::vector<prism::object_ref<int>> parents;
  for (int i = 0; i < 4; ++i)
    parents.push_back(prism::task(parent).remote(i));
  auto values = prism::get(parents, result_timeout);
  BOOST_REQUIRE(values.size() == 4u);
  for (int i = 0; i < 4; ++i)
    BOOST_TEST(values[i] == 2 * (30 * i + 3), "parent " << i);
}

BOOST_AUTO_TEST_CASE(recursive_fib_of_8_returns_21) {
  BOOST_TEST(prism::get(prism::task(fib).remote(8), result_timeout) == 21);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace nested_tasks_test
