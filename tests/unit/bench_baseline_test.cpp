// How prism_bench judges a run against its baseline (tests/bench/baseline.*):
// each metric by its ratio to the floor measured beside it, the best or the
// median of several runs kept as pairs, and a metric measured again judged
// with the floor measured again, never with a floor of another run.

#include <boost/test/unit_test.hpp>

#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "baseline.hpp"

namespace bench_baseline_test {

namespace {

using prism::bench::compare;
using prism::bench::figure_of;
using prism::bench::keep_best;
using prism::bench::median_of;
using prism::bench::read_results;
using prism::bench::result;
using prism::bench::write_results;

const std::string floor_name = "caf_floor_pipelined";
const std::string metric = "1_1_actor_calls_async";
const std::string other = "single_client_tasks_async";

double figure(const std::string& name, const std::vector<result>& run) {
  auto f = figure_of(name, run);
  BOOST_REQUIRE(f.has_value());
  return *f;
}

const result* named(const std::vector<result>& run, const std::string& name) {
  for (const auto& r : run)
    if (r.name == name)
      return &r;
  return nullptr;
}

} // namespace

BOOST_AUTO_TEST_SUITE(bench_baseline)

BOOST_AUTO_TEST_CASE(the_best_of_runs_keeps_each_metric_with_its_own_floor) {
  std::vector<result> best;
  keep_best(best, {{floor_name, 100, "per_s"}, {metric, 50, "per_s"}});
  // A faster floor, and the metric a little faster but a worse ratio.
  keep_best(best, {{floor_name, 150, "per_s"}, {metric, 60, "per_s"}});
  BOOST_TEST(named(best, floor_name)->value == 150);
  BOOST_TEST(named(best, metric)->value == 50);
  BOOST_TEST(named(best, metric)->floor_value == 100);
  // 50 / 100, not the 60 / 150 of the best figures taken apart.
  BOOST_TEST(figure(metric, best) == 0.5);
}

BOOST_AUTO_TEST_CASE(the_median_of_runs_keeps_each_metric_with_its_own_floor) {
  // Ratios 0.5, 0.3 and 0.4: the median is the third run's, with its floor,
  // though its value (40) is not the median value (45).
  auto m = median_of({{{floor_name, 100, "per_s"}, {metric, 50, "per_s"}},
                      {{floor_name, 150, "per_s"}, {metric, 45, "per_s"}},
                      {{floor_name, 100, "per_s"}, {metric, 40, "per_s"}},
                      {{floor_name, 80, "per_s"}}});
  BOOST_REQUIRE_EQUAL(m.size(), 2u);
  BOOST_TEST(named(m, metric)->value == 40);
  BOOST_TEST(named(m, metric)->floor_value == 100);
  BOOST_TEST(figure(metric, m) == 0.4);
  // A floor by its value: 80, 100, 100, 150.
  BOOST_TEST(named(m, floor_name)->value == 100);
  // A cost (less is better), in a run of its own: 0.7, 0.4 and 0.5 s.
  auto cost = median_of({{{"gcs_recovery_100k_actors", 0.7, "s"}},
                         {{"gcs_recovery_100k_actors", 0.4, "s"}},
                         {{"gcs_recovery_100k_actors", 0.5, "s"}}});
  BOOST_TEST(cost.front().value == 0.5);
}

BOOST_AUTO_TEST_CASE(
    a_metric_measured_again_is_judged_with_the_floor_beside_it) {
  std::vector<result> run = {
      {floor_name, 100, "per_s"}, {metric, 40, "per_s"}, {other, 50, "per_s"}};
  // Measured again beside a faster floor: a worse ratio, and kept out.
  keep_best(run, {{metric, 45, "per_s", 150}});
  BOOST_TEST(figure(metric, run) == 0.4);
  // Beside a slower floor: a better ratio, kept with that floor.
  keep_best(run, {{metric, 45, "per_s", 90}});
  BOOST_TEST(figure(metric, run) == 0.5);
  // The run's floor is as it was measured, and so is every other figure.
  BOOST_TEST(named(run, floor_name)->value == 100);
  BOOST_TEST(figure(other, run) == 0.5);
}

BOOST_AUTO_TEST_CASE(a_drop_is_judged_by_ratios_to_the_floors_measured_beside) {
  std::vector<result> baseline = {{floor_name, 100, "per_s"},
                                  {metric, 50, "per_s", 100}};
  // The run's floor is 20% faster, the metric 20% slower: -33%.
  std::vector<result> now = {{floor_name, 120, "per_s"}, {metric, 40, "per_s"}};
  std::ostringstream out;
  BOOST_TEST(compare(baseline, now, 0.15, &out) ==
             std::vector<std::string>{metric});
  // Measured again beside a floor as fast as the baseline's: -10%.
  keep_best(now, {{metric, 45, "per_s", 100}});
  BOOST_TEST(compare(baseline, now, 0.15, &out).empty());
}

BOOST_AUTO_TEST_CASE(a_ratio_that_falls_while_the_figure_holds_is_no_drop) {
  std::vector<result> baseline = {{floor_name, 100, "per_s"},
                                  {metric, 50, "per_s", 100}};
  std::ostringstream out;
  // A floor that read 40% high, beside a figure that held: the ratio fell
  // 29%, the figure did not.
  BOOST_TEST(compare(baseline,
                     {{floor_name, 140, "per_s"}, {metric, 50, "per_s"}}, 0.15,
                     &out)
                 .empty());
  // A slower machine: both fell 30%, the ratio held.
  BOOST_TEST(compare(baseline,
                     {{floor_name, 70, "per_s"}, {metric, 35, "per_s"}}, 0.15,
                     &out)
                 .empty());
  // A cost judged by its value alone drops by its value.
  std::vector<result> slower = {{"gcs_recovery_100k_actors", 0.5, "s"}};
  BOOST_TEST(
      compare({{"gcs_recovery_100k_actors", 0.4, "s"}}, slower, 0.15, &out) ==
      std::vector<std::string>{"gcs_recovery_100k_actors"});
}

BOOST_AUTO_TEST_CASE(a_results_file_keeps_the_floor_beside_each_metric) {
  auto path =
      std::filesystem::temp_directory_path() /
      ("prism-bench-baseline-test-" + std::to_string(::getpid()) + ".json");
  write_results(path.string(), {{floor_name, 100, "per_s"},
                                {metric, 50, "per_s", 80},
                                {other, 30, "per_s"}});
  auto back = read_results(path.string());
  std::filesystem::remove(path);
  BOOST_REQUIRE(back.size() == 3u);
  BOOST_TEST(back[1].floor_value == 80);
  // A file without it (an older baseline) reads as the run's floor.
  BOOST_TEST(back[2].floor_value == 0);
  BOOST_TEST(figure(metric, back) == 50.0 / 80);
  BOOST_TEST(figure(other, back) == 0.3);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace bench_baseline_test
