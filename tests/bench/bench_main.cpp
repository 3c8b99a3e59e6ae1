// prism_bench: Ray's microbenchmarks (ray_perf) against Prism, next to the
// floor plain CAF sets. Reads the command line, measures the chosen metrics and
// reports them as `name value unit` lines and, if asked, as JSON.

#include <algorithm>
#include <array>
#include <cstddef>
#include <exception>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <iterator>
#include <optional>
#include <regex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <prism/prism.hpp>

#include "bench.hpp"

namespace prism::bench {

namespace {

constexpr const char* usage =
    "usage: prism_bench [--filter REGEX] [--json FILE] [--smoke]\n"
    "  --filter REGEX  run only metrics whose name matches (ECMAScript)\n"
    "  --json FILE     also write the results to FILE as JSON\n"
    "  --smoke         divide iteration counts by 100 (at least 10)\n";

struct command_line {
  std::optional<std::regex> filter;
  std::string json_path;
  run_options options;
  bool help = false;
};

struct result {
  std::string name;
  double value = 0;
  std::string unit;
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
    } else if (arg == "--smoke") {
      cl.options.smoke = true;
    } else if (arg == "--help" || arg == "-h") {
      cl.help = true;
    } else {
      throw std::invalid_argument("unknown argument '" + std::string{arg} +
                                  "'");
    }
  }
  return cl;
}

std::vector<metric> selected_metrics(const command_line& cl) {
  std::vector<metric> all;
  for (auto group :
       {task_metrics(), object_metrics(), actor_metrics(), caf_floor_metrics(),
        remote_floor_metrics(), gcs_store_metrics(), chaos_metrics(),
        cluster_metrics(), autoscaler_metrics()})
    all.insert(all.end(), group.begin(), group.end());
  if (!cl.filter)
    return all;
  std::vector<metric> selected;
  std::copy_if(
      all.begin(), all.end(), std::back_inserter(selected),
      [&](const metric& m) { return std::regex_search(m.name, *cl.filter); });
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

/// Writes `{"metrics":[{"name":..,"value":..,"unit":..}, ...]}`. Names and
/// units are ours and need no escaping.
void write_json(const std::string& path, const std::vector<result>& results) {
  std::ofstream out{path};
  out << "{\"metrics\":[";
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    out << (i == 0 ? "" : ",") << "{\"name\":\"" << r.name
        << "\",\"value\":" << std::fixed << std::setprecision(1) << r.value
        << ",\"unit\":\"" << r.unit << "\"}";
  }
  out << "]}\n";
  out.close();
  if (!out)
    throw std::runtime_error("cannot write " + path);
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
  return ok;
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
  auto metrics = selected_metrics(cl);
  if (metrics.empty()) {
    std::cerr << "prism_bench: no metric matches the filter\n";
    return 1;
  }
  std::vector<result> results;
  bool ok = run_all(metrics, cl.options, results);
  if (!cl.json_path.empty()) {
    try {
      write_json(cl.json_path, results);
    } catch (const std::exception& e) {
      std::cerr << "prism_bench: " << e.what() << '\n';
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
