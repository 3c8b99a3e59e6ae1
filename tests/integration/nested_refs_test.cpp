// object_refs inside values: in containers and user types passed to tasks,
// as parameters of type object_ref, and returned from tasks.

#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "cluster_fixture.hpp"

namespace nested_refs_test {

using prism_test::result_timeout;

/// A value that carries a reference inside it.
struct labelled_ref {
  std::string label;
  prism::object_ref<int> ref;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, labelled_ref& x) {
  return f(x.label, x.ref);
}

int plus1(int x) {
  return x + 1;
}

// Gets every ref itself: refs nested in a container arrive as refs.
int sum_refs(std::vector<prism::object_ref<int>> refs) {
  int result = 0;
  for (const auto& ref : refs)
    result += prism::get(ref, prism_test::result_timeout);
  return result;
}

// A parameter of type object_ref receives the ref, not the value behind it.
int get_through(prism::object_ref<int> ref) {
  return prism::get(ref, prism_test::result_timeout);
}

std::string describe(labelled_ref x) {
  return x.label + "=" +
         std::to_string(prism::get(x.ref, prism_test::result_timeout));
}

// Returns a ref to an object the task itself put, and so owns.
prism::object_ref<int> put_inside(int x) {
  return prism::put(x * 10);
}

// Returns a ref to the result of a task this task submitted.
prism::object_ref<int> submit_inside(int x) {
  return prism::task(plus1).remote(x);
}

PRISM_REMOTE(nested_refs_test::plus1, nested_refs_test::sum_refs,
             nested_refs_test::get_through, nested_refs_test::describe,
             nested_refs_test::put_inside, nested_refs_test::submit_inside);

using namespace nested_refs_test;

BOOST_FIXTURE_TEST_SUITE(nested_refs, prism_test::cluster_fixture)

BOOST_AUTO_TEST_CASE(task_gets_each_ref_of_a_vector_argument) {
  std::vector<prism::object_ref<int>> refs;
  for (int i = 1; i <= 5; ++i)
    refs.push_back(prism::put(i));
  for (int i = 6; i <= 10; ++i)
    refs.push_back(prism::task(plus1).remote(i - 1));
  auto total = prism::task(sum_refs).remote(refs);
  BOOST_TEST(prism::get(total, result_timeout) == 55);
}

BOOST_AUTO_TEST_CASE(task_gets_refs_of_a_vector_passed_by_ref) {
  std::vector<prism::object_ref<int>> refs{prism::put(1), prism::put(2)};
  auto total = prism::task(sum_refs).remote(prism::put(refs));
  BOOST_TEST(prism::get(total, result_timeout) == 3);
}

BOOST_AUTO_TEST_CASE(object_ref_parameter_receives_the_ref) {
  auto ref = prism::task(plus1).remote(41);
  BOOST_TEST(prism::get(prism::task(get_through).remote(ref), result_timeout) ==
             42);
}

BOOST_AUTO_TEST_CASE(task_gets_a_ref_inside_a_user_struct_argument) {
  labelled_ref x{"answer", prism::task(plus1).remote(41)};
  BOOST_TEST(prism::get(prism::task(describe).remote(x), result_timeout) ==
             "answer=42");
}

BOOST_AUTO_TEST_CASE(driver_gets_through_a_ref_that_a_task_put_and_returned) {
  auto outer = prism::task(put_inside).remote(4);
  auto inner = prism::get(outer, result_timeout);
  BOOST_REQUIRE(inner.valid());
  BOOST_TEST(prism::get(inner, result_timeout) == 40);
}

BOOST_AUTO_TEST_CASE(driver_gets_through_a_ref_to_a_subtask_a_task_returned) {
  auto outer = prism::task(submit_inside).remote(4);
  auto inner = prism::get(outer, result_timeout);
  BOOST_REQUIRE(inner.valid());
  BOOST_TEST(prism::get(inner, result_timeout) == 5);
}

BOOST_AUTO_TEST_CASE(ref_returned_by_a_task_can_be_passed_to_another_task) {
  auto inner = prism::get(prism::task(put_inside).remote(2), result_timeout);
  auto ref = prism::task(plus1).remote(inner);
  BOOST_TEST(prism::get(ref, result_timeout) == 21);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace nested_refs_test
