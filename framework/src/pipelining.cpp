#include "prism/internal/pipelining.hpp"

#include <algorithm>

namespace prism::internal {

bool is_short_task(double avg_run_ns) {
  return avg_run_ns >= 0 && avg_run_ns < short_task_ns;
}

std::size_t pipeline_depth(double avg_run_ns) {
  return is_short_task(avg_run_ns) ? max_pipeline_depth : 1;
}

double next_avg_run_ns(double avg_run_ns, double run_ns) {
  return avg_run_ns < 0 ? run_ns : 0.8 * avg_run_ns + 0.2 * run_ns;
}

std::optional<std::size_t> pick_lease(std::span<const std::size_t> in_flight,
                                      std::size_t depth) {
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < in_flight.size(); ++i)
    if (in_flight[i] < depth && (!best || in_flight[i] < in_flight[*best]))
      best = i;
  return best;
}

std::size_t lease_requests_to_send(std::size_t ready, std::size_t pending) {
  auto wanted = std::min(ready, max_pending_lease_requests);
  return pending < wanted ? wanted - pending : 0;
}

} // namespace prism::internal
