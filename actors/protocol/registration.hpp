#pragma once

// Every type that crosses between Prism's components, registered in one place
// so that the same actors can run in separate processes. `message_types` is
// the one list: registration walks it, and so does the round-trip test, which
// needs a sample of each type.

#include <algorithm>
#include <cstddef>
#include <vector>

#include <caf/actor_system_config.hpp>
#include <caf/detail/type_list.hpp>

#include "protocol/cluster_door.hpp"
#include "protocol/gcs_raylet_actors.hpp"
#include "protocol/gcs_restart.hpp"
#include "protocol/kv.hpp"
#include "protocol/lineage.hpp"
#include "protocol/metrics.hpp"
#include "protocol/object_store.hpp"
#include "protocol/output.hpp"
#include "protocol/owner_actor.hpp"
#include "protocol/owner_gcs.hpp"
#include "protocol/owner_owner.hpp"
#include "protocol/owner_raylet.hpp"
#include "protocol/owner_worker.hpp"
#include "protocol/programs.hpp"
#include "protocol/raylet_gcs.hpp"
#include "protocol/raylet_worker.hpp"
#include "protocol/state.hpp"
#include "protocol/status.hpp"
#include "protocol/submitted_jobs.hpp"
#include "protocol/supervisor.hpp"
#include "protocol/testing.hpp"
#include "protocol/timeline.hpp"

namespace prism::protocol {

/// A name to register a message type under, as a template argument.
template <std::size_t N>
struct message_name {
  // Implicit, so that a string literal names a type in `message_type`.
  constexpr message_name(const char (&name)[N]) {
    std::copy_n(name, N, chars);
  }

  char chars[N];
};

/// Message type `T` and the name it is registered under: processes agree on
/// a type by its name, so a name never changes.
template <class T, message_name Name>
struct message_type {
  using type = T;
  static constexpr const char* name = Name.chars;
};

// One type a line, so that each is easy to find and to add.
// clang-format off
/// Every message type, the supervisor's included, with its name.
using message_types = caf::detail::type_list<
    message_type<lease_request, "prism.lease_request">,
    message_type<lease_grant, "prism.lease_grant">,
    message_type<lease_return, "prism.lease_return">,
    message_type<worker_lost, "prism.worker_lost">,
    message_type<push_task, "prism.push_task">,
    message_type<task_done, "prism.task_done">,
    message_type<submit_task, "prism.submit_task">,
    message_type<fetch_object, "prism.fetch_object">,
    message_type<register_borrowers, "prism.register_borrowers">,
    message_type<register_borrow, "prism.register_borrow">,
    message_type<object_request, "prism.object_request">,
    message_type<add_borrower, "prism.add_borrower">,
    message_type<remove_borrower, "prism.remove_borrower">,
    message_type<object_reply, "prism.object_reply">,
    message_type<copy_kept, "prism.copy_kept">,
    message_type<worker_blocked, "prism.worker_blocked">,
    message_type<worker_unblocked, "prism.worker_unblocked">,
    message_type<kill_worker, "prism.kill_worker">,
    message_type<actor_instance_lost, "prism.actor_instance_lost">,
    message_type<get_job_program, "prism.get_job_program">,
    message_type<job_program, "prism.job_program">,
    message_type<offer_program, "prism.offer_program">,
    message_type<program_part, "prism.program_part">,
    message_type<read_program, "prism.read_program">,
    message_type<program_bytes, "prism.program_bytes">,
    message_type<program_checked, "prism.program_checked">,
    message_type<worker_hello, "prism.worker_hello">,
    message_type<worker_welcome, "prism.worker_welcome">,
    message_type<worker_ready, "prism.worker_ready">,
    message_type<worker_exited, "prism.worker_exited">,
    message_type<worker_launched, "prism.worker_launched">,
    message_type<check_worker_process, "prism.check_worker_process">,
    message_type<start_instance_process, "prism.start_instance_process">,
    message_type<instance_process_launched, "prism.instance_process_launched">,
    message_type<instance_process_exited, "prism.instance_process_exited">,
    message_type<door_target, "prism.door_target">,
    message_type<count_workers, "prism.count_workers">,
    message_type<query_resources, "prism.query_resources">,
    message_type<node_resources, "prism.node_resources">,
    message_type<query_task, "prism.query_task">,
    message_type<query_copies, "prism.query_copies">,
    message_type<lease_refused, "prism.lease_refused">,
    message_type<add_node, "prism.add_node">,
    message_type<node_added, "prism.node_added">,
    message_type<node_refused, "prism.node_refused">,
    message_type<node_info, "prism.node_info">,
    message_type<std::vector<node_info>, "prism.node_info_list">,
    message_type<start_job, "prism.start_job">,
    message_type<job_started, "prism.job_started">,
    message_type<finish_job, "prism.finish_job">,
    message_type<watch_driver, "prism.watch_driver">,
    message_type<list_nodes, "prism.list_nodes">,
    message_type<resolve_actor_call, "prism.resolve_actor_call">,
    message_type<create_actor, "prism.create_actor">,
    message_type<subscribe_actor, "prism.subscribe_actor">,
    message_type<actor_update, "prism.actor_update">,
    message_type<actor_updates, "prism.actor_updates">,
    message_type<lookup_actor, "prism.lookup_actor">,
    message_type<actor_found, "prism.actor_found">,
    message_type<kill_actor, "prism.kill_actor">,
    message_type<locate_actor, "prism.locate_actor">,
    message_type<actor_location, "prism.actor_location">,
    message_type<host_actor, "prism.host_actor">,
    message_type<host_actors, "prism.host_actors">,
    message_type<drop_instance, "prism.drop_instance">,
    message_type<actor_started, "prism.actor_started">,
    message_type<actors_started, "prism.actors_started">,
    message_type<actor_ended, "prism.actor_ended">,
    message_type<actor_task, "prism.actor_task">,
    message_type<actor_task_done, "prism.actor_task_done">,
    message_type<actor_tasks_done, "prism.actor_tasks_done">,
    message_type<detail::error_info, "prism.error_info">,
    message_type<lease_spillback, "prism.lease_spillback">,
    message_type<cluster_view, "prism.cluster_view">,
    message_type<gcs_attach, "prism.gcs_attach">,
    message_type<enter_cluster, "prism.enter_cluster">,
    message_type<watch_gcs, "prism.watch_gcs">,
    message_type<gcs_restarted, "prism.gcs_restarted">,
    message_type<hosted_actor, "prism.hosted_actor">,
    message_type<std::vector<hosted_actor>, "prism.hosted_actor_list">,
    message_type<resubscribe_actors, "prism.resubscribe_actors">,
    message_type<kv_put, "prism.kv_put">,
    message_type<kv_get, "prism.kv_get">,
    message_type<kv_value, "prism.kv_value">,
    message_type<kv_del, "prism.kv_del">,
    message_type<kv_keys, "prism.kv_keys">,
    message_type<lineage_put, "prism.lineage_put">,
    message_type<lineage_del, "prism.lineage_del">,
    message_type<lineage_get, "prism.lineage_get">,
    message_type<lineage_value, "prism.lineage_value">,
    message_type<count_lineage, "prism.count_lineage">,
    message_type<seal_result, "prism.seal_result">,
    message_type<store_object, "prism.store_object">,
    message_type<pull_object, "prism.pull_object">,
    message_type<object_chunk, "prism.object_chunk">,
    message_type<map_object, "prism.map_object">,
    message_type<object_mapped, "prism.object_mapped">,
    message_type<unmap_object, "prism.unmap_object">,
    message_type<create_object, "prism.create_object">,
    message_type<seal_object, "prism.seal_object">,
    message_type<object_kept, "prism.object_kept">,
    message_type<free_object, "prism.free_object">,
    message_type<drop_objects, "prism.drop_objects">,
    message_type<count_objects, "prism.count_objects">,
    message_type<object_store_usage, "prism.object_store_usage">,
    message_type<read_object, "prism.read_object">,
    message_type<put_object, "prism.put_object">,
    message_type<object_freed, "prism.object_freed">,
    message_type<adopt_object, "prism.adopt_object">,
    message_type<which_children, "prism.which_children">,
    message_type<start_child, "prism.start_child">,
    message_type<terminate_child, "prism.terminate_child">,
    message_type<delete_child, "prism.delete_child">,
    message_type<await_started, "prism.await_started">,
    message_type<child_info, "prism.child_info">,
    message_type<std::vector<child_info>, "prism.child_info_list">,
    message_type<query_summary, "prism.query_summary">,
    message_type<cluster_summary, "prism.cluster_summary">,
    message_type<output_line, "prism.output_line">,
    message_type<output_lines, "prism.output_lines">,
    message_type<subscribe_output, "prism.subscribe_output">,
    message_type<flush_output, "prism.flush_output">,
    message_type<read_logs, "prism.read_logs">,
    message_type<log_piece, "prism.log_piece">,
    message_type<log_pieces, "prism.log_pieces">,
    message_type<list_state, "prism.list_state">,
    message_type<state_page, "prism.state_page">,
    message_type<get_state, "prism.get_state">,
    message_type<state_found, "prism.state_found">,
    message_type<summarize_state, "prism.summarize_state">,
    message_type<state_counts, "prism.state_counts">,
    message_type<task_events, "prism.task_events">,
    message_type<submit_job, "prism.submit_job">,
    message_type<get_submitted_jobs, "prism.get_submitted_jobs">,
    message_type<stop_submitted_job, "prism.stop_submitted_job">,
    message_type<submitted_jobs, "prism.submitted_jobs">,
    message_type<read_job_output, "prism.read_job_output">,
    message_type<job_output, "prism.job_output">,
    message_type<cancel_task, "prism.cancel_task">,
    message_type<cancel_run, "prism.cancel_run">,
    message_type<cancel_call, "prism.cancel_call">,
    message_type<cancel_kill, "prism.cancel_kill">,
    message_type<query_node_metrics, "prism.query_node_metrics">,
    message_type<node_metrics, "prism.node_metrics">,
    message_type<node_report, "prism.node_report">,
    message_type<query_control_metrics, "prism.query_control_metrics">,
    message_type<control_metrics, "prism.control_metrics">,
    message_type<query_task_metrics, "prism.query_task_metrics">,
    message_type<task_metrics, "prism.task_metrics">,
    message_type<user_metrics, "prism.user_metrics">,
    message_type<timeline_query, "prism.timeline_query">,
    message_type<timeline_page, "prism.timeline_page">>;
// clang-format on

/// Registers every type of `message_types`, and the supervisor's error
/// category, with `cfg`.
void add_message_types(caf::actor_system_config& cfg);

} // namespace prism::protocol
