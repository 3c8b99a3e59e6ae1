#include "observe/cluster_status.hpp"

#include <algorithm>
#include <future>
#include <optional>

#include <caf/all.hpp>

#include "autoscaler/autoscaler_service.hpp"
#include "observe/asking.hpp"
#include "prism/error.hpp"
#include "protocol/kv.hpp"

namespace prism::actors {

cluster_status collect_cluster_status(caf::actor_system& sys,
                                      const caf::actor& gcs,
                                      std::chrono::milliseconds timeout,
                                      std::chrono::milliseconds node_timeout) {
  cluster_status r;
  std::string failure;
  caf::scoped_actor self{sys};
  auto fail = [&](caf::error& err) { failure = sys.render(err); };
  self->request(gcs, timeout, protocol::list_nodes{})
      .receive(
          [&](std::vector<protocol::node_info>& nodes) {
            r.nodes = std::move(nodes);
          },
          fail);
  self->request(gcs, timeout, protocol::query_summary{})
      .receive([&](protocol::cluster_summary& s) { r.summary = std::move(s); },
               fail);
  auto kv = [&](const char* ns, const char* key, std::string& into) {
    self->request(gcs, timeout, protocol::kv_get{ns, key})
        .receive(
            [&](protocol::kv_value& v) {
              if (v.found)
                into = std::move(v.value);
            },
            fail);
  };
  kv(autoscaler_namespace, autoscaler_status_key, r.autoscaler);
  kv(status_page_namespace, status_page_key, r.status_page);
  std::stable_sort(
      r.nodes.begin(), r.nodes.end(),
      [](const auto& a, const auto& b) { return a.alive > b.alive; });
  if (!failure.empty())
    throw gcs_unavailable_error("the control store does not answer: " +
                                failure);
  std::vector<std::future<std::optional<protocol::node_resources>>> asked;
  for (auto& n : r.nodes)
    if (n.alive)
      asked.push_back(std::async(
          std::launch::async, [&sys, raylet = n.raylet, node_timeout] {
            return ask_within<protocol::node_resources>(
                sys, raylet, protocol::query_resources{}, node_timeout);
          }));
  for (auto& a : asked)
    if (auto nr = a.get())
      r.resources[nr->node] = std::move(*nr);
  return r;
}

std::map<std::string, std::size_t>
count_shapes(const std::vector<internal::resource_set>& shapes) {
  std::map<std::string, std::size_t> counted;
  for (const auto& s : shapes)
    ++counted[s.to_string()];
  return counted;
}

} // namespace prism::actors
