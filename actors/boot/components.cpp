#include "boot/components.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <thread>
#include <unistd.h>

#include <caf/all.hpp>
#include <caf/io/middleman.hpp>

#include "common/log.hpp"
#include "common/program_file.hpp"
#include "gcs/program_store.hpp"
#include "gcs/task_event_store.hpp"
#include "join/cluster_token.hpp"
#include "net/network.hpp"
#include "net/peers.hpp"
#include "net/tls.hpp"

#include "gcs/gcs.hpp"
#include "gcs/gcs_storage.hpp"
#include "owner/actor_routes.hpp"
#include "owner/owner.hpp"
#include "prism/error.hpp"
#include "prism/internal/memory_store.hpp"
#include "protocol/gcs_keeper.hpp"
#include "raylet/host_memory.hpp"
#include "raylet/raylet.hpp"
#include "worker/worker_process.hpp"

namespace prism::actors {

namespace {

/// Opens the control store's tables, or throws a Prism error that names the
/// path and why it cannot be used.
std::shared_ptr<gcs_storage> open_gcs_storage(const std::string& path,
                                              bool sync) {
  try {
    return gcs_storage::open(path, sync);
  } catch (const persistence::store_error& e) {
    auto what = "the control store's tables at '" + path +
                "' cannot be used: " + e.what();
    if (e.kind() == persistence::store_error::kind_t::corrupt)
      throw storage_corrupt_error(what, path, e.file(), e.offset());
    throw invalid_argument_error(what);
  }
}

} // namespace

resource_map node_resources(const config& cfg, resource_map result) {
  if (cfg.num_cpus < 0 || !std::isfinite(cfg.num_cpus))
    throw invalid_argument_error("num_cpus must be 0 (all hardware threads) "
                                 "or positive");
  for (const auto& [name, quantity] : result) {
    if (name.empty())
      throw invalid_argument_error("node resource names must not be empty");
    if (!std::isfinite(quantity) || quantity < 0)
      throw invalid_argument_error("node resource '" + name +
                                   "' must not be negative");
  }
  if (result.count("CPU") == 0) {
    double cpus = cfg.num_cpus;
    if (cpus == 0)
      cpus = std::max(1u, std::thread::hardware_concurrency());
    result["CPU"] = cpus;
  }
  return result;
}

control_store start_control_store(caf::actor_system& sys, const config& cfg,
                                  gcs_start first, bool keep_programs,
                                  caf::actor jobs) {
  control_store cs;
  cs.storage_path = cfg.storage_path;
  if (cs.storage_path.empty()) {
    auto pattern =
        (std::filesystem::temp_directory_path() / "prism-gcs-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr)
      throw error(errc::internal,
                  "cannot create a temporary directory for the control "
                  "store's tables: " +
                      std::string{std::strerror(errno)});
    cs.storage_path = pattern;
    cs.temporary_storage = true;
  }
  auto open = [path = cs.storage_path, sync = cfg.storage_sync] {
    return open_gcs_storage(path, sync);
  };
  // Opened here first, so that a store that cannot be used fails at once.
  std::shared_ptr<gcs_storage> storage;
  try {
    storage = open();
  } catch (...) {
    if (cs.temporary_storage) {
      std::error_code ec;
      std::filesystem::remove_all(cs.storage_path, ec);
    }
    throw;
  }
  if (keep_programs)
    cs.programs = spawn_program_store(sys, cs.storage_path + "/programs");
  cs.task_events = spawn_task_event_store(sys, cfg.gcs_max_tasks);
  cs.endpoint = spawn_gcs_endpoint(
      sys, std::chrono::milliseconds{cfg.gcs_reconnect_timeout_ms});
  gcs_keeper_config kc;
  kc.endpoint = cs.endpoint;
  kc.open_storage = open;
  kc.recovery_grace = std::chrono::milliseconds{cfg.gcs_recovery_grace_ms};
  kc.max_dead_actors = cfg.gcs_max_dead_actors;
  kc.first_start = first;
  kc.programs = cs.programs;
  kc.task_events = cs.task_events;
  // Not kept here: the job runner is its owner's to stop, and a handle
  // kept past that would hold its thread up.
  kc.jobs = std::move(jobs);
  cs.keeper = spawn_gcs_keeper(sys, std::move(kc), std::move(storage));
  return cs;
}

bool ask_keeper_bool(caf::actor_system& sys, const caf::actor& keeper,
                     caf::atom_value what) {
  if (!keeper)
    return false;
  bool result = false;
  caf::scoped_actor self{sys};
  self->request(keeper, control_timeout, what)
      .receive([&](bool x) { result = x; }, [](caf::error&) {});
  return result;
}

void close_control_store(caf::actor_system& sys, control_store& cs) {
  if (cs.keeper) {
    ask_keeper_bool(sys, cs.keeper, protocol::gcs_close_atom::value);
    caf::anon_send_exit(cs.keeper, caf::exit_reason::user_shutdown);
    cs.keeper = nullptr;
  }
  if (cs.endpoint)
    caf::anon_send_exit(cs.endpoint, caf::exit_reason::user_shutdown);
  cs.endpoint = nullptr;
  if (cs.programs)
    caf::anon_send_exit(cs.programs, caf::exit_reason::user_shutdown);
  cs.programs = nullptr;
  if (cs.task_events)
    caf::anon_send_exit(cs.task_events, caf::exit_reason::user_shutdown);
  cs.task_events = nullptr;
  if (cs.temporary_storage) {
    std::error_code ec;
    std::filesystem::remove_all(cs.storage_path, ec);
    cs.temporary_storage = false;
  }
}

namespace {

std::uint64_t object_store_bytes(const config& cfg) {
  if (cfg.object_store_memory > 0)
    return cfg.object_store_memory;
  auto memory = memory_limit_here();
  return memory > 0 ? memory / 10 * 3 : std::uint64_t{1} << 30;
}

} // namespace

std::pair<node_id, caf::actor>
start_raylet(caf::actor_system& sys, const config& cfg,
             const resource_map& resources, caf::actor gcs,
             std::shared_ptr<owner_directory> directory,
             std::shared_ptr<executor> actor_pool, worker_kind workers,
             const std::string& program_cache,
             std::map<std::string, std::string> labels) {
  raylet_config rc;
  rc.node = node_id{unique_id::random()};
  rc.resources = internal::resource_set{node_resources(cfg, resources)};
  rc.gcs = std::move(gcs);
  rc.directory = std::move(directory);
  rc.prestart_workers =
      static_cast<std::uint32_t>(std::ceil(rc.resources.quantity("CPU")));
  rc.max_workers = cfg.max_workers_per_node;
  rc.max_inline_bytes = cfg.max_inline_object_bytes;
  rc.actor_pool = std::move(actor_pool);
  rc.labels = std::move(labels);
  rc.store_capacity = object_store_bytes(cfg);
  rc.spill_dir =
      cfg.spill_dir.empty() ? session_directory() + "/spill" : cfg.spill_dir;
  rc.store_full_timeout =
      std::chrono::milliseconds{cfg.object_store_full_timeout_ms};
  rc.memory_threshold = cfg.memory_usage_threshold;
  rc.memory_interval = std::chrono::milliseconds{
      std::max<std::uint32_t>(10, cfg.memory_monitor_interval_ms)};
  if (workers == worker_kind::job_programs) {
    use_worker_processes(sys, cfg, rc, worker_program{});
    rc.program_cache =
        program_cache.empty() ? default_program_cache() : program_cache;
  } else if (cfg.worker_processes)
    use_worker_processes(sys, cfg, rc, this_program());
  auto node = rc.node;
  return {node, spawn_raylet(sys, std::move(rc))};
}

std::string default_program_cache() {
  return (std::filesystem::temp_directory_path() /
          ("prism-" + std::to_string(::geteuid())) / "programs")
      .string();
}

protocol::job_program this_job_program() {
  static const protocol::job_program program = [] {
    auto self = this_program();
    // The running image, even if the file at its path was replaced since.
    auto digest = digest_file("/proc/self/exe");
    return protocol::job_program{self.path, self.argv, digest.sha256,
                                 digest.size};
  }();
  return program;
}

namespace {

/// Where a node's worker processes' output files go: the session directory
/// (made, private, if there is none yet). Empty if it is another user's.
std::string worker_output_directory() {
  auto dir = session_directory();
  std::error_code ec;
  if (std::filesystem::create_directories(dir, ec))
    std::filesystem::permissions(dir, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::replace, ec);
  if (!is_private_directory(dir)) {
    component_logger("raylet")->warn(
        "worker processes' output goes to no files: the session directory {} "
        "is missing or not this user's own (set PRISM_SESSION_DIR)",
        dir);
    return {};
  }
  return dir;
}

bool fork_workers(const config& cfg) {
  const char* env = std::getenv("PRISM_FORK_WORKERS");
  return cfg.fork_worker_processes &&
         (env == nullptr || std::string{env} != "0");
}

bool instance_processes(const config& cfg) {
  const char* env = std::getenv("PRISM_INSTANCE_PROCESSES");
  return cfg.actor_instance_processes &&
         (env == nullptr || std::string{env} != "0");
}

std::shared_ptr<internal::object_arena> make_object_arena(const config& cfg,
                                                          const node_id& node) {
  try {
    return internal::object_arena::create(object_store_bytes(cfg), node);
  } catch (const std::system_error& e) {
    component_logger("raylet")->warn(
        "the object store keeps its objects in the node's own memory: its "
        "shared memory cannot be made ({}); worker processes read them in "
        "chunks",
        e.what());
    return nullptr;
  }
}

} // namespace

void use_worker_processes(caf::actor_system& sys, const config& cfg,
                          raylet_config& rc, worker_program program) {
  rc.door = spawn_worker_door(sys);
  auto port = publish_actor(sys, rc.door, 0, "127.0.0.1");
  if (!port) {
    caf::anon_send_exit(rc.door, caf::exit_reason::user_shutdown);
    throw error(errc::internal,
                "cannot open a port for the node's worker processes: " +
                    sys.render(port.error()));
  }
  rc.door_address = address_of(host_port{"127.0.0.1", *port});
  rc.object_arena = make_object_arena(cfg, rc.node);
  // A fork server keeps a spare for each worker process the node may start
  // at once (its CPUs).
  worker_output::settings output;
  output.dir = worker_output_directory();
  output.index = worker_output::index_name(rc.node);
  output.max_file_bytes = std::max<std::uint64_t>(1, cfg.worker_log_max_bytes);
  output.backups = cfg.worker_log_backups;
  rc.output = std::make_shared<worker_output>(output);
  rc.launcher = std::make_shared<process_launcher>(
      fork_workers(cfg), std::chrono::milliseconds{cfg.fork_answer_timeout_ms},
      worker_common_environment(rc.door_address, tls_of(sys.config())),
      std::max<std::size_t>(1, rc.prestart_workers), rc.output);
  rc.program = std::move(program);
  rc.instance_processes = instance_processes(cfg);
  rc.worker_start_timeout =
      std::chrono::milliseconds{cfg.worker_start_timeout_ms};
  rc.idle_worker_timeout =
      std::chrono::milliseconds{cfg.idle_worker_timeout_ms};
}

void start_adopter(caf::actor_system& sys, const node_id& node,
                   caf::actor raylet, caf::actor gcs,
                   const std::shared_ptr<owner_directory>& directory) {
  auto id = worker_id{unique_id::random()};
  auto store = std::make_shared<internal::memory_store>();
  auto routes = std::make_shared<actor_routes>(store);
  auto adopter = spawn_owner(sys, owner_config{id, node, std::move(raylet),
                                               store, directory, routes, gcs});
  routes->connect(adopter, gcs);
  directory->add(id, adopter);
  directory->set_adopter(adopter);
}

std::size_t scheduler_threads(const config& cfg) {
  return cfg.scheduler_threads != 0
             ? cfg.scheduler_threads
             : std::max(2u, std::thread::hardware_concurrency());
}

head_connection connect_head(caf::actor_system& sys, const host_port& where,
                             const head_entry& entry,
                             std::chrono::milliseconds wait,
                             std::chrono::milliseconds give_up_after,
                             std::function<void(const std::string&)> lost) {
  head_connection result;
  auto remote = connect_to_head(sys, where, entry, std::chrono::seconds{5});
  result.head_process = remote.node();
  result.endpoint = spawn_gcs_endpoint(sys, wait);
  head_link_config lc;
  lc.head = where;
  lc.entry = entry;
  lc.endpoint = result.endpoint;
  lc.remote = std::move(remote);
  lc.give_up_after = give_up_after;
  lc.lost = std::move(lost);
  result.link = spawn_head_link(sys, std::move(lc));
  return result;
}

void stop_process(caf::actor_system& sys, process_parts parts) {
  if (parts.owners != nullptr)
    parts.owners->for_each([](const caf::actor& owner) {
      caf::anon_send_exit(owner, caf::exit_reason::user_shutdown);
    });
  if (parts.control != nullptr)
    close_control_store(sys, *parts.control);
  for (auto& n : parts.nodes)
    if (n)
      caf::anon_send_exit(n, caf::exit_reason::user_shutdown);
  for (auto& l : parts.links)
    if (l)
      caf::anon_send_exit(l, caf::exit_reason::user_shutdown);
  if (parts.owners != nullptr)
    parts.owners->clear();
  stop_peers(sys);
  // The actor threads go before the actor system: a thread that spawned an
  // actor holds CAF's logger, which the system waits for in its destructor.
  sys.registry().await_running_count_equal(0);
  release_broker(sys);
}

} // namespace prism::actors
