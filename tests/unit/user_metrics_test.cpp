// The program's own metrics (prism/metrics.hpp): what a process keeps and
// ships, and how a node sums what its worker processes shipped.

#include <boost/test/unit_test.hpp>

#include <prism/error.hpp>
#include <prism/metrics.hpp>

#include "prism/internal/user_metrics.hpp"

namespace user_metrics_test {

using namespace prism::internal;
namespace metrics = prism::metrics;

/// The series of `name` among `all` whose tags are `tags`; nullptr if none.
const user_series*
find(const std::vector<user_series>& all, const std::string& name,
     const std::vector<std::pair<std::string, std::string>>& tags = {}) {
  for (const auto& s : all)
    if (s.name == name && s.tags == tags)
      return &s;
  return nullptr;
}

user_series
counted(const std::string& name, double value,
        std::vector<std::pair<std::string, std::string>> tags = {}) {
  user_series s;
  s.name = name;
  s.kind = user_metric_kind::counter;
  s.tags = std::move(tags);
  s.value = value;
  return s;
}

BOOST_AUTO_TEST_SUITE(user_metrics)

BOOST_AUTO_TEST_CASE(a_process_ships_what_changed_with_its_totals) {
  metrics::counter served{"um_served_total", "Served", {"op"}};
  metrics::gauge depth{"um_depth"};
  metrics::histogram took{"um_took_seconds", "Took", {0.1, 1}};
  auto& registry = user_metric_registry::global();
  registry.take_changed();
  served.inc(2, {{"op", "get"}});
  served.inc(1, {{"op", "get"}});
  served.inc(5, {{"op", "put"}});
  depth.set(7);
  took.observe(0.5);
  took.observe(3);
  auto changed = registry.take_changed();
  auto get = find(changed, "um_served_total", {{"op", "get"}});
  BOOST_REQUIRE(get != nullptr);
  BOOST_TEST(get->value == 3);
  BOOST_TEST(find(changed, "um_served_total", {{"op", "put"}})->value == 5);
  BOOST_TEST(find(changed, "um_depth")->value == 7);
  auto h = find(changed, "um_took_seconds");
  BOOST_REQUIRE(h != nullptr);
  BOOST_TEST(h->buckets.count == 2u);
  BOOST_TEST(h->buckets.counts == (std::vector<std::uint64_t>{0, 1, 1}));
  // Nothing changed since: nothing to ship; then only what changed, with
  // its total so far.
  BOOST_TEST(registry.take_changed().empty());
  served.inc(1, {{"op", "get"}});
  changed = registry.take_changed();
  BOOST_REQUIRE(changed.size() == 1u);
  BOOST_TEST(changed[0].value == 4);
}

BOOST_AUTO_TEST_CASE(a_name_means_one_metric) {
  metrics::counter a{"um_same_total", "Same", {"k"}};
  metrics::counter again{"um_same_total", "Same", {"k"}};
  BOOST_CHECK_THROW((metrics::gauge{"um_same_total", "Same", {"k"}}),
                    prism::invalid_argument_error);
  BOOST_CHECK_THROW((metrics::counter{"um_same_total", "Other", {"k"}}),
                    prism::invalid_argument_error);
}

BOOST_AUTO_TEST_CASE(bad_names_keys_and_updates_are_refused) {
  using prism::invalid_argument_error;
  BOOST_CHECK_THROW(metrics::counter{"9lives"}, invalid_argument_error);
  BOOST_CHECK_THROW(metrics::counter{"has space"}, invalid_argument_error);
  BOOST_CHECK_THROW(metrics::counter{"prism_mine"}, invalid_argument_error);
  BOOST_CHECK_THROW((metrics::counter{"um_keys", "", {"node"}}),
                    invalid_argument_error);
  BOOST_CHECK_THROW((metrics::counter{"um_keys", "", {"a", "a"}}),
                    invalid_argument_error);
  BOOST_CHECK_THROW((metrics::histogram{"um_hist", "", {1, 0.5}}),
                    invalid_argument_error);
  BOOST_CHECK_THROW((metrics::histogram{"um_hist", "", {}}),
                    invalid_argument_error);
  metrics::counter c{"um_refused_total", "", {"op"}};
  BOOST_CHECK_THROW(c.inc(-1), invalid_argument_error);
  BOOST_CHECK_THROW(c.inc(1, {{"other", "x"}}), invalid_argument_error);
}

BOOST_AUTO_TEST_CASE(
    a_node_sums_its_processes_and_keeps_what_ended_ones_counted) {
  user_metric_table node;
  node.apply("w1", {counted("c_total", 3)});
  node.apply("w2", {counted("c_total", 4)});
  node.apply("w1", {counted("c_total", 5)}); // a total, not an increment
  BOOST_TEST(find(node.merged(), "c_total")->value == 9);
  node.retire_all_but({"w2"});
  BOOST_TEST(find(node.merged(), "c_total")->value == 9);
  node.apply("w3", {counted("c_total", 1)});
  BOOST_TEST(find(node.merged(), "c_total")->value == 10);
}

BOOST_AUTO_TEST_CASE(a_gauge_is_what_was_set_last_on_the_node) {
  user_metric_table node;
  auto set = [](double v, std::int64_t at) {
    auto s = counted("g", v);
    s.kind = user_metric_kind::gauge;
    s.set_us = at;
    return s;
  };
  node.apply("w1", {set(5, 100)});
  node.apply("w2", {set(8, 50)});
  BOOST_TEST(find(node.merged(), "g")->value == 5);
  node.retire("w1");
  node.apply("w2", {set(2, 200)});
  BOOST_TEST(find(node.merged(), "g")->value == 2);
}

BOOST_AUTO_TEST_CASE(histograms_add_up_bucket_by_bucket) {
  user_metric_table node;
  auto observed = [](std::vector<double> values) {
    auto s = counted("h_seconds", 0);
    s.kind = user_metric_kind::histogram;
    s.buckets = histogram{{1, 10}};
    for (auto v : values)
      s.buckets.observe(v);
    return s;
  };
  node.apply("w1", {observed({0.5, 5})});
  node.apply("w2", {observed({50})});
  node.retire("w2");
  auto merged = node.merged();
  auto h = find(merged, "h_seconds");
  BOOST_REQUIRE(h != nullptr);
  BOOST_TEST(h->buckets.counts == (std::vector<std::uint64_t>{1, 1, 1}));
  BOOST_TEST(h->buckets.sum == 55.5);
}

BOOST_AUTO_TEST_CASE(what_a_node_cannot_serve_is_dropped_and_counted) {
  user_metric_table node;
  auto as_gauge = counted("kind_total", 1);
  as_gauge.kind = user_metric_kind::gauge;
  node.apply("w1", {counted("kind_total", 1)});
  node.apply("w2", {as_gauge});                       // another kind
  node.apply("w2", {counted("prism_nodes", 1)});      // Prism's name
  node.apply("w2", {counted("bad name", 1)});         // not a name
  node.apply("w2", {counted("x", 1, {{"le", "1"}})}); // Prism's key
  BOOST_TEST(node.dropped() == 4u);
  std::vector<user_series> many;
  for (std::size_t i = 0; i <= max_series_per_metric; ++i)
    many.push_back(counted("wide_total", 1, {{"k", std::to_string(i)}}));
  node.apply("w1", many);
  BOOST_TEST(node.dropped() == 5u);
  BOOST_TEST(node.merged().size() == max_series_per_metric + 1);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace user_metrics_test
