// The memory monitor's decisions: when memory is past its threshold, and
// which worker goes (retriable work first, the owner running the most, its
// newest; each owner keeps its last while another has more).

#include <boost/test/unit_test.hpp>

#include <vector>

#include "prism/internal/memory_policy.hpp"

namespace memory_policy_test {

using prism::internal::choose_oom_victim;
using prism::internal::memory_over;
using prism::internal::oom_candidate;

BOOST_AUTO_TEST_SUITE(memory_monitor_policy)

BOOST_AUTO_TEST_CASE(memory_is_over_at_the_threshold_and_not_below) {
  BOOST_TEST(memory_over(95, 100, 0.95));
  BOOST_TEST(!memory_over(94, 100, 0.95));
  BOOST_TEST(!memory_over(100, 100, 0));
  BOOST_TEST(!memory_over(100, 0, 0.95));
}

BOOST_AUTO_TEST_CASE(nothing_to_choose_from_chooses_nothing) {
  BOOST_TEST(!choose_oom_victim({}).has_value());
}

BOOST_AUTO_TEST_CASE(retriable_work_goes_before_work_that_cannot_run_again) {
  std::vector<oom_candidate> c{{1, false, 9}, {2, true, 1}, {3, false, 10}};
  BOOST_TEST(choose_oom_victim(c).value() == 1u);
}

BOOST_AUTO_TEST_CASE(without_retriable_work_the_rest_is_chosen_from) {
  std::vector<oom_candidate> c{{1, false, 3}, {2, false, 7}};
  BOOST_TEST(choose_oom_victim(c).value() == 1u);
}

BOOST_AUTO_TEST_CASE(the_owner_running_the_most_loses_its_newest) {
  // Owner 1 runs three, owner 2 one (the newest of all): owner 2 keeps it.
  std::vector<oom_candidate> c{
      {1, true, 1}, {1, true, 5}, {1, true, 3}, {2, true, 9}};
  BOOST_TEST(choose_oom_victim(c).value() == 1u);
}

BOOST_AUTO_TEST_CASE(with_every_owner_down_to_one_the_newest_goes) {
  std::vector<oom_candidate> c{{1, true, 4}, {2, true, 8}, {3, true, 6}};
  BOOST_TEST(choose_oom_victim(c).value() == 1u);
}

BOOST_AUTO_TEST_CASE(of_owners_running_as_many_the_newest_work_goes) {
  std::vector<oom_candidate> c{
      {1, true, 1}, {1, true, 2}, {2, true, 3}, {2, true, 7}};
  BOOST_TEST(choose_oom_victim(c).value() == 3u);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace memory_policy_test
