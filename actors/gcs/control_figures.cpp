#include "gcs/control_figures.hpp"

#include <chrono>
#include <map>

#include "gcs/gcs_state.hpp"
#include "gcs/state_lists.hpp"
#include "prism/internal/state_query.hpp"

namespace prism::actors::gcs_detail {

protocol::control_metrics control_figures(const gcs_state& st) {
  protocol::control_metrics m;
  auto now = std::chrono::steady_clock::now();
  for (const auto& [id, n] : st.nodes.entries) {
    protocol::node_health h;
    h.node = id;
    h.state = internal::state_name(to_string(n.state));
    h.total = n.info.resources;
    h.available = n.reported_available;
    if (n.state == node_state::alive)
      h.heartbeat_age_ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(now -
                                                                n.last_report)
              .count();
    h.objects = n.objects;
    h.object_bytes = n.object_bytes;
    m.nodes.push_back(std::move(h));
  }
  auto actors = summarize_state(
      st, protocol::summarize_state{state::kind::actors, "class_name"});
  m.actors = std::move(actors.counts);
  std::map<std::string, std::uint64_t> jobs;
  for (const auto& [id, j] : st.jobs.entries)
    ++jobs[j.running ? "RUNNING" : "FINISHED"];
  m.jobs.assign(jobs.begin(), jobs.end());
  if (st.durability.storage)
    std::tie(m.write_latency, m.writes_failed) =
        st.durability.storage->write_figures();
  else
    m.write_latency = internal::histogram::of_latency();
  return m;
}

} // namespace prism::actors::gcs_detail
