// How arguments reach a task: by value, by object_ref, through chains of
// tasks, and through each kind of parameter a remote function may declare.

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <string>
#include <vector>

#include "cluster_fixture.hpp"

namespace task_arguments_test {

using prism_test::result_timeout;

struct point {
  int x = 0;
  int y = 0;

  friend bool operator==(const point&, const point&) = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, point& p) {
  return f(p.x, p.y);
}

int answer() {
  return 42;
}

int plus1(int x) {
  return x + 1;
}

int plus(int x, int y) {
  return x + y;
}

std::string concat(const std::string& x, const std::string& y) {
  return x + y;
}

std::string exclaim(std::string&& x) {
  std::string result = std::move(x);
  result += '!';
  return result;
}

// Appends to its (copied) argument and returns it.
std::vector<int> append_seven(std::vector<int>& xs) {
  xs.push_back(7);
  return xs;
}

int sum(std::vector<int> xs) {
  int result = 0;
  for (auto x : xs)
    result += x;
  return result;
}

point mirror(point p) {
  return point{p.y, p.x};
}

std::string over(int) {
  return "over(int)";
}

std::string over(int, int) {
  return "over(int, int)";
}

std::atomic<int> bumped{0};

void bump(int n) {
  bumped += n;
}

PRISM_REMOTE(task_arguments_test::answer, task_arguments_test::plus1,
             task_arguments_test::plus, task_arguments_test::concat,
             task_arguments_test::exclaim, task_arguments_test::append_seven,
             task_arguments_test::sum, task_arguments_test::mirror,
             task_arguments_test::bump);
PRISM_REMOTE(PRISM_FUNC(task_arguments_test::over, int),
             PRISM_FUNC(task_arguments_test::over, int, int));

using namespace task_arguments_test;

namespace {

struct task_arguments_fixture : prism_test::cluster_fixture {
  task_arguments_fixture() {
    bumped = 0;
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(task_arguments, task_arguments_fixture)

// -- values and refs
// -----------------------------------------------------------

BOOST_AUTO_TEST_CASE(task_without_arguments_returns_its_value) {
  BOOST_TEST(prism::get(prism::task(answer).remote(), result_timeout) == 42);
}

BOOST_AUTO_TEST_CASE(task_receives_arguments_by_value) {
  BOOST_TEST(prism::get(prism::task(plus).remote(2, 3), result_timeout) == 5);
}

BOOST_AUTO_TEST_CASE(task_receives_the_value_behind_a_put_ref) {
  auto ref = prism::put(41);
  BOOST_TEST(prism::get(prism::task(plus1).remote(ref), result_timeout) == 42);
}

BOOST_AUTO_TEST_CASE(task_receives_the_result_of_another_task) {
  auto first = prism::task(plus1).remote(1);
  auto second = prism::task(plus1).remote(first);
  BOOST_TEST(prism::get(second, result_timeout) == 3);
}

BOOST_AUTO_TEST_CASE(chain_of_50_tasks_hands_each_result_to_the_next) {
  auto ref = prism::put(0);
  for (int i = 0; i < 50; ++i)
    ref = prism::task(plus1).remote(ref);
  BOOST_TEST(prism::get(ref, result_timeout) == 50);
}

BOOST_AUTO_TEST_CASE(nested_remote_calls_resolve_inside_out) {
  auto ref = prism::task(plus1).remote(
      prism::task(plus1).remote(prism::task(plus1).remote(0)));
  BOOST_TEST(prism::get(ref, result_timeout) == 3);
}

BOOST_AUTO_TEST_CASE(value_and_ref_arguments_mix_in_one_call) {
  auto from_put = prism::task(plus).remote(prism::put(10), 5);
  auto from_task = prism::task(plus).remote(1, prism::task(plus1).remote(1));
  BOOST_TEST(prism::get(from_put, result_timeout) == 15);
  BOOST_TEST(prism::get(from_task, result_timeout) == 3);
}

BOOST_AUTO_TEST_CASE(argument_value_is_copied_when_the_task_is_submitted) {
  std::vector<int> xs{1, 2, 3};
  auto ref = prism::task(sum).remote(xs);
  xs.push_back(100);
  BOOST_TEST(prism::get(ref, result_timeout) == 6);
}

BOOST_AUTO_TEST_CASE(user_struct_argument_and_result_round_trip) {
  auto ref = prism::task(mirror).remote(point{1, 2});
  BOOST_TEST((prism::get(ref, result_timeout) == point{2, 1}));
}

// -- parameter kinds
// -----------------------------------------------------------

BOOST_AUTO_TEST_CASE(const_string_reference_parameters_receive_the_strings) {
  auto ref = prism::task(concat).remote(std::string{"foo"},
                                        prism::put(std::string{"bar"}));
  BOOST_TEST(prism::get(ref, result_timeout) == "foobar");
}

BOOST_AUTO_TEST_CASE(rvalue_string_parameter_receives_the_string) {
  auto ref = prism::task(exclaim).remote(std::string{"hello"});
  BOOST_TEST(prism::get(ref, result_timeout) == "hello!");
}

BOOST_AUTO_TEST_CASE(string_literal_converts_to_a_string_parameter) {
  auto ref = prism::task(exclaim).remote("hi");
  BOOST_TEST(prism::get(ref, result_timeout) == "hi!");
}

BOOST_AUTO_TEST_CASE(
    non_const_reference_parameter_modifies_only_the_tasks_copy) {
  std::vector<int> xs{1, 2};
  auto ref = prism::task(append_seven).remote(xs);
  BOOST_TEST(prism::get(ref, result_timeout) == (std::vector<int>{1, 2, 7}),
             boost::test_tools::per_element());
  BOOST_TEST(xs == (std::vector<int>{1, 2}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(prism_func_selects_the_overload_to_call) {
  auto one = prism::task(PRISM_FUNC(over, int)).remote(1);
  auto two = prism::task(PRISM_FUNC(over, int, int)).remote(1, 2);
  BOOST_TEST(prism::get(one, result_timeout) == "over(int)");
  BOOST_TEST(prism::get(two, result_timeout) == "over(int, int)");
}

BOOST_AUTO_TEST_CASE(overload_selects_the_same_function_as_prism_func) {
  auto ref = prism::task(prism::overload<int, int>(over)).remote(3, 4);
  BOOST_TEST(prism::get(ref, result_timeout) == "over(int, int)");
}

// -- void functions
// ------------------------------------------------------------

BOOST_AUTO_TEST_CASE(get_of_a_void_task_returns_after_it_ran) {
  prism::get(prism::task(bump).remote(5), result_timeout);
  BOOST_TEST(bumped.load() == 5);
}

BOOST_AUTO_TEST_CASE(get_of_a_list_of_void_refs_waits_for_every_task) {
  std::vector<prism::object_ref<void>> refs;
  for (int i = 1; i <= 4; ++i)
    refs.push_back(prism::task(bump).remote(i));
  prism::get(refs, result_timeout);
  BOOST_TEST(bumped.load() == 10);
}

BOOST_AUTO_TEST_CASE(void_task_takes_its_argument_from_a_ref) {
  prism::get(prism::task(bump).remote(prism::task(plus1).remote(2)),
             result_timeout);
  BOOST_TEST(bumped.load() == 3);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace task_arguments_test
