#include "gcs/gcs.hpp"

#include <unordered_map>

#include <caf/all.hpp>

#include "common/handlers.hpp"
#include "common/log.hpp"
#include "protocol/raylet_gcs.hpp"

namespace prism::actors {

namespace {

struct job_entry {
  worker_id driver;
  std::string ns;
  bool running = true;
};

struct gcs_state {
  static inline const char* name = "gcs";

  std::shared_ptr<spdlog::logger> log;
  std::unordered_map<node_id, protocol::node_info> nodes;
  std::unordered_map<job_id, job_entry> jobs;
  std::uint32_t next_job = 1;
};

using gcs_actor = caf::stateful_actor<gcs_state>;

caf::behavior gcs_behavior(gcs_actor* self) {
  auto& st = self->state;
  st.log = component_logger("gcs");
  install_default_handlers(self, st.log);
  self->set_down_handler([self](caf::down_msg& msg) {
    for (auto& [id, node] : self->state.nodes) {
      if (node.alive && node.raylet.address() == msg.source) {
        node.alive = false;
        self->state.log->warn("node {} is dead: {}", id.hex(),
                              self->system().render(msg.reason));
      }
    }
  });
  return {
      [self](protocol::add_node& msg) {
        auto& st = self->state;
        self->monitor(msg.raylet);
        st.log->info("node {} joined with {{{}}}", msg.node.hex(),
                     msg.resources.to_string());
        st.nodes[msg.node] =
            protocol::node_info{msg.node, msg.resources, msg.raylet, true};
        self->send(msg.raylet, protocol::node_added{msg.node});
      },
      [self](protocol::start_job& msg) {
        auto& st = self->state;
        job_id id{st.next_job++};
        st.jobs[id] = job_entry{msg.driver, msg.ns, true};
        st.log->info("job {} started by driver {}", id.value, msg.driver.hex());
        return protocol::job_started{id};
      },
      [self](const protocol::finish_job& msg) {
        if (auto i = self->state.jobs.find(msg.job);
            i != self->state.jobs.end())
          i->second.running = false;
      },
      [self](const protocol::list_nodes&) {
        std::vector<protocol::node_info> result;
        for (auto& [id, node] : self->state.nodes)
          result.push_back(node);
        return result;
      },
  };
}

} // namespace

caf::actor spawn_gcs(caf::actor_system& sys) {
  return sys.spawn(gcs_behavior);
}

} // namespace prism::actors
