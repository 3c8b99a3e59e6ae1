// Objects far larger than a message header: a 100,000-element vector through
// the object store and through a task.

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <vector>

#include "cluster_fixture.hpp"

namespace large_objects_test {

using prism_test::result_timeout;

std::vector<double> reversed(std::vector<double> xs) {
  std::reverse(xs.begin(), xs.end());
  return xs;
}

std::vector<double> make_doubles(std::size_t n) {
  std::vector<double> xs(n);
  for (std::size_t i = 0; i < n; ++i)
    xs[i] = static_cast<double>(i) * 0.5 - 1000.25;
  return xs;
}

PRISM_REMOTE(large_objects_test::reversed);

using namespace large_objects_test;

BOOST_FIXTURE_TEST_SUITE(large_objects, prism_test::cluster_fixture)

BOOST_AUTO_TEST_CASE(put_then_get_returns_100000_doubles_unchanged) {
  auto xs = make_doubles(100'000);
  auto ref = prism::put(xs);
  auto ys = prism::get(ref, result_timeout);
  BOOST_TEST(ys.size() == xs.size());
  BOOST_TEST((ys == xs));
}

BOOST_AUTO_TEST_CASE(task_returns_100000_doubles_reversed) {
  auto xs = make_doubles(100'000);
  auto ref = prism::task(reversed).remote(xs);
  auto ys = prism::get(ref, result_timeout);
  std::reverse(xs.begin(), xs.end());
  BOOST_TEST(ys.size() == xs.size());
  BOOST_TEST((ys == xs));
}

BOOST_AUTO_TEST_CASE(task_reverses_100000_doubles_passed_by_ref) {
  auto xs = make_doubles(100'000);
  auto ref = prism::task(reversed).remote(prism::put(xs));
  auto ys = prism::get(ref, result_timeout);
  std::reverse(xs.begin(), xs.end());
  BOOST_TEST((ys == xs));
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace large_objects_test
