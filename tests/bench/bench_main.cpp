// prism_bench: Ray's microbenchmarks (ray_perf) against Prism, next to the
// floor plain CAF sets. Reads the command line, measures the chosen metrics and
// reports them as `name value unit` lines and, if asked, as JSON.

#include <algorithm>
#include <array>
#include <cstddef>
#include <exception>
#include <iomanip>
#include <iostream>
#include <iterator>
#include <optional>
#include <regex>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <prism/prism.hpp>

#include "baseline.hpp"
#include "bench.hpp"

namespace prism::bench {

namespace {

constexpr const char* usage =
    "usage: prism_bench [--filter REGEX] [--json FILE] [--smoke]\n"
    "                   [--baseline FILE [--check]] [--runs N]\n"
    "  --filter REGEX   run only metrics whose name matches (ECMAScript),\n"
    "                   and with --baseline or --runs the floors they are\n"
    "                   judged by\n"
    "  --json FILE      also write the results to FILE as JSON\n"
    "  --smoke          divide iteration counts by 100 (at least 10)\n"
    "  --baseline FILE  compare each metric's ratio to its floor (or its\n"
    "                   value) with the results in FILE (written by --json),\n"
    "                   e.g. tests/bench/baseline.json\n"
    "  --check          with --baseline: exit 1 if a metric dropped by more\n"
    "                   than 15% or cannot be judged\n"
    "  --runs N         run the selection N times and keep each metric's\n"
    "                   median figure (how a baseline is made)\n";

/// The most a metric may drop against the baseline under `--check`.
constexpr double tolerated_drop = 0.15;

/// How many times a metric that looks dropped is measured again, beside its
/// floor, before its drop counts.
constexpr int remeasures = 2;

struct command_line {
  std::optional<std::regex> filter;
  std::string json_path;
  std::string baseline_path;
  bool check = false;
  int runs = 1;
  run_options options;
  bool help = false;
};

// -- command line -------------------------------------------------------------

/// Throws `std::invalid_argument` for an unknown option, a missing value or a
/// bad regex.
command_line parse_command_line(int argc, char** argv) {
  command_line cl;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 == argc)
        throw std::invalid_argument(std::string{arg} + " needs a value");
      return argv[++i];
    };
    if (arg == "--filter") {
      auto text = value();
      try {
        cl.filter.emplace(text, std::regex::ECMAScript);
      } catch (const std::regex_error& e) {
        throw std::invalid_argument("bad --filter '" + text + "': " + e.what());
      }
    } else if (arg == "--json") {
      cl.json_path = value();
    } else if (arg == "--baseline") {
      cl.baseline_path = value();
    } else if (arg == "--check") {
      cl.check = true;
    } else if (arg == "--runs") {
      auto text = value();
      try {
        cl.runs = std::stoi(text);
      } catch (const std::exception&) {
        cl.runs = 0;
      }
      if (cl.runs < 1)
        throw std::invalid_argument("bad --runs '" + text + "'");
    } else if (arg == "--smoke") {
      cl.options.smoke = true;
    } else if (arg == "--help" || arg == "-h") {
      cl.help = true;
    } else {
      throw std::invalid_argument("unknown argument '" + std::string{arg} +
                                  "'");
    }
  }
  if (cl.check && cl.baseline_path.empty())
    throw std::invalid_argument("--check needs --baseline FILE");
  return cl;
}

std::vector<metric> selected_metrics(const command_line& cl) {
  std::vector<metric> all;
  for (auto group :
       {task_metrics(), object_metrics(), actor_metrics(), caf_floor_metrics(),
        object_floor_metrics(), remote_floor_metrics(), gcs_store_metrics(),
        chaos_metrics(), cluster_metrics(), autoscaler_metrics(),
        spill_metrics()})
    all.insert(all.end(), group.begin(), group.end());
  if (!cl.filter)
    return all;
  auto chosen = [&](const metric& m) {
    return std::regex_search(m.name, *cl.filter);
  };
  // Against a baseline, or to make one, a metric needs its floor from the
  // same run.
  std::set<std::string> floors;
  if (!cl.baseline_path.empty() || cl.runs > 1)
    for (const auto& m : all)
      if (auto j = judgement_of(m.name); j && chosen(m) && !j->floor.empty())
        floors.insert(j->floor);
  std::vector<metric> selected;
  std::copy_if(
      all.begin(), all.end(), std::back_inserter(selected),
      [&](const metric& m) { return chosen(m) || floors.count(m.name) > 0; });
  return selected;
}

// -- measuring ----------------------------------------------------------------

constexpr std::size_t timed_runs = 3;

/// One warm-up run, then the median of three timed runs: the median rather
/// than the best, so that neither a run the machine slowed down nor one that
/// got lucky sets the number.
double measure(const metric& m, const run_options& opts) {
  m.run_once(opts);
  std::array<double, timed_runs> values;
  for (auto& value : values)
    value = m.run_once(opts);
  std::sort(values.begin(), values.end());
  return values[timed_runs / 2];
}

// -- reporting ----------------------------------------------------------------

void print(std::ostream& out, const result& r) {
  out << r.name << ' ' << std::fixed << std::setprecision(1) << r.value << ' '
      << r.unit << std::endl;
}

// -- main ---------------------------------------------------------------------

/// Measures `metrics` in order and prints each result as it is known. Prism
/// is started (default config: an embedded cluster with a CPU per hardware
/// thread) before the first metric that needs it and stopped after the last,
/// so that the CAF floor runs on an otherwise idle machine. Returns whether
/// every metric succeeded.
bool run_all(const std::vector<metric>& metrics, const run_options& opts,
             std::vector<result>& results) {
  auto last_prism = std::find_if(metrics.rbegin(), metrics.rend(),
                                 [](const metric& m) { return m.needs_prism; });
  bool ok = true;
  for (auto i = metrics.begin(); i != metrics.end(); ++i) {
    try {
      if (i->own_cluster && prism::is_initialized())
        prism::shutdown();
      if (i->needs_prism && !prism::is_initialized())
        prism::init();
      results.push_back({i->name, measure(*i, opts), i->unit});
      print(std::cout, results.back());
    } catch (const std::exception& e) {
      std::cerr << i->name << ": failed: " << e.what() << '\n';
      ok = false;
    }
    if (last_prism != metrics.rend() && &*i == &*last_prism)
      prism::shutdown();
  }
  stop_bench_cluster();
  return ok;
}

/// Measures each metric that looks dropped against `baseline` again, up to
/// `remeasures` times, right after its floor, and keeps the better of the
/// two figures, each with its own floor: on a busy or virtual machine one
/// run of a metric or of its floor can be off by a fifth, and a real drop
/// stays when measured again. The run's floor stays as it was measured:
/// the other metrics are judged by it.
void measure_drops_again(const std::vector<metric>& metrics,
                         const std::vector<result>& baseline,
                         const run_options& opts,
                         std::vector<result>& results) {
  auto metric_named = [&](const std::string& name) -> const metric* {
    for (const auto& m : metrics)
      if (m.name == name)
        return &m;
    return nullptr;
  };
  for (int attempt = 0; attempt < remeasures; ++attempt) {
    std::vector<result> again;
    for (const auto& name :
         compare(baseline, results, tolerated_drop, nullptr)) {
      auto j = judgement_of(name);
      const auto* m = metric_named(name);
      const auto* f = j && !j->floor.empty() ? metric_named(j->floor) : nullptr;
      if (!j || m == nullptr || (!j->floor.empty() && f == nullptr))
        continue;
      try {
        double floor_value = 0;
        if (f != nullptr) {
          floor_value = measure(*f, opts);
          std::cout << f->name << " measured again: " << std::fixed
                    << std::setprecision(1) << floor_value << ' ' << f->unit
                    << std::endl;
        }
        if (m->needs_prism) {
          stop_bench_cluster(); // An embedded metric runs embedded.
          if (!prism::is_initialized())
            prism::init();
        }
        again.push_back({name, measure(*m, opts), m->unit, floor_value});
        if (m->needs_prism)
          prism::shutdown();
      } catch (const std::exception& e) {
        std::cerr << name << ": failed when measured again: " << e.what()
                  << '\n';
        // A cluster metric's cluster is stopped with this process detached
        // from it, so that the next one starts a cluster anew and attaches
        // (only detached, the next found it running and this process not
        // attached to anything).
        if (!m->needs_prism)
          stop_bench_cluster();
        if (prism::is_initialized())
          prism::shutdown();
      }
    }
    if (again.empty())
      return;
    for (const auto& r : again)
      std::cout << r.name << " measured again: " << std::fixed
                << std::setprecision(1) << r.value << ' ' << r.unit
                << std::endl;
    keep_best(results, again);
  }
}

/// The whole program; returns its exit status.
int run(int argc, char** argv) {
  command_line cl;
  try {
    cl = parse_command_line(argc, argv);
  } catch (const std::invalid_argument& e) {
    std::cerr << "prism_bench: " << e.what() << '\n' << usage;
    return 2;
  }
  if (cl.help) {
    std::cout << usage;
    return 0;
  }
  std::vector<result> baseline;
  if (!cl.baseline_path.empty()) {
    try {
      baseline = read_results(cl.baseline_path);
    } catch (const std::exception& e) {
      std::cerr << "prism_bench: " << e.what() << '\n';
      return 2;
    }
  }
  auto metrics = selected_metrics(cl);
  if (metrics.empty()) {
    std::cerr << "prism_bench: no metric matches the filter\n";
    return 1;
  }
  std::vector<std::vector<result>> runs;
  bool ok = true;
  for (int k = 0; k < cl.runs; ++k) {
    runs.emplace_back();
    ok = run_all(metrics, cl.options, runs.back()) && ok;
  }
  auto results = cl.runs == 1 ? std::move(runs.front()) : median_of(runs);
  if (!cl.baseline_path.empty())
    measure_drops_again(metrics, baseline, cl.options, results);
  if (!cl.json_path.empty()) {
    try {
      write_results(cl.json_path, results);
    } catch (const std::exception& e) {
      std::cerr << "prism_bench: " << e.what() << '\n';
      return 1;
    }
  }
  if (!cl.baseline_path.empty()) {
    auto failed = compare(baseline, results, tolerated_drop, &std::cout);
    if (cl.check && !failed.empty()) {
      std::cerr << "prism_bench: " << failed.size()
                << " metric(s) dropped by more than "
                << static_cast<int>(tolerated_drop * 100)
                << "% or cannot be judged\n";
      return 1;
    }
  }
  return ok ? 0 : 1;
}

} // namespace

} // namespace prism::bench

int main(int argc, char** argv) {
  // A worker process of the cluster metrics serves as one from here.
  prism::serve_if_worker();
  // The peer process of the remote floor metrics (metrics_remote_floor.cpp).
  if (argc == 3 && std::string_view{argv[1]} == "--floor-peer")
    return prism::bench::run_floor_peer(std::string_view{argv[2]} == "--tuned");
  return prism::bench::run(argc, argv);
}
