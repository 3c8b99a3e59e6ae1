#pragma once

// A run of prism_bench against a committed baseline: each metric as a ratio
// to its floor measured in the same run (the machine's share cancels out),
// or as its value where it has no floor, and the change since the baseline.

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace prism::bench {

/// One number of a run: a metric's or a floor's.
struct result {
  std::string name;
  double value = 0;
  std::string unit;
  /// The figure of the floor measured right before this metric, where a
  /// metric is judged against a floor and kept from another measurement
  /// than the run's floor (the best of several runs, or a metric measured
  /// again): a metric is judged with the floor measured beside it, never
  /// with the best floor of other runs. 0: the run's floor.
  double floor_value = 0;
};

/// How a metric is judged against the baseline.
struct judgement {
  /// The floor its value is divided by, measured in the same run; empty:
  /// the value is compared as it is.
  std::string floor;
  /// Whether a larger value is better (a rate) or worse (a time, memory,
  /// lost work).
  bool higher_is_better = true;
  /// A floor itself: what the machine does, reported, never judged.
  bool is_floor = false;
  /// For a share of the time (a percentage, lower is better): how many
  /// points it may grow before it counts as a drop. A share that a run
  /// measured at or near 0 is noise, and any share is "100% worse" than
  /// it; 0 for every other metric, judged by its relative change.
  double points = 0;
};

/// How `name` is judged; none for a metric the table does not know, which
/// `compare` reports as such (a new metric needs its line).
std::optional<judgement> judgement_of(const std::string& name);

/// Reads the results a run wrote with `--json`. Throws `std::runtime_error`
/// if `path` cannot be read or is not such a file.
std::vector<result> read_results(const std::string& path);

/// Writes `results` to `path` in the form `read_results` reads.
void write_results(const std::string& path, const std::vector<result>& results);

/// The figure a metric is judged by in `run`: its ratio to its floor, or its
/// value; none if the metric or its floor is missing.
std::optional<double> figure_of(const std::string& name,
                                const std::vector<result>& run);

/// Keeps in `best` the better of each metric and floor in `best` or `run`:
/// a floor by its value (what the machine can do), a metric by its figure,
/// with the floor of its own run (`result::floor_value`). One run of a
/// floor can be off by a fifth; the best floor of three runs would make
/// every metric of the others look worse than it was.
void keep_best(std::vector<result>& best, const std::vector<result>& run);

/// The median of `runs` (whole runs of the same selection), each metric and
/// floor kept as `keep_best` keeps them (a metric with the floor of its own
/// run), in the order of the first run: how a baseline is made. The best of
/// three is a high mark for a figure as noisy as some here, which a later
/// run then misses by more than the tolerance with no change to its code.
std::vector<result> median_of(const std::vector<std::vector<result>>& runs);

/// Compares `now` with `baseline`. Returns the names of metrics that dropped
/// by more than `tolerance` (0.15 is 15%): a metric judged against a floor
/// drops when its ratio to the floor and its figure itself both fell that
/// far (a floor that read high alone is no drop), and of those that could not
/// be judged (no line in the table, or a floor missing from the run). With
/// `out`, prints a line a metric: its figure then and now and the change,
/// worse changes negative.
std::vector<std::string> compare(const std::vector<result>& baseline,
                                 const std::vector<result>& now,
                                 double tolerance, std::ostream* out);

} // namespace prism::bench
