#include "gcs/gcs.hpp"

#include <caf/all.hpp>

#include "common/default_handlers.hpp"
#include "common/log.hpp"
#include "gcs/control_figures.hpp"
#include "gcs/gcs_state.hpp"
#include "gcs/node_lists.hpp"
#include "gcs/state_lists.hpp"
#include "gcs/summary.hpp"
#include "protocol/gcs_raylet_actors.hpp"
#include "protocol/gcs_restart.hpp"
#include "protocol/kv.hpp"
#include "protocol/lineage.hpp"
#include "protocol/metrics.hpp"
#include "protocol/owner_gcs.hpp"
#include "protocol/programs.hpp"
#include "protocol/raylet_gcs.hpp"
#include "protocol/status.hpp"
#include "protocol/submitted_jobs.hpp"
#include "protocol/testing.hpp"
#include "protocol/timeline.hpp"

namespace prism::actors {

namespace {

using namespace gcs_detail;

void start(gcs_actor* self, const gcs_config& cfg) {
  auto& st = self->state;
  st.log = component_logger("gcs");
  st.actors.max_dead = cfg.max_dead_actors;
  install_default_handlers(self, st.log);
  open_durability(self, cfg.storage);
  if (st.durability.storage)
    recover(self, cfg);
}

/// A monitored actor went down: an actor's instance, a node's raylet or an
/// owner of actors.
void on_down(gcs_actor* self, const caf::down_msg& msg) {
  if (host_down(self, msg) || raylet_down(self, msg) ||
      output_sink_gone(self, msg.source))
    return;
  // A driver's owner may own actors too.
  driver_gone(self, msg.source, msg.reason);
  owner_gone(self, msg.source);
}

/// Hands a message to the actor that answers it for the control store
/// (the keeper of programs, the job runner); refuses it with `missing` if
/// there is none.
template <class Message>
caf::result<caf::message> hand_to(gcs_actor* self, const caf::actor& keeper,
                                  Message msg, const char* missing) {
  if (!keeper)
    return caf::make_error(caf::sec::invalid_argument, missing);
  self->delegate(keeper, std::move(msg));
  return caf::delegated<caf::message>{};
}

template <class Message>
caf::result<caf::message> to_programs(gcs_actor* self,
                                      const caf::actor& programs, Message msg) {
  return hand_to(self, programs, std::move(msg),
                 "this control store keeps no programs");
}

template <class Message>
caf::result<caf::message> to_jobs(gcs_actor* self, const caf::actor& jobs,
                                  Message msg) {
  return hand_to(self, jobs, std::move(msg),
                 "jobs are run only by a cluster's head (`prism start "
                 "--head`); this control store runs none");
}

/// Answers a question about the cluster's state: about tasks, by handing it
/// to the task event store; about workers and objects, by asking the nodes
/// (`from_nodes`); else from the tables, with `answer`.
template <class Message, class Answer, class FromNodes>
caf::result<caf::message> answer_state(gcs_actor* self,
                                       const caf::actor& events, Message msg,
                                       Answer answer, FromNodes from_nodes) {
  if (held_by_nodes(msg.kind)) {
    // Answered once every node did.
    from_nodes(self, std::move(msg), self->make_response_promise());
    return caf::delegated<caf::message>{};
  }
  if (msg.kind != state::kind::tasks)
    return caf::make_message(answer(self->state, msg));
  if (!events)
    return caf::make_error(caf::sec::invalid_argument,
                           "this control store keeps no task events");
  self->delegate(events, std::move(msg));
  return caf::delegated<caf::message>{};
}

caf::behavior gcs_behavior(gcs_actor* self, gcs_config cfg) {
  start(self, cfg);
  set_checked_down_handler(self,
                           [self](caf::down_msg& msg) { on_down(self, msg); });
  // CAF tries the cases in order, and each case of one of Prism's message
  // types that a message passes costs a comparison of type names: those of
  // every actor's creation come first.
  return {
      // -- storage ----------------------------------------------------------
      [self](committed_atom, std::uint64_t up_to, const std::string& failure) {
        on_committed(self, up_to, failure);
      },
      [self](grace_atom) { end_grace(self); },
      [self](forget_atom) { forget_dead(self); },
      // -- actors -----------------------------------------------------------
      [self](protocol::create_actor& msg) { return create_actor(self, msg); },
      [self](protocol::actor_started& msg) {
        accept_started_instance(self, msg);
      },
      [self](protocol::actors_started& batch) {
        for (auto& msg : batch)
          accept_started_instance(self, msg);
      },
      [self](const protocol::actor_ended& msg) { end_actor(self, msg); },
      [self](const protocol::actor_instance_lost& msg) {
        instance_failed(self, msg);
      },
      [self](protocol::subscribe_actor& msg) { subscribe_actor(self, msg); },
      [self](protocol::resubscribe_actors& msg) {
        resubscribe_actors(self, msg);
      },
      [self](const protocol::lookup_actor& msg) {
        return lookup_actor(self, msg);
      },
      [self](const protocol::kill_actor& msg) { return kill_actor(self, msg); },
      [self](const protocol::locate_actor& msg) {
        return locate_actor(self->state, msg);
      },
      // -- nodes and jobs ---------------------------------------------------
      [self](protocol::add_node& msg) { register_node(self, msg); },
      [self](const protocol::start_job& msg) { return start_job(self, msg); },
      [self](const protocol::finish_job& msg) { return finish_job(self, msg); },
      [self](const protocol::watch_driver& msg) { watch_driver(self, msg); },
      [self](protocol::subscribe_output& msg) {
        subscribe_output(self, msg);
        return true;
      },
      [self](protocol::output_lines& msg) { return forward_output(self, msg); },
      [self](const protocol::flush_output& msg) {
        return flush_output(self, msg);
      },
      [self](const protocol::get_job_program& msg) {
        return job_program_of(self, msg);
      },
      // -- programs ---------------------------------------------------------
      [self, programs = cfg.programs](protocol::offer_program& msg) {
        return to_programs(self, programs, std::move(msg));
      },
      [self, programs = cfg.programs](protocol::program_part& msg) {
        return to_programs(self, programs, std::move(msg));
      },
      [self, programs = cfg.programs](protocol::read_program& msg) {
        return to_programs(self, programs, std::move(msg));
      },
      // -- jobs run by the cluster ------------------------------------------
      [self, jobs = cfg.jobs](protocol::submit_job& msg) {
        return to_jobs(self, jobs, std::move(msg));
      },
      [self, jobs = cfg.jobs](protocol::get_submitted_jobs& msg) {
        return to_jobs(self, jobs, std::move(msg));
      },
      [self, jobs = cfg.jobs](protocol::stop_submitted_job& msg) {
        return to_jobs(self, jobs, std::move(msg));
      },
      [self, jobs = cfg.jobs](protocol::read_job_output& msg) {
        return to_jobs(self, jobs, std::move(msg));
      },
      [self](const protocol::list_nodes&) { return list_nodes(self->state); },
      [self](const protocol::query_summary&) { return summarize(self->state); },
      [self](const protocol::node_report& msg) { node_reported(self, msg); },
      [self](const protocol::query_control_metrics&) {
        return control_figures(self->state);
      },
      [self, events = cfg.task_events](protocol::query_task_metrics& msg) {
        return hand_to(self, events, msg,
                       "this control store keeps no task events");
      },
      [self, events = cfg.task_events](protocol::timeline_query& msg) {
        return hand_to(self, events, std::move(msg),
                       "this control store keeps no task events");
      },
      [self, events = cfg.task_events](protocol::list_state& msg) {
        return answer_state(self, events, std::move(msg), list_state,
                            list_from_nodes);
      },
      [self, events = cfg.task_events](protocol::get_state& msg) {
        return answer_state(self, events, std::move(msg), get_state,
                            get_from_nodes);
      },
      [self, events = cfg.task_events](protocol::summarize_state& msg) {
        return answer_state(self, events, std::move(msg), summarize_state,
                            summarize_from_nodes);
      },
      [self, events = cfg.task_events](protocol::task_events& msg) {
        if (events)
          self->send(events, std::move(msg));
      },
      // The events its sender sent before are with the task event store.
      [](protocol::flush_events_atom) { return true; },
      // -- key-value table ----------------------------------------------------
      [self](protocol::kv_put& msg) { return put_value(self, msg); },
      [self](const protocol::kv_get& msg) { return get_value(self, msg); },
      [self](const protocol::kv_del& msg) { return delete_value(self, msg); },
      [self](const protocol::kv_keys& msg) { return list_keys(self, msg); },
      // -- durable lineage ----------------------------------------------------
      [self](protocol::lineage_put& msg) { return put_lineage(self, msg); },
      [self](const protocol::lineage_del& msg) {
        return delete_lineage(self, msg);
      },
      [self](const protocol::lineage_get& msg) {
        return get_lineage(self, msg);
      },
      [self](protocol::count_lineage) { return count_lineage(self); },
  };
}

} // namespace

caf::actor spawn_gcs(caf::actor_system& sys, gcs_config cfg) {
  return sys.spawn(gcs_behavior, std::move(cfg));
}

} // namespace prism::actors
