// `prism status`: what the cluster at an address holds.

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <future>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>
#include <caf/all.hpp>

#include "commands.hpp"
#include "head_connection.hpp"
#include "join/cluster_token.hpp"
#include "join/head_link.hpp"
#include "net/network.hpp"
#include "observe/cluster_status.hpp"
#include "prism/error.hpp"
#include "protocol/kv.hpp"
#include "protocol/raylet_gcs.hpp"
#include "protocol/status.hpp"
#include "session.hpp"

namespace prism::tools {

namespace {

constexpr auto ask_timeout = std::chrono::seconds{5};
/// How long a node may take to say what it uses.
constexpr auto node_timeout = std::chrono::seconds{2};

std::string short_id(const unique_id& id) {
  return id.hex().substr(0, 8);
}

std::string when(std::int64_t unix_ms) {
  std::time_t t = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  ::localtime_r(&t, &tm);
  std::ostringstream out;
  out << std::put_time(&tm, "%Y-%m-%d %H:%M:%S");
  return out.str();
}

/// "CPU 1/4, GPU 0/1": used of total, for every resource of the node.
std::string usage(const internal::resource_set& total,
                  const internal::resource_set& available) {
  std::ostringstream out;
  bool first = true;
  auto avail = available.to_map();
  for (const auto& [name, quantity] : total.to_map()) {
    out << (first ? "" : ", ") << name << " " << quantity - avail[name] << "/"
        << quantity;
    first = false;
  }
  return out.str();
}

/// Prints each demand shape once with how many ask for it.
void print_demands(std::ostream& out, const std::string& what,
                   const std::vector<internal::resource_set>& shapes) {
  for (const auto& [shape, n] : actors::count_shapes(shapes))
    out << "  {" << shape << "} x " << n << " " << what << "\n";
}

using status_report = actors::cluster_status;

void print_nodes(std::ostream& out, const status_report& r) {
  auto alive = std::count_if(r.nodes.begin(), r.nodes.end(),
                             [](const auto& n) { return n.alive; });
  out << "Nodes: " << alive << " alive, " << r.nodes.size() - alive
      << " dead\n";
  for (const auto& n : r.nodes) {
    out << "  " << short_id(n.node) << "  " << (n.alive ? "alive" : "dead ")
        << "  ";
    if (auto i = r.resources.find(n.node); i != r.resources.end())
      out << usage(i->second.total, i->second.available) << " (used/total)";
    else if (n.alive)
      out << n.resources.to_string() << " (usage unknown: no answer)";
    else
      out << n.resources.to_string();
    out << "\n";
  }
}

void print_summary(std::ostream& out, const status_report& r) {
  const auto& s = r.summary;
  auto running = std::count_if(s.jobs.begin(), s.jobs.end(),
                               [](const auto& j) { return j.running; });
  out << "Jobs: " << running << " running, " << s.jobs.size() - running
      << " finished\n";
  for (const auto& j : s.jobs)
    out << "  " << j.job.value << "  " << (j.running ? "running " : "finished")
        << "  namespace " << j.ns << ", started " << when(j.start_ms) << "\n";
  out << "Actors: " << s.actors_alive << " alive, " << s.actors_pending
      << " pending, " << s.actors_restarting << " restarting, " << s.actors_dead
      << " dead\n";
  std::vector<internal::resource_set> waiting;
  std::vector<internal::resource_set> infeasible;
  for (const auto& [id, nr] : r.resources) {
    waiting.insert(waiting.end(), nr.waiting.begin(), nr.waiting.end());
    infeasible.insert(infeasible.end(), nr.infeasible.begin(),
                      nr.infeasible.end());
  }
  out << "Pending demands:";
  if (waiting.empty() && infeasible.empty() && s.unplaced_actors.empty()) {
    out << " none\n";
    return;
  }
  out << "\n";
  print_demands(out, "task(s) waiting for resources", waiting);
  print_demands(out, "task shape(s) no node can ever fit", infeasible);
  print_demands(out, "actor(s) waiting for a node", s.unplaced_actors);
}

/// Prints the cluster at `address` ("" for `PRISM_ADDRESS`, then the head
/// started on this host): nodes, jobs, actors and waiting demands.
int status_command(std::string address, std::ostream& out) {
  try {
    head_connection head{std::move(address), "status"};
    auto report = actors::collect_cluster_status(head.system(), head.gcs(),
                                                 ask_timeout, node_timeout);
    out << "Cluster at " << head.where().host << ":" << head.where().port
        << "\n";
    print_nodes(out, report);
    print_summary(out, report);
    if (!report.status_page.empty())
      out << "Status page: " << report.status_page << "\n";
    if (!report.autoscaler.empty())
      out << "\n" << report.autoscaler;
    out << std::flush;
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "prism status: " << e.what() << std::endl;
    return 1;
  }
}

} // namespace

void add_status_command(CLI::App& app, command_list& commands) {
  auto address = std::make_shared<std::string>();
  auto* status = app.add_subcommand(
      "status", "Print the cluster's nodes, jobs, actors and waiting demands");
  status->add_option("--address", *address,
                     "The head, HOST:PORT (default: PRISM_ADDRESS, then the "
                     "head started on this host)");
  commands.push_back(
      {status, [address] { return status_command(*address, std::cout); }});
}

} // namespace prism::tools
