// The fault injection and probes of <prism/testing.hpp>, over the embedded
// cluster. In the prism_testing library (prism::testing), which tests and
// users link on purpose: the production library holds no test code.

#include "prism/testing.hpp"

#include <mutex>

#include "boot/embedded_cluster.hpp"
#include "owner/owner.hpp"
#include "prism/internal/memory_store.hpp"
#include "prism/internal/task_state.hpp"

namespace prism::testing {

bool kill_worker(const worker_id& id) {
  std::lock_guard<std::mutex> guard{actors::cluster_mutex()};
  return actors::running_cluster().kill_worker(id);
}

std::uint64_t illegal_task_transitions() {
  return internal::illegal_task_transitions();
}

std::uint64_t objects_rebuilt() {
  return actors::objects_rebuilt();
}

std::uint64_t bulk_reads() {
  return actors::bulk_reads();
}

std::int64_t objects_in_scope() {
  return internal::memory_store::live_entries();
}

std::vector<resource_map> pending_infeasible() {
  std::lock_guard<std::mutex> guard{actors::cluster_mutex()};
  return actors::running_cluster().pending_infeasible();
}

std::string task_state(const object_id& result) {
  std::lock_guard<std::mutex> guard{actors::cluster_mutex()};
  return actors::running_cluster().task_state(result.task);
}

std::size_t object_copies(const object_id& object) {
  std::lock_guard<std::mutex> guard{actors::cluster_mutex()};
  return actors::running_cluster().object_copies(object);
}

std::size_t num_workers() {
  std::lock_guard<std::mutex> guard{actors::cluster_mutex()};
  return actors::running_cluster().num_workers();
}

std::size_t durable_lineage_records() {
  std::lock_guard<std::mutex> guard{actors::cluster_mutex()};
  return actors::running_cluster().lineage_records();
}

std::string storage_path() {
  std::lock_guard<std::mutex> guard{actors::cluster_mutex()};
  return actors::running_cluster().storage_path();
}

local_cluster::local_cluster(std::vector<resource_map> nodes, config base) {
  if (nodes.empty())
    throw invalid_argument_error("a local_cluster needs at least one node");
  actors::start_cluster(base, std::move(nodes));
}

local_cluster::~local_cluster() {
  actors::stop_cluster();
}

node_id local_cluster::node(std::size_t i) const {
  std::lock_guard<std::mutex> guard{actors::cluster_mutex()};
  return actors::running_cluster().node(i);
}

std::vector<node_id> local_cluster::alive_nodes() const {
  std::lock_guard<std::mutex> guard{actors::cluster_mutex()};
  return actors::running_cluster().alive_nodes();
}

node_id local_cluster::add_node(const resource_map& resources) {
  std::lock_guard<std::mutex> guard{actors::cluster_mutex()};
  auto id = actors::running_cluster().add_node(resources);
  actors::running_cluster().await_views();
  return id;
}

bool local_cluster::kill_node(const node_id& id) {
  std::lock_guard<std::mutex> guard{actors::cluster_mutex()};
  return actors::running_cluster().kill_node(id);
}

bool local_cluster::kill_worker(const worker_id& id) {
  std::lock_guard<std::mutex> guard{actors::cluster_mutex()};
  return actors::running_cluster().kill_worker(id);
}

void local_cluster::stop_gcs() {
  std::lock_guard<std::mutex> guard{actors::cluster_mutex()};
  actors::running_cluster().stop_gcs();
}

void local_cluster::start_gcs() {
  std::lock_guard<std::mutex> guard{actors::cluster_mutex()};
  actors::running_cluster().start_gcs();
}

void local_cluster::restart_gcs() {
  std::lock_guard<std::mutex> guard{actors::cluster_mutex()};
  auto& c = actors::running_cluster();
  c.stop_gcs();
  c.start_gcs();
}

bool local_cluster::kill_actor(const actor_id& id) {
  std::lock_guard<std::mutex> guard{actors::cluster_mutex()};
  return actors::running_cluster().kill_actor(id);
}

std::optional<resource_map>
local_cluster::available_resources(const node_id& id) const {
  std::lock_guard<std::mutex> guard{actors::cluster_mutex()};
  return actors::running_cluster().available_resources(id);
}

std::optional<node_id> local_cluster::actor_node(const actor_id& id) const {
  std::lock_guard<std::mutex> guard{actors::cluster_mutex()};
  return actors::running_cluster().actor_node(id);
}

std::optional<local_cluster::store_usage>
local_cluster::object_store(const node_id& id) const {
  std::lock_guard<std::mutex> guard{actors::cluster_mutex()};
  auto r = actors::running_cluster().object_store(id);
  if (!r)
    return std::nullopt;
  auto n = [](std::uint64_t x) { return static_cast<std::size_t>(x); };
  return store_usage{
      n(r->objects),      n(r->bytes),           n(r->shared_bytes),
      n(r->mapped_reads), n(r->spilled_objects), n(r->spilled_bytes),
      n(r->spill_files),  n(r->spills),          n(r->restores),
      n(r->full_waits),   n(r->full_errors)};
}

std::optional<std::size_t> local_cluster::drop_objects(const node_id& id) {
  std::lock_guard<std::mutex> guard{actors::cluster_mutex()};
  return actors::running_cluster().drop_objects(id);
}

} // namespace prism::testing
