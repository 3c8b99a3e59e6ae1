// The pauses of a retried operation: exponential growth up to a cap, jitter
// within bounds, a reset, and a deadline that ends the retries.

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <vector>

#include "prism/internal/backoff.hpp"

namespace backoff_test {

namespace {

using namespace prism;
using namespace prism::internal;
using std::chrono::milliseconds;
using time_point = retry_backoff::time_point;

const time_point t0 = time_point{} + std::chrono::hours{1};

std::vector<long> pauses(retry_backoff& b, int n) {
  std::vector<long> out;
  for (int i = 0; i < n; ++i)
    out.push_back(static_cast<long>(b.next().count()));
  return out;
}

} // namespace

BOOST_AUTO_TEST_SUITE(backoff_policy)

BOOST_AUTO_TEST_CASE(pauses_double_from_min_up_to_max) {
  retry_backoff b{backoff{milliseconds{10}, milliseconds{100}, 0.0}};
  BOOST_TEST(pauses(b, 6) == (std::vector<long>{10, 20, 40, 80, 100, 100}));
  BOOST_TEST(b.retries() == 6);
}

BOOST_AUTO_TEST_CASE(jitter_shortens_each_pause_by_at_most_its_share) {
  retry_backoff b{backoff{milliseconds{100}, milliseconds{1000}, 0.5},
                  retry_backoff::seeded(7)};
  std::vector<long> steps{100, 200, 400, 800, 1000, 1000, 1000};
  bool any_shortened = false;
  for (auto step : steps) {
    auto pause = b.next().count();
    BOOST_TEST_REQUIRE(pause >= step / 2);
    BOOST_TEST_REQUIRE(pause <= step);
    any_shortened = any_shortened || pause < step;
  }
  BOOST_TEST(any_shortened);
}

BOOST_AUTO_TEST_CASE(clients_that_fail_together_retry_apart) {
  backoff policy{milliseconds{100}, milliseconds{1000}, 0.5};
  retry_backoff a{policy, retry_backoff::seeded(1)};
  retry_backoff b{policy, retry_backoff::seeded(2)};
  BOOST_TEST(pauses(a, 5) != pauses(b, 5));
}

BOOST_AUTO_TEST_CASE(reset_starts_again_from_min) {
  retry_backoff b{backoff{milliseconds{10}, milliseconds{100}, 0.0}};
  pauses(b, 4);
  b.reset();
  BOOST_TEST(b.retries() == 0);
  BOOST_TEST(b.next().count() == 10);
}

BOOST_AUTO_TEST_CASE(the_deadline_cuts_the_last_pause_and_ends_the_retries) {
  retry_backoff b{backoff{milliseconds{10}, milliseconds{100}, 0.0}};
  auto deadline = t0 + milliseconds{25};
  BOOST_TEST((b.next(t0, deadline) == milliseconds{10}));
  BOOST_TEST((b.next(t0 + milliseconds{10}, deadline) == milliseconds{15}));
  BOOST_TEST(!b.next(deadline, deadline).has_value());
  BOOST_TEST(!b.next(deadline + milliseconds{1}, deadline).has_value());
}

BOOST_AUTO_TEST_CASE(a_long_run_of_retries_stays_at_the_cap) {
  retry_backoff b{backoff{milliseconds{1}, milliseconds{1000}, 0.0}};
  for (int i = 0; i < 100000; ++i)
    b.next();
  BOOST_TEST(b.next().count() == 1000);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace backoff_test
