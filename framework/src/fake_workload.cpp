#include "prism/internal/fake_workload.hpp"

#include <algorithm>

#include "prism/internal/autoscaler_policy.hpp"

namespace prism::internal {

fake_workload::fake_workload(resource_map head, autoscaler_time start)
    : now_(start) {
  if (!head.empty())
    nodes_.emplace("", node{resource_set{head}, resource_set{head}, {}, start});
}

void fake_workload::submit(const resource_map& shape, int count,
                           std::chrono::milliseconds duration) {
  auto& queue = waiting_[shape];
  for (int k = 0; k < count; ++k)
    queue.push_back(task{resource_set{shape}, duration, {}});
  place();
}

void fake_workload::advance(autoscaler_time now,
                            const std::vector<fake_node>& nodes) {
  now_ = now;
  std::map<std::string, const fake_node*> present;
  for (const auto& n : nodes)
    present.emplace(n.cloud_id, &n);
  for (auto i = nodes_.begin(); i != nodes_.end();) {
    auto& [id, n] = *i;
    if (!id.empty() && !present.contains(id)) {
      // Its node is gone: its tasks run again elsewhere.
      for (auto& t : n.tasks)
        waiting_[t.shape.to_map()].push_back(t);
      running_ -= n.tasks.size();
      i = nodes_.erase(i);
      continue;
    }
    auto before = n.tasks.size();
    std::erase_if(n.tasks, [&](const task& t) {
      if (t.ends > now_)
        return false;
      n.free.add(t.shape);
      return true;
    });
    finished_ += before - n.tasks.size();
    running_ -= before - n.tasks.size();
    if (before > 0 && n.tasks.empty())
      n.idle_since = now_;
    ++i;
  }
  for (const auto& [id, n] : present)
    if (!nodes_.contains(id))
      nodes_.emplace(id, node{resource_set{n->resources},
                              resource_set{n->resources},
                              {},
                              now_});
  place();
}

void fake_workload::place() {
  for (auto& [shape, queue] : waiting_) {
    if (queue.empty())
      continue;
    resource_set need{shape};
    for (auto& [id, n] : nodes_) {
      if (queue.empty())
        break;
      auto take =
          std::min<std::size_t>(queue.size(), copies_that_fit(n.free, need));
      for (std::size_t k = 0; k < take; ++k) {
        auto t = queue.back();
        queue.pop_back();
        t.ends = now_ + t.duration;
        n.free.subtract(t.shape);
        n.tasks.push_back(t);
        ++running_;
      }
    }
  }
  std::erase_if(waiting_, [](const auto& w) { return w.second.empty(); });
}

cluster_view fake_workload::view() const {
  cluster_view v;
  for (const auto& [id, n] : nodes_)
    v.nodes.push_back(cluster_node_view{id.empty() ? "head" : "node-" + id, id,
                                        n.total.to_map(), n.free.to_map(),
                                        n.tasks.empty(), n.idle_since});
  for (const auto& [shape, queue] : waiting_)
    v.demand.insert(v.demand.end(), queue.size(), shape);
  return v;
}

std::size_t fake_workload::waiting() const {
  std::size_t n = 0;
  for (const auto& [shape, queue] : waiting_)
    n += queue.size();
  return n;
}

} // namespace prism::internal
