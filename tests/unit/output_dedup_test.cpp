// Collapsing a text many workers print alike (internal/output_dedup.hpp).

#include <boost/test/unit_test.hpp>

#include "prism/internal/output_dedup.hpp"

namespace output_dedup_test {

using prism::internal::output_dedup;
using namespace std::chrono_literals;

BOOST_AUTO_TEST_SUITE(output_dedup_windows)

BOOST_AUTO_TEST_CASE(
    a_text_prints_once_and_its_repeats_as_a_count_when_its_window_closes) {
  output_dedup d{5s};
  auto t0 = output_dedup::clock::time_point{} + 100s;
  BOOST_TEST(d.offer("loading model", "(a pid=1)", t0));
  BOOST_TEST(!d.offer("loading model", "(a pid=2)", t0 + 1s));
  BOOST_TEST(!d.offer("loading model", "(a pid=3)", t0 + 4s));
  BOOST_TEST(d.expire(t0 + 4s).empty());
  BOOST_TEST((d.next_close() == t0 + 5s));
  auto closed = d.expire(t0 + 5s);
  BOOST_REQUIRE(closed.size() == 1u);
  BOOST_TEST(closed[0].text == "loading model");
  BOOST_TEST(closed[0].tag == "(a pid=3)");
  BOOST_TEST(closed[0].count == 2u);
  // A new window: it prints at once again.
  BOOST_TEST(d.offer("loading model", "(a pid=1)", t0 + 6s));
}

BOOST_AUTO_TEST_CASE(a_text_never_repeated_closes_without_a_count) {
  output_dedup d{5s};
  auto t0 = output_dedup::clock::time_point{} + 100s;
  BOOST_TEST(d.offer("one", "x", t0));
  BOOST_TEST(d.offer("two", "x", t0 + 1s));
  BOOST_TEST(d.expire(t0 + 10s).empty());
  BOOST_TEST(!d.next_close().has_value());
}

BOOST_AUTO_TEST_CASE(
    flush_closes_every_window_in_the_order_texts_first_printed) {
  output_dedup d{5s};
  auto t0 = output_dedup::clock::time_point{} + 100s;
  d.offer("b", "x", t0);
  d.offer("a", "x", t0 + 1s);
  d.offer("a", "y", t0 + 2s);
  d.offer("b", "z", t0 + 2s);
  auto all = d.flush();
  BOOST_REQUIRE(all.size() == 2u);
  BOOST_TEST(all[0].text == "b");
  BOOST_TEST(all[0].tag == "z");
  BOOST_TEST(all[1].text == "a");
  BOOST_TEST(all[1].count == 1u);
  BOOST_TEST(d.flush().empty());
}

BOOST_AUTO_TEST_CASE(past_its_bound_the_oldest_window_closes_early) {
  output_dedup d{5s, 2};
  auto t0 = output_dedup::clock::time_point{} + 100s;
  d.offer("a", "x", t0);
  d.offer("a", "y", t0);
  d.offer("b", "x", t0);
  // "c" makes "a" forgotten: its count comes with the next expiry, and "a"
  // prints again at once.
  d.offer("c", "x", t0);
  auto early = d.expire(t0 + 1s);
  BOOST_REQUIRE(early.size() == 1u);
  BOOST_TEST(early[0].text == "a");
  BOOST_TEST(early[0].count == 1u);
  BOOST_TEST(d.offer("a", "x", t0 + 1s));
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace output_dedup_test
