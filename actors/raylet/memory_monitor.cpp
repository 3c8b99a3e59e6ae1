// The node's memory monitor: it samples the memory in use where the node
// runs, and past its threshold kills one worker process at a time, before
// the kernel kills the node. The choice is a pure function
// (prism/internal/memory_policy.hpp); this carries it out.

#include <functional>
#include <string>
#include <vector>

#include "prism/internal/memory_policy.hpp"
#include "protocol/kv.hpp"
#include "raylet/raylet_state.hpp"

namespace prism::actors::raylet_internal {

namespace {

/// A killed process not yet reported gone holds the next kill back at
/// most this long.
constexpr auto victim_grace = std::chrono::seconds{5};

/// Where kills are recorded in the control store's key-value table.
constexpr const char* kills_namespace = "prism.memory_monitor";

std::string percent(double share) {
  return std::to_string(static_cast<int>(share * 1000) / 10) + "." +
         std::to_string(static_cast<int>(share * 1000) % 10) + "%";
}

// The worker processes the monitor may kill, the work each runs, and who
// it is for: leased task workers; failing those, instance processes (each
// runs one actor's user code); failing those, actor hosts. An instance
// process is named by its token, a worker by its id.
struct candidates {
  std::vector<internal::oom_candidate> choice;
  std::vector<worker_id> workers;
  std::vector<std::string> instances;
};

candidates gather(raylet_state& st) {
  candidates c;
  for (const auto& [id, l] : st.leases) {
    auto w = st.pool.find(l.worker);
    if (w == nullptr || w->pid <= 0)
      continue;
    c.choice.push_back(
        {std::hash<caf::actor_addr>{}(l.owner.address()), l.retriable, id});
    c.workers.push_back(w->id);
  }
  if (!c.choice.empty())
    return c;
  // The newest first, as actor hosts are: started last, lost least.
  for (const auto& [token, p] : st.instance_processes) {
    if (p.pid <= 0)
      continue;
    c.choice.push_back({0, false, p.start_number});
    c.workers.push_back(worker_id{});
    c.instances.push_back(token);
  }
  if (!c.choice.empty())
    return c;
  st.pool.for_each([&](const worker_pool::worker& w) {
    if (!w.hosts_actor || w.pid <= 0 || w.starting)
      return;
    c.choice.push_back(
        {0, false,
         static_cast<std::uint64_t>(w.started_at.time_since_epoch().count())});
    c.workers.push_back(w.id);
  });
  return c;
}

// Records the kill in the control store, for a look afterwards.
void record_kill(raylet_actor* self, const std::string& what) {
  auto& st = self->state;
  auto key =
      st.cfg.node.hex() + "-" +
      std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count());
  self->request(st.cfg.gcs, std::chrono::seconds{10},
                protocol::kv_put{kills_namespace, key, what, true, {}})
      .then([](bool) {},
            [self](caf::error& err) {
              self->state.log->warn("memory monitor: the kill was not "
                                    "recorded in the control store: {}",
                                    self->system().render(err));
            });
}

void kill_one(raylet_actor* self) {
  auto& st = self->state;
  auto c = gather(st);
  auto victim = internal::choose_oom_victim(c.choice);
  if (!victim) {
    st.log->warn("memory monitor: {} of {} bytes in use ({}, {}), past its "
                 "threshold of {}, and no worker process to kill",
                 st.memory.used, st.memory.limit, st.memory.scope,
                 percent(st.memory.share()), percent(st.cfg.memory_threshold));
    return;
  }
  auto id = c.workers[*victim];
  auto* instance =
      id.nil() ? &st.instance_processes.at(c.instances[*victim]) : nullptr;
  auto pid = instance != nullptr ? instance->pid : st.pool.find(id)->pid;
  auto what =
      instance != nullptr
          ? "the instance process of an actor (pid " + std::to_string(pid) + ")"
          : "worker " + id.hex() + " (pid " + std::to_string(pid) + ")";
  auto why = "the memory monitor of node " + st.cfg.node.hex() + " killed " +
             what + ": " + std::to_string(st.memory.used) + " of " +
             std::to_string(st.memory.limit) + " bytes in use (" +
             st.memory.scope + ", " + percent(st.memory.share()) +
             "), past the threshold of " + percent(st.cfg.memory_threshold);
  st.log->warn("{}", why);
  st.memory_victim_pid = pid;
  st.memory_killed_at = std::chrono::steady_clock::now();
  st.memory_kills += 1;
  record_kill(self, why);
  if (instance != nullptr) {
    // Its host learns why it ended from its exit report.
    instance->killed_for = why;
    st.cfg.launcher->kill(pid);
    return;
  }
  kill_worker(self, id, why, errc::out_of_memory);
}

} // namespace

void check_memory(raylet_actor* self) {
  auto& st = self->state;
  if (st.cfg.memory_threshold <= 0)
    return;
  self->delayed_send(self, st.cfg.memory_interval, memory_atom::value);
  st.memory = sample_memory_use();
  if (!internal::memory_over(st.memory.used, st.memory.limit,
                             st.cfg.memory_threshold))
    return;
  // One at a time: the last victim's memory is not free before it is gone.
  if (st.memory_victim_pid != 0 &&
      std::chrono::steady_clock::now() - st.memory_killed_at < victim_grace)
    return;
  kill_one(self);
}

} // namespace prism::actors::raylet_internal
