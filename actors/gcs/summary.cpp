#include "gcs/summary.hpp"

#include <algorithm>

#include "gcs/gcs_state.hpp"

namespace prism::actors::gcs_detail {

protocol::cluster_summary summarize(const gcs_state& st) {
  protocol::cluster_summary result;
  for (const auto& [id, j] : st.jobs.entries)
    result.jobs.push_back(
        protocol::job_summary{id, j.ns, j.running, j.start_ms});
  std::sort(result.jobs.begin(), result.jobs.end(),
            [](const auto& a, const auto& b) { return a.job < b.job; });
  for (const auto& [id, a] : st.actors.entries) {
    switch (a.state) {
    case internal::actor_state::pending:
      ++result.actors_pending;
      break;
    case internal::actor_state::alive:
      ++result.actors_alive;
      break;
    case internal::actor_state::restarting:
      ++result.actors_restarting;
      break;
    case internal::actor_state::dead:
      ++result.actors_dead;
      break;
    }
  }
  for (const auto& id : st.actors.unplaced)
    if (auto i = st.actors.entries.find(id); i != st.actors.entries.end())
      result.unplaced_actors.push_back(i->second.spec.resources);
  return result;
}

} // namespace prism::actors::gcs_detail
