// What the reconciler knows and decided after a pass, as `status()` returns
// it (format_status, in autoscaler_status.cpp, turns it into text).

#include "prism/internal/reconciler.hpp"

#include <map>
#include <string>
#include <utility>

namespace prism::internal {

void reconciler::build_status(const cluster_view& cluster) {
  autoscaler_status s;
  s.at = now_;
  std::map<std::string, autoscaler_status::type_line> lines;
  for (const auto& t : cfg_.node_types)
    lines[t.name].node_type = t.name;
  for (const auto& [id, x] : instances_) {
    auto& l = lines[x.node_type];
    l.node_type = x.node_type;
    switch (x.state) {
    case instance_state::queued:
      ++l.queued;
      break;
    case instance_state::requested:
      ++l.requested;
      break;
    case instance_state::allocated:
      ++l.allocated;
      break;
    case instance_state::running:
      ++(x.idle ? l.idle : l.busy);
      break;
    case instance_state::stopping:
    case instance_state::termination_failed:
      ++l.stopping;
      break;
    default:
      break;
    }
  }
  for (const auto& [type, h] : health_)
    if (auto l = lines.find(type); l != lines.end()) {
      l->second.failures = h.failures;
      l->second.backed_off_until = h.until;
    }
  for (auto& [type, l] : lines)
    s.types.push_back(std::move(l));
  s.failures.assign(failures_.begin(), failures_.end());
  std::map<resource_map, int> demand;
  for (const auto& d : cluster.demand)
    ++demand[d];
  s.demand.assign(demand.begin(), demand.end());
  s.infeasible = infeasible_;
  s.waiting = waiting_;
  s.found = found_;
  s.passes = passes_;
  status_ = std::move(s);
}

} // namespace prism::internal
