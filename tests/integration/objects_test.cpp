// put, get and wait on objects in the object store.

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "cluster_fixture.hpp"

namespace objects_test {

using namespace std::chrono_literals;
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

int times_ten(int x) {
  return x * 10;
}

// Submitted with a resource the node lacks, so it never runs.
int never_scheduled() {
  return 0;
}

/// Submits a task that cannot be scheduled on the test's node and so stays
/// pending for the whole test.
prism::object_ref<int> pending_forever() {
  return prism::task(never_scheduled).resources({{"TPU", 1}}).remote();
}

PRISM_REMOTE(objects_test::times_ten, objects_test::never_scheduled);

using namespace objects_test;

BOOST_FIXTURE_TEST_SUITE(objects, prism_test::cluster_fixture)

// -- put and get
// ---------------------------------------------------------------

BOOST_AUTO_TEST_CASE(put_then_get_returns_the_int) {
  auto ref = prism::put(42);
  BOOST_TEST(prism::get(ref, result_timeout) == 42);
}

BOOST_AUTO_TEST_CASE(put_then_get_returns_the_string) {
  auto ref = prism::put(std::string{"hello, prism"});
  BOOST_TEST(prism::get(ref, result_timeout) == "hello, prism");
}

BOOST_AUTO_TEST_CASE(put_then_get_returns_the_empty_string) {
  auto ref = prism::put(std::string{});
  BOOST_TEST(prism::get(ref, result_timeout).empty());
}

BOOST_AUTO_TEST_CASE(put_then_get_returns_the_vector) {
  std::vector<int> xs{3, 1, 4, 1, 5, 9, 2, 6};
  auto ref = prism::put(xs);
  BOOST_TEST(prism::get(ref, result_timeout) == xs,
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(put_then_get_returns_the_map) {
  std::map<std::string, int> m{{"one", 1}, {"two", 2}, {"three", 3}};
  auto ref = prism::put(m);
  BOOST_TEST((prism::get(ref, result_timeout) == m));
}

BOOST_AUTO_TEST_CASE(put_then_get_returns_the_user_struct) {
  auto ref = prism::put(point{3, -4});
  BOOST_TEST((prism::get(ref, result_timeout) == point{3, -4}));
}

BOOST_AUTO_TEST_CASE(getting_a_ref_twice_returns_the_same_value) {
  auto ref = prism::put(std::string{"twice"});
  BOOST_TEST(prism::get(ref, result_timeout) == "twice");
  BOOST_TEST(prism::get(ref, result_timeout) == "twice");
}

BOOST_AUTO_TEST_CASE(each_put_makes_a_new_object) {
  auto a = prism::put(7);
  auto b = prism::put(7);
  BOOST_TEST(!(a == b));
  BOOST_TEST(a.id().is_put());
}

BOOST_AUTO_TEST_CASE(copies_of_a_ref_name_the_same_object) {
  auto a = prism::put(7);
  auto b = a;
  BOOST_TEST((a == b));
  BOOST_TEST(prism::get(b, result_timeout) == 7);
}

BOOST_AUTO_TEST_CASE(get_of_a_list_of_refs_returns_the_values_in_order) {
  std::vector<prism::object_ref<int>> refs{
      prism::put(1), prism::task(times_ten).remote(2), prism::put(3),
      prism::task(times_ten).remote(4)};
  auto values = prism::get(refs, result_timeout);
  BOOST_TEST(values == (std::vector<int>{1, 20, 3, 40}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(get_of_an_empty_ref_throws_invalid_argument_error) {
  prism::object_ref<int> empty;
  BOOST_CHECK_THROW(prism::get(empty, result_timeout),
                    prism::invalid_argument_error);
}

// -- wait
// ----------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(wait_returns_every_ref_as_ready_when_all_are_ready) {
  std::vector<prism::object_ref<int>> refs{
      prism::put(1), prism::task(times_ten).remote(2), prism::put(3)};
  auto result = prism::wait(refs, refs.size(), result_timeout);
  BOOST_REQUIRE(result.ready.size() == 3u);
  BOOST_TEST(result.not_ready.empty());
  for (std::size_t i = 0; i < refs.size(); ++i)
    BOOST_TEST((result.ready[i] == refs[i]), "ready[" << i << "] out of order");
}

BOOST_AUTO_TEST_CASE(
    wait_for_fewer_returns_than_refs_splits_ready_from_pending) {
  auto a = prism::put(1);
  auto b = prism::task(times_ten).remote(2);
  auto p1 = pending_forever();
  auto p2 = pending_forever();
  std::vector<prism::object_ref<int>> refs{p1, a, p2, b};
  auto result = prism::wait(refs, 2, result_timeout);
  BOOST_REQUIRE(result.ready.size() == 2u);
  BOOST_REQUIRE(result.not_ready.size() == 2u);
  BOOST_TEST((result.ready[0] == a));
  BOOST_TEST((result.ready[1] == b));
  BOOST_TEST((result.not_ready[0] == p1));
  BOOST_TEST((result.not_ready[1] == p2));
}

BOOST_AUTO_TEST_CASE(wait_returns_after_its_timeout_with_what_is_ready) {
  auto a = prism::put(1);
  auto p = pending_forever();
  std::vector<prism::object_ref<int>> refs{a, p};
  auto result = prism::wait(refs, 2, 100ms);
  BOOST_REQUIRE(result.ready.size() == 1u);
  BOOST_REQUIRE(result.not_ready.size() == 1u);
  BOOST_TEST((result.ready[0] == a));
  BOOST_TEST((result.not_ready[0] == p));
}

BOOST_AUTO_TEST_CASE(
    wait_on_a_task_that_cannot_be_scheduled_reports_it_not_ready) {
  std::vector<prism::object_ref<int>> refs{pending_forever()};
  auto result = prism::wait(refs, 1, 100ms);
  BOOST_TEST(result.ready.empty());
  BOOST_REQUIRE(result.not_ready.size() == 1u);
  BOOST_TEST((result.not_ready[0] == refs[0]));
}

BOOST_AUTO_TEST_CASE(
    wait_for_more_returns_than_refs_throws_invalid_argument_error) {
  std::vector<prism::object_ref<int>> refs{prism::put(1)};
  BOOST_CHECK_THROW(prism::wait(refs, 2, result_timeout),
                    prism::invalid_argument_error);
}

// -- timeouts
// ------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(get_of_a_task_that_never_finishes_throws_timeout_error) {
  auto ref = pending_forever();
  try {
    prism::get(ref, 100ms);
    BOOST_FAIL("get returned a value of a task that cannot run");
  } catch (const prism::timeout_error& e) {
    BOOST_TEST((e.code() == prism::errc::timeout));
  }
}

BOOST_AUTO_TEST_CASE(timeout_error_is_retryable) {
  auto ref = pending_forever();
  try {
    prism::get(ref, 100ms);
    BOOST_FAIL("get returned a value of a task that cannot run");
  } catch (const prism::timeout_error& e) {
    BOOST_TEST(e.retryable());
  }
}

BOOST_AUTO_TEST_CASE(
    get_of_a_list_with_a_never_finishing_task_throws_timeout_error) {
  std::vector<prism::object_ref<int>> refs{prism::put(1), pending_forever()};
  BOOST_CHECK_THROW(prism::get(refs, 100ms), prism::timeout_error);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace objects_test
