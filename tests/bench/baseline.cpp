#include "baseline.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <iterator>
#include <map>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <utility>

#include <nlohmann/json.hpp>

namespace prism::bench {

namespace {

// The floors (README, "Benchmarks", says what each is).
const char* const request_rtt = "caf_floor_request_rtt";
const char* const pipelined = "caf_floor_pipelined";
const char* const remote_rtt = "caf_floor_remote_rtt";
const char* const remote_pipelined = "caf_floor_remote_pipelined";
const char* const tcp_bulk = "tcp_floor_bulk_100mb";
const char* const locked_map = "locked_map_floor";

judgement against(const char* floor) {
  return judgement{floor, true, false};
}

judgement rate() {
  return judgement{"", true, false};
}

judgement cost() {
  return judgement{"", false, false};
}

/// A share of the time something takes (lower is better), judged by the
/// points it grows: 5 points is about what two runs differ by here.
judgement overhead() {
  return judgement{"", false, false, 5.0};
}

judgement a_floor() {
  return judgement{"", true, true};
}

/// Every metric prism_bench reports, with what it is judged against: a
/// call that waits for its answer against a request's round trip, one that
/// does not against pipelined requests, a put or get (no message) against
/// a locked hash map on one thread, the same between processes for cluster
/// mode, and a large object's transfer against raw TCP's.
const std::map<std::string, judgement>& table() {
  static const std::map<std::string, judgement> t = {
      // Floors.
      {request_rtt, a_floor()},
      {pipelined, a_floor()},
      {remote_rtt, a_floor()},
      {remote_pipelined, a_floor()},
      {"caf_tuned_remote_rtt", a_floor()},
      {"caf_tuned_remote_pipelined", a_floor()},
      {"tcp_floor_rtt", a_floor()},
      {tcp_bulk, a_floor()},
      {"page_fault_floor_100mb", a_floor()},
      {"dd_write_floor_1gb", a_floor()},
      {"fsync_floor", a_floor()},
      {"dd_read_floor_1gb", a_floor()},
      {locked_map, a_floor()},
      {"autoscaler_floor_10k_listing_ms", judgement{"", false, true}},
      // Embedded: tasks, objects, actors.
      {"single_client_tasks_sync", against(request_rtt)},
      {"single_client_tasks_async", against(pipelined)},
      {"single_client_tasks_and_get_batch", against(pipelined)},
      {"multi_client_tasks_async", against(pipelined)},
      {"single_client_put_calls", against(locked_map)},
      {"single_client_get_calls", against(locked_map)},
      {"single_client_wait_1k_refs", against(pipelined)},
      {"1_1_actor_calls_sync", against(request_rtt)},
      {"1_1_actor_calls_async", against(pipelined)},
      {"1_1_actor_calls_concurrent", against(pipelined)},
      {"1_n_actor_calls_async", against(pipelined)},
      {"n_n_actor_calls_async", against(pipelined)},
      {"n_n_actor_calls_with_arg_async", against(pipelined)},
      {"actor_creation", against(pipelined)},
      {"async_actor_10k_waiting_calls_ms", cost()},
      {"actors_100k_rss_mb", cost()},
      {"list_100k_actors_filtered_ms", cost()},
      {"list_1m_task_events_filtered_ms", cost()},
      {"timeline_1m_tasks_mb", cost()},
      {"task_events_cost_pct", overhead()},
      {"actor_call_events_cost_pct", overhead()},
      // The control store.
      {"gcs_write_nosync", rate()},
      {"gcs_write_sync", against("fsync_floor")},
      {"gcs_recovery_100k_actors", cost()},
      // Node kills.
      {"chaos_tasks_completed", rate()},
      {"chaos_tasks_wrong_or_lost", cost()},
      {"node_death_detection_ms", cost()},
      // Cluster mode.
      {"cluster_tasks_sync", against(remote_rtt)},
      {"cluster_tasks_async", against(remote_pipelined)},
      {"status_page_cost_pct", overhead()},
      {"cluster_actor_calls_sync", against(remote_rtt)},
      {"cluster_actor_calls_async", against(remote_pipelined)},
      {"cluster_tasks_sync_tls", against(remote_rtt)},
      {"cluster_tasks_async_tls", against(remote_pipelined)},
      {"cluster_actor_creation", rate()},
      {"cluster_actor_creation_shared", against(remote_pipelined)},
      {"cluster_100k_actors_rss_mb", cost()},
      {"status_page_100k_actors_search_ms", cost()},
      {"status_page_100k_actors_overview_ms", cost()},
      {"cluster_get_100mb_across_nodes", against(tcp_bulk)},
      {"node_get_100mb_same_node", against("page_fault_floor_100mb")},
      // Spilling.
      {"spill_1gb_mb_s", against("dd_write_floor_1gb")},
      {"restore_1gb_mb_s", against("dd_read_floor_1gb")},
      {"worker_process_start_ms", cost()},
      {"cluster_node_kill_to_retry_ms", cost()},
      {"cluster_node_freeze_detect_ms", cost()},
      // The autoscaler.
      {"autoscaler_reconcile_10k_instances_ms",
       judgement{"autoscaler_floor_10k_listing_ms", false, false}},
      {"autoscaler_converge_s", cost()},
      {"autoscaler_converge_real_ms", cost()},
  };
  return t;
}

const result* find(const std::vector<result>& run, const std::string& name) {
  for (const auto& r : run)
    if (r.name == name)
      return &r;
  return nullptr;
}

/// The figure of `name`, judged `j`, in `run`.
std::optional<double> figure(const std::string& name, const judgement& j,
                             const std::vector<result>& run) {
  auto* v = find(run, name);
  if (v == nullptr)
    return std::nullopt;
  if (j.floor.empty())
    return v->value;
  if (v->floor_value > 0)
    return v->value / v->floor_value;
  auto* f = find(run, j.floor);
  if (f == nullptr || f->value == 0)
    return std::nullopt;
  return v->value / f->value;
}

/// `r`, of `run`, with the floor it was measured beside: a metric is kept
/// with it.
result with_own_floor(result r, const std::optional<judgement>& j,
                      const std::vector<result>& run) {
  if (j && !j->floor.empty() && r.floor_value == 0)
    if (const auto* f = find(run, j->floor); f != nullptr)
      r.floor_value = f->value;
  return r;
}

/// How much better `now` is than `then` (0.1 is 10% better, -0.1 is 10%
/// worse), for a figure judged `j`.
double change(double then, double now, const judgement& j) {
  if (then == now)
    return 0;
  if (j.higher_is_better)
    return then == 0 ? 1 : now / then - 1;
  // A cost: 0 then and more now is a defect (lost work, say).
  return now == 0 ? 1 : then / now - 1;
}

std::string shown(double x) {
  std::ostringstream s;
  if (x != 0 && std::fabs(x) < 0.01)
    s << std::setprecision(3) << x;
  else
    s << std::fixed << std::setprecision(x < 10 ? 3 : 1) << x;
  return s.str();
}

} // namespace

std::optional<judgement> judgement_of(const std::string& name) {
  auto i = table().find(name);
  if (i == table().end())
    return std::nullopt;
  return i->second;
}

std::vector<result> read_results(const std::string& path) {
  std::ifstream in{path};
  if (!in)
    throw std::runtime_error("cannot read " + path);
  std::vector<result> results;
  try {
    auto doc = nlohmann::json::parse(in);
    for (const auto& m : doc.at("metrics"))
      results.push_back(
          result{m.at("name").get<std::string>(), m.at("value").get<double>(),
                 m.at("unit").get<std::string>(), m.value("floor", 0.0)});
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(
        path + " is not a result file of prism_bench: " + e.what());
  }
  return results;
}

void write_results(const std::string& path,
                   const std::vector<result>& results) {
  auto metrics = nlohmann::json::array();
  for (const auto& r : results) {
    nlohmann::json m{{"name", r.name}, {"value", r.value}, {"unit", r.unit}};
    if (r.floor_value > 0)
      m["floor"] = r.floor_value;
    metrics.push_back(std::move(m));
  }
  std::ofstream out{path};
  out << nlohmann::json{{"metrics", metrics}}.dump(1) << '\n';
  out.close();
  if (!out)
    throw std::runtime_error("cannot write " + path);
}

std::optional<double> figure_of(const std::string& name,
                                const std::vector<result>& run) {
  auto j = judgement_of(name);
  if (!j)
    return std::nullopt;
  return figure(name, *j, run);
}

void keep_best(std::vector<result>& best, const std::vector<result>& run) {
  for (const auto& measured : run) {
    auto j = judgement_of(measured.name);
    auto r = with_own_floor(measured, j, run);
    auto b = std::find_if(best.begin(), best.end(),
                          [&](const result& x) { return x.name == r.name; });
    if (b == best.end()) {
      best.push_back(r);
      continue;
    }
    auto now = j ? figure(r.name, *j, {r}) : std::nullopt;
    auto then = j ? figure(r.name, *j, best) : std::nullopt;
    if (!then || (now && change(*then, *now, *j) > 0))
      *b = r;
  }
}

std::vector<result> median_of(const std::vector<std::vector<result>>& runs) {
  std::vector<std::string> names;
  for (const auto& run : runs)
    for (const auto& r : run)
      if (std::find(names.begin(), names.end(), r.name) == names.end())
        names.push_back(r.name);
  std::vector<result> out;
  for (const auto& name : names) {
    auto j = judgement_of(name);
    // Each run's result, with the floor it was measured beside, and how
    // good its figure is (none without a judgement or a floor).
    std::vector<std::pair<result, std::optional<double>>> all;
    for (const auto& run : runs) {
      const auto* r = find(run, name);
      if (r == nullptr)
        continue;
      auto kept = with_own_floor(*r, j, run);
      all.emplace_back(kept, j ? figure(kept.name, *j, {kept}) : std::nullopt);
    }
    std::vector<std::pair<result, std::optional<double>>> judged;
    std::copy_if(all.begin(), all.end(), std::back_inserter(judged),
                 [](const auto& x) { return x.second.has_value(); });
    if (judged.empty()) {
      out.push_back(all.front().first);
      continue;
    }
    // Worst first; the middle one (of an even count, the worse of the two).
    std::sort(judged.begin(), judged.end(), [&](const auto& a, const auto& b) {
      return change(*a.second, *b.second, *j) > 0;
    });
    out.push_back(judged[(judged.size() - 1) / 2].first);
  }
  return out;
}

std::vector<std::string> compare(const std::vector<result>& baseline,
                                 const std::vector<result>& now,
                                 double tolerance, std::ostream* out) {
  std::vector<std::string> failed;
  std::ostringstream discard;
  auto& o = out != nullptr ? *out : discard;
  o << "against the baseline (ratio to the floor of the same run, or the "
       "value; change: + better, - worse):\n";
  for (const auto& r : now) {
    auto j = judgement_of(r.name);
    if (!j) {
      o << "  " << r.name
        << ": no judgement (add it to tests/bench/baseline.cpp)\n";
      failed.push_back(r.name);
      continue;
    }
    if (j->is_floor) {
      auto* t = find(baseline, r.name);
      o << "  " << r.name << " (floor): " << shown(r.value) << " now";
      if (t != nullptr)
        o << ", " << shown(t->value) << " in the baseline";
      o << '\n';
      continue;
    }
    auto now_figure = figure(r.name, *j, now);
    if (!now_figure) {
      o << "  " << r.name << ": its floor " << j->floor
        << " was not measured in this run\n";
      failed.push_back(r.name);
      continue;
    }
    auto then_figure = figure(r.name, *j, baseline);
    auto what = j->floor.empty() ? std::string{""} : " x " + j->floor;
    if (!then_figure) {
      o << "  " << r.name << ": " << shown(*now_figure) << what
        << ", not in the baseline\n";
      continue;
    }
    o << "  " << r.name << ": " << shown(*then_figure) << " -> "
      << shown(*now_figure) << what << " (" << std::showpos << std::fixed
      << std::setprecision(1);
    bool dropped = false;
    if (j->points > 0) {
      auto grew = *now_figure - *then_figure;
      dropped = grew > j->points;
      o << *then_figure - *now_figure << " points";
    } else {
      auto c = change(*then_figure, *now_figure, *j);
      dropped = c < -tolerance;
      o << c * 100 << "%";
      // A floor cancels a slower machine, and brings its own noise: one that
      // read high makes the ratio fall while the figure itself held. A drop
      // shows in both.
      if (dropped && !j->floor.empty()) {
        auto v = change(find(baseline, r.name)->value, r.value, *j);
        dropped = v < -tolerance;
        o << "; the figure itself " << v * 100 << "%";
      }
    }
    o << std::noshowpos << ")" << (dropped ? "  DROPPED" : "") << '\n';
    if (dropped)
      failed.push_back(r.name);
  }
  return failed;
}

} // namespace prism::bench
