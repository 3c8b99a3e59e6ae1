#include "observe/metrics_page.hpp"

#include <limits>
#include <map>
#include <set>
#include <sstream>

#include <prometheus/metric_family.h>
#include <prometheus/text_serializer.h>

namespace prism::actors {

namespace {

using labels = std::vector<prometheus::ClientMetric::Label>;

/// `counts` with the names past the first `max_name_labels` summed under
/// "other", per state.
std::vector<state::count> capped(const std::vector<state::count>& counts) {
  std::set<std::string> kept;
  std::map<std::string, std::uint64_t> other;
  std::vector<state::count> result;
  for (const auto& c : counts) {
    if (kept.count(c.group) == 0 && kept.size() >= max_name_labels) {
      other[c.state] += c.n;
      continue;
    }
    kept.insert(c.group);
    result.push_back(c);
  }
  for (auto& [s, n] : other)
    result.push_back({"other", s, n});
  return result;
}

} // namespace

struct metrics_page::families {
  std::map<std::string, prometheus::MetricFamily> by_name;

  prometheus::MetricFamily& family(const std::string& name,
                                   const std::string& help,
                                   prometheus::MetricType type) {
    auto& f = by_name[name];
    f.name = name;
    if (!help.empty())
      f.help = help;
    f.type = type;
    return f;
  }

  /// A series of one value: a gauge's or a counter's.
  void single(prometheus::MetricType type, const std::string& name,
              const std::string& help, labels l, double value) {
    prometheus::ClientMetric m;
    m.label = std::move(l);
    if (type == prometheus::MetricType::Counter)
      m.counter.value = value;
    else
      m.gauge.value = value;
    family(name, help, type).metric.push_back(std::move(m));
  }

  void gauge(const std::string& name, const std::string& help, labels l,
             double value) {
    single(prometheus::MetricType::Gauge, name, help, std::move(l), value);
  }

  void counter(const std::string& name, const std::string& help, labels l,
               double value) {
    single(prometheus::MetricType::Counter, name, help, std::move(l), value);
  }

  void histogram(const std::string& name, const std::string& help, labels l,
                 const internal::histogram& h) {
    prometheus::ClientMetric m;
    m.label = std::move(l);
    m.histogram.sample_count = h.count;
    m.histogram.sample_sum = h.sum;
    std::uint64_t below = 0;
    for (std::size_t i = 0; i < h.counts.size(); ++i) {
      below += h.counts[i];
      m.histogram.bucket.push_back(
          {below, i < h.bounds.size()
                      ? h.bounds[i]
                      : std::numeric_limits<double>::infinity()});
    }
    family(name, help, prometheus::MetricType::Histogram)
        .metric.push_back(std::move(m));
  }
};

metrics_page::metrics_page() : families_(std::make_unique<families>()) {}

metrics_page::~metrics_page() = default;

void metrics_page::add(const protocol::node_metrics& m) {
  auto& f = *families_;
  auto node = m.node.hex();
  for (const auto& [name, units] : m.total.amounts())
    f.gauge("prism_node_resource_capacity",
            "What the node has of each resource (CPU in cores, memory in "
            "bytes as given).",
            {{"node", node}, {"resource", name}}, m.total.quantity(name));
  for (const auto& [name, units] : m.total.amounts())
    f.gauge("prism_node_resource_used",
            "What tasks, actors and leases take of each resource now.",
            {{"node", node}, {"resource", name}},
            m.total.quantity(name) - m.available.quantity(name));
  for (const auto& [key, n] : m.workers) {
    auto slash = key.find('/');
    f.gauge("prism_node_workers",
            "The node's workers by state, and whether each is a process or "
            "a thread of the node's process.",
            {{"node", node},
             {"state", key.substr(0, slash)},
             {"kind", slash == std::string::npos ? "" : key.substr(slash + 1)}},
            static_cast<double>(n));
  }
  f.gauge("prism_node_lease_requests",
          "Requests for a worker waiting at the node; infeasible: no node "
          "can ever fit them.",
          {{"node", node}, {"state", "waiting"}},
          static_cast<double>(m.leases_waiting));
  f.gauge("prism_node_lease_requests", "",
          {{"node", node}, {"state", "infeasible"}},
          static_cast<double>(m.leases_infeasible));
  f.gauge("prism_node_leases", "Workers leased to owners now.",
          {{"node", node}}, static_cast<double>(m.leases_granted));
  f.gauge("prism_node_actors", "Actor instances the node hosts.",
          {{"node", node}}, static_cast<double>(m.actors_hosted));
  f.gauge("prism_object_store_objects",
          "Values in the node's object store, by copy (primary: the one "
          "their owner placed here).",
          {{"node", node}, {"copy", "primary"}},
          static_cast<double>(m.objects));
  f.gauge("prism_object_store_bytes",
          "Payload bytes of the values in the node's object store.",
          {{"node", node}, {"copy", "primary"}},
          static_cast<double>(m.object_bytes));
  f.gauge("prism_object_store_memory_bytes",
          "Payload bytes the node's object store holds in memory, within "
          "its bound (--object-store-memory).",
          {{"node", node}}, static_cast<double>(m.object_memory_bytes));
  f.gauge("prism_object_store_spilled_objects",
          "Objects of the node's store kept only on disk (spilled).",
          {{"node", node}}, static_cast<double>(m.spilled_objects));
  f.gauge("prism_object_store_spilled_bytes",
          "Payload bytes of the node's store kept only on disk.",
          {{"node", node}}, static_cast<double>(m.spilled_bytes));
  f.counter("prism_object_store_spills_total",
            "Objects the node's store wrote to its spill files.",
            {{"node", node}}, static_cast<double>(m.spills));
  f.counter("prism_object_store_restores_total",
            "Spilled objects read back into the node's store's memory.",
            {{"node", node}}, static_cast<double>(m.restores));
  f.counter("prism_object_store_full_waits_total",
            "Puts and task results that found the node's store full, with "
            "spilling unable to make room, and waited.",
            {{"node", node}}, static_cast<double>(m.store_full_waits));
  f.counter("prism_object_store_full_errors_total",
            "Of those, the ones that failed with object_store_full_error.",
            {{"node", node}}, static_cast<double>(m.store_full_errors));
  if (m.memory_limit > 0) {
    f.gauge("prism_node_memory_used_bytes",
            "Memory in use where the node runs (the host's, or its "
            "cgroup's), as its memory monitor last sampled it.",
            {{"node", node}}, static_cast<double>(m.memory_used));
    f.gauge("prism_node_memory_limit_bytes",
            "The most memory there is where the node runs.", {{"node", node}},
            static_cast<double>(m.memory_limit));
  }
  f.counter("prism_memory_monitor_kills_total",
            "Worker processes the node's memory monitor killed.",
            {{"node", node}}, static_cast<double>(m.memory_kills));
  f.counter("prism_output_lines_dropped_total",
            "Lines of worker output dropped before their driver took them "
            "(they stay in the node's log files).",
            {{"node", node}}, static_cast<double>(m.output_lines_dropped));
  f.counter("prism_worker_processes_started_total",
            "Worker processes the node started.", {{"node", node}},
            static_cast<double>(m.worker_processes_started));
  f.counter("prism_worker_processes_failed_total",
            "Worker processes that ended unasked: a crash, an exit, a failed "
            "start.",
            {{"node", node}}, static_cast<double>(m.worker_processes_failed));
  f.counter("prism_user_metric_series_dropped_total",
            "Series of the program's own metrics the node dropped: past "
            "1,000 of one metric, or of a name declared as another kind.",
            {{"node", node}}, static_cast<double>(m.user_dropped));
  for (const auto& s : m.user) {
    labels l{{"node", node}};
    for (const auto& [key, value] : s.tags)
      l.push_back({key, value});
    switch (s.kind) {
    case internal::user_metric_kind::counter:
      f.counter(s.name, s.description, std::move(l), s.value);
      break;
    case internal::user_metric_kind::gauge:
      f.gauge(s.name, s.description, std::move(l), s.value);
      break;
    case internal::user_metric_kind::histogram:
      f.histogram(s.name, s.description, std::move(l), s.buckets);
      break;
    }
  }
}

void metrics_page::add(const protocol::control_metrics& m) {
  auto& f = *families_;
  std::map<std::string, std::uint64_t> by_state;
  std::map<std::string, double> capacity, used;
  for (const auto& n : m.nodes) {
    ++by_state[n.state];
    if (n.heartbeat_age_ms < 0)
      continue;
    f.gauge("prism_node_heartbeat_age_seconds",
            "Seconds since the control store last heard from each live node "
            "(it reports every second).",
            {{"node", n.node.hex()}},
            static_cast<double>(n.heartbeat_age_ms) / 1000.0);
    for (const auto& [name, units] : n.total.amounts()) {
      capacity[name] += n.total.quantity(name);
      used[name] += n.total.quantity(name) - n.available.quantity(name);
    }
  }
  for (const auto& [s, n] : by_state)
    f.gauge("prism_cluster_nodes", "The cluster's nodes by state.",
            {{"state", s}}, static_cast<double>(n));
  for (const auto& [name, amount] : capacity)
    f.gauge("prism_cluster_resource_capacity",
            "What the live nodes have of each resource, together.",
            {{"resource", name}}, amount);
  for (const auto& [name, amount] : used)
    f.gauge("prism_cluster_resource_used",
            "What the live nodes use of each resource, as they last "
            "reported.",
            {{"resource", name}}, amount);
  for (const auto& c : capped(m.actors))
    f.gauge("prism_actors",
            "Actors by class and state, those the control store still keeps "
            "once dead included.",
            {{"class", c.group}, {"state", c.state}}, static_cast<double>(c.n));
  if (m.actors.empty())
    f.family("prism_actors", "Actors by class and state.",
             prometheus::MetricType::Gauge);
  for (const auto& [s, n] : m.jobs)
    f.gauge("prism_jobs", "Jobs by state.", {{"state", s}},
            static_cast<double>(n));
  f.histogram("prism_control_store_write_duration_seconds",
              "Seconds each write of the control store to its storage took "
              "(one group commit each).",
              {}, m.write_latency);
  f.counter("prism_control_store_write_failures_total",
            "Writes of the control store that failed.", {},
            static_cast<double>(m.writes_failed));
}

void metrics_page::add(const protocol::task_metrics& m) {
  auto& f = *families_;
  for (const auto& c : capped(m.tasks))
    f.gauge("prism_tasks",
            "Tasks and actor calls by function and state, of those the task "
            "event store keeps.",
            {{"function", c.group}, {"state", c.state}},
            static_cast<double>(c.n));
  if (m.tasks.empty())
    f.family("prism_tasks", "Tasks by function and state.",
             prometheus::MetricType::Gauge);
  f.histogram("prism_task_scheduling_duration_seconds",
              "Seconds from a task's submission to its first attempt's "
              "start.",
              {}, m.scheduling);
  f.histogram("prism_task_run_duration_seconds",
              "Seconds from an attempt's start to its end.", {}, m.running);
  f.counter("prism_task_events_dropped_total",
            "Task events dropped before the control store got them (a "
            "process's buffer was full).",
            {}, static_cast<double>(m.events_dropped));
  f.counter("prism_tasks_forgotten_total",
            "Tasks the task event store forgot to stay within its bound, the "
            "oldest first.",
            {}, static_cast<double>(m.tasks_forgotten));
}

void metrics_page::add_autoscaler(
    const std::vector<std::pair<std::string, std::uint64_t>>& by_state) {
  for (const auto& [s, n] : by_state)
    families_->gauge("prism_autoscaler_instances",
                     "The autoscaler's instances by state.", {{"state", s}},
                     static_cast<double>(n));
}

void metrics_page::add(const std::string& port, const http_counters& c) {
  auto& f = *families_;
  f.counter("prism_http_requests_total",
            "Requests read on the process's HTTP ports.", {{"port", port}},
            static_cast<double>(c.requests));
  auto refused = [&](const char* why, std::uint64_t n) {
    f.counter("prism_http_refused_total",
              "Connections and requests an HTTP port refused, by why.",
              {{"port", port}, {"reason", why}}, static_cast<double>(n));
  };
  refused("connections_full", c.refused);
  refused("unauthorized", c.unauthorized);
  refused("malformed", c.malformed);
  refused("timed_out", c.timed_out);
  refused("overloaded", c.overloaded);
  f.gauge("prism_http_open_connections", "Connections open on an HTTP port.",
          {{"port", port}}, static_cast<double>(c.open_connections));
}

void metrics_page::add_source(const std::string& source, bool up) {
  families_->gauge("prism_metrics_source_up",
                   "Whether each part of the process answered this scrape in "
                   "time (1) or not (0).",
                   {{"source", source}}, up ? 1 : 0);
}

std::string metrics_page::text() const {
  std::vector<prometheus::MetricFamily> all;
  all.reserve(families_->by_name.size());
  for (const auto& [name, f] : families_->by_name)
    all.push_back(f);
  std::ostringstream out;
  prometheus::TextSerializer{}.Serialize(out, all);
  return out.str();
}

std::size_t metrics_page::series() const {
  std::size_t n = 0;
  for (const auto& [name, f] : families_->by_name)
    for (const auto& m : f.metric)
      n += f.type == prometheus::MetricType::Histogram
               ? m.histogram.bucket.size() + 2
               : 1;
  return n;
}

} // namespace prism::actors
