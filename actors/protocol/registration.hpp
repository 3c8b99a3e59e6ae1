#pragma once

// Every type that crosses between Prism's components, registered in one place
// so that the same actors can run in separate processes.

#include <vector>

#include <caf/actor_system_config.hpp>
#include <caf/detail/type_list.hpp>

#include "protocol/gcs_raylet_actors.hpp"
#include "protocol/gcs_restart.hpp"
#include "protocol/kv.hpp"
#include "protocol/object_store.hpp"
#include "protocol/owner_actor.hpp"
#include "protocol/owner_gcs.hpp"
#include "protocol/owner_owner.hpp"
#include "protocol/owner_raylet.hpp"
#include "protocol/owner_worker.hpp"
#include "protocol/raylet_gcs.hpp"
#include "protocol/raylet_worker.hpp"

namespace prism::protocol {

using message_types = caf::detail::type_list<
    lease_request, lease_grant, lease_return, worker_lost, push_task, task_done,
    submit_task, fetch_object, object_request, object_reply, worker_blocked,
    worker_unblocked, kill_worker, count_workers, add_node, node_added,
    node_info, std::vector<node_info>, start_job, job_started, finish_job,
    list_nodes, resolve_actor_call, create_actor, subscribe_actor, actor_update,
    lookup_actor, actor_found, kill_actor, locate_actor, actor_location,
    host_actor, actor_started, actor_ended, actor_task, actor_task_done,
    actor_tasks_done, detail::error_info, lease_spillback, cluster_view,
    gcs_attach, watch_gcs, gcs_restarted, hosted_actor,
    std::vector<hosted_actor>, resubscribe_actors, kv_put, kv_get, kv_value,
    kv_del, kv_keys, query_resources, node_resources, query_task, lease_refused,
    seal_result, store_object, pull_object, free_object, drop_objects,
    count_objects, object_store_usage, read_object, put_object, object_freed,
    adopt_object, add_borrower, remove_borrower>;

/// Registers every message type with `cfg`.
void add_message_types(caf::actor_system_config& cfg);

} // namespace prism::protocol
