#include "protocol/registration.hpp"

namespace prism::protocol {

void add_message_types(caf::actor_system_config& cfg) {
  cfg.add_message_type<lease_request>("prism.lease_request");
  cfg.add_message_type<lease_grant>("prism.lease_grant");
  cfg.add_message_type<lease_return>("prism.lease_return");
  cfg.add_message_type<worker_lost>("prism.worker_lost");
  cfg.add_message_type<push_task>("prism.push_task");
  cfg.add_message_type<task_done>("prism.task_done");
  cfg.add_message_type<submit_task>("prism.submit_task");
  cfg.add_message_type<fetch_object>("prism.fetch_object");
  cfg.add_message_type<object_request>("prism.object_request");
  cfg.add_message_type<add_borrower>("prism.add_borrower");
  cfg.add_message_type<remove_borrower>("prism.remove_borrower");
  cfg.add_message_type<object_reply>("prism.object_reply");
  cfg.add_message_type<worker_blocked>("prism.worker_blocked");
  cfg.add_message_type<worker_unblocked>("prism.worker_unblocked");
  cfg.add_message_type<kill_worker>("prism.kill_worker");
  cfg.add_message_type<count_workers>("prism.count_workers");
  cfg.add_message_type<query_resources>("prism.query_resources");
  cfg.add_message_type<node_resources>("prism.node_resources");
  cfg.add_message_type<query_task>("prism.query_task");
  cfg.add_message_type<lease_refused>("prism.lease_refused");
  cfg.add_message_type<add_node>("prism.add_node");
  cfg.add_message_type<node_added>("prism.node_added");
  cfg.add_message_type<node_info>("prism.node_info");
  cfg.add_message_type<std::vector<node_info>>("prism.node_info_list");
  cfg.add_message_type<start_job>("prism.start_job");
  cfg.add_message_type<job_started>("prism.job_started");
  cfg.add_message_type<finish_job>("prism.finish_job");
  cfg.add_message_type<list_nodes>("prism.list_nodes");
  cfg.add_message_type<resolve_actor_call>("prism.resolve_actor_call");
  cfg.add_message_type<create_actor>("prism.create_actor");
  cfg.add_message_type<subscribe_actor>("prism.subscribe_actor");
  cfg.add_message_type<actor_update>("prism.actor_update");
  cfg.add_message_type<lookup_actor>("prism.lookup_actor");
  cfg.add_message_type<actor_found>("prism.actor_found");
  cfg.add_message_type<kill_actor>("prism.kill_actor");
  cfg.add_message_type<locate_actor>("prism.locate_actor");
  cfg.add_message_type<actor_location>("prism.actor_location");
  cfg.add_message_type<host_actor>("prism.host_actor");
  cfg.add_message_type<actor_started>("prism.actor_started");
  cfg.add_message_type<actor_ended>("prism.actor_ended");
  cfg.add_message_type<actor_task>("prism.actor_task");
  cfg.add_message_type<actor_task_done>("prism.actor_task_done");
  cfg.add_message_type<actor_tasks_done>("prism.actor_tasks_done");
  cfg.add_message_type<detail::error_info>("prism.error_info");
  cfg.add_message_type<lease_spillback>("prism.lease_spillback");
  cfg.add_message_type<cluster_view>("prism.cluster_view");
  cfg.add_message_type<gcs_attach>("prism.gcs_attach");
  cfg.add_message_type<watch_gcs>("prism.watch_gcs");
  cfg.add_message_type<gcs_restarted>("prism.gcs_restarted");
  cfg.add_message_type<hosted_actor>("prism.hosted_actor");
  cfg.add_message_type<std::vector<hosted_actor>>("prism.hosted_actor_list");
  cfg.add_message_type<resubscribe_actors>("prism.resubscribe_actors");
  cfg.add_message_type<kv_put>("prism.kv_put");
  cfg.add_message_type<kv_get>("prism.kv_get");
  cfg.add_message_type<kv_value>("prism.kv_value");
  cfg.add_message_type<kv_del>("prism.kv_del");
  cfg.add_message_type<kv_keys>("prism.kv_keys");
  cfg.add_message_type<seal_result>("prism.seal_result");
  cfg.add_message_type<store_object>("prism.store_object");
  cfg.add_message_type<pull_object>("prism.pull_object");
  cfg.add_message_type<free_object>("prism.free_object");
  cfg.add_message_type<drop_objects>("prism.drop_objects");
  cfg.add_message_type<count_objects>("prism.count_objects");
  cfg.add_message_type<object_store_usage>("prism.object_store_usage");
  cfg.add_message_type<read_object>("prism.read_object");
  cfg.add_message_type<put_object>("prism.put_object");
  cfg.add_message_type<object_freed>("prism.object_freed");
  cfg.add_message_type<adopt_object>("prism.adopt_object");
}

} // namespace prism::protocol
