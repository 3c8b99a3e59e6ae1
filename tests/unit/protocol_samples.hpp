// A filled-in sample of every message type between Prism's components, and
// the helpers that serialize them with CAF's binary serializer: shared by
// the round-trip and the damaged-bytes tests of the protocol.

#pragma once

#include <boost/test/unit_test.hpp>

#include <cstddef>
#include <exception>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include <caf/all.hpp>

#include "protocol/registration.hpp"

namespace protocol_samples {

using namespace prism;

using namespace prism;

struct actor_system_fixture {
  actor_system_fixture() : sys(init_cfg(cfg)) {}

  static caf::actor_system_config& init_cfg(caf::actor_system_config& c) {
    protocol::add_message_types(c);
    return c;
  }

  caf::actor_system_config cfg;
  caf::actor_system sys;
};

inline internal::task_spec sample_spec() {
  internal::task_spec spec;
  spec.id = task_id{worker_id{unique_id::random()}, 42};
  spec.job = job_id{7};
  spec.function = "plus";
  spec.name = "adding";
  detail::task_arg by_value;
  by_value.inline_value = detail::encode(std::string{"payload"});
  detail::task_arg by_ref;
  by_ref.by_ref = true;
  by_ref.ref = object_id{spec.id, 1};
  by_ref.owner = worker_id{unique_id::random()};
  spec.args = {by_value, by_ref};
  spec.resources = internal::resource_set{{{"CPU", 1}, {"GPU", 0.5}}};
  spec.max_retries = -1;
  spec.retry_exceptions = true;
  spec.retry_exception_types = {"std::system_error", "svc::transient"};
  spec.affinity = node_id{unique_id::random()};
  spec.affinity_soft = true;
  spec.attempt = 2;
  spec.owner = by_ref.owner;
  return spec;
}

inline detail::error_info sample_error() {
  return detail::error_info{errc::task_failed, "boom", "std::out_of_range",
                            "plus"};
}

// Serializes `x` into a message, reads it back, and returns the copy.
template <class T>
T roundtrip(caf::actor_system& sys, const T& x) {
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  auto msg = caf::make_message(x);
  if (auto err = sink(msg))
    BOOST_FAIL("cannot serialize: " << sys.render(err));
  caf::message copy;
  caf::binary_deserializer source{sys, buf};
  if (auto err = source(copy))
    BOOST_FAIL("cannot deserialize: " << sys.render(err));
  BOOST_REQUIRE(copy.match_elements<T>());
  return copy.get_as<T>(0);
}

inline caf::actor some_actor(caf::actor_system& sys) {
  // With an argument: CAF 0.17.6 dereferences a null argument tuple when a
  // function-based actor is spawned without one.
  return sys.spawn([](int) -> caf::behavior { return {[](int) {}}; }, 0);
}

inline internal::actor_spec sample_actor_spec() {
  internal::actor_spec spec;
  spec.id = actor_id{unique_id::random()};
  spec.job = job_id{2};
  spec.factory = "counter::create";
  spec.class_tag = 77;
  detail::task_arg arg;
  arg.inline_value = detail::encode(5);
  spec.args = {arg};
  spec.name = "counter";
  spec.ns = "svc";
  spec.detached = true;
  spec.max_restarts = -1;
  spec.max_task_retries = 3;
  spec.max_concurrency = 4;
  spec.resources = internal::resource_set{{{"GPU", 0.25}}};
  spec.owner = worker_id{unique_id::random()};
  spec.shared_host = true;
  spec.concurrency_groups = {{"io", 8}, {"health", 1}};
  return spec;
}

/// Picks the `sample` overload of message type `T`.
template <class T>
struct type_tag {};

inline worker_id some_worker() {
  return worker_id{unique_id::random()};
}

inline node_id some_node() {
  return node_id{unique_id::random()};
}

inline actor_id some_actor_id() {
  return actor_id{unique_id::random()};
}

inline object_id some_object() {
  return object_id{sample_spec().id, 1};
}

inline detail::value some_value() {
  auto v = detail::encode(std::vector<char>(1000, 'x'));
  v.refs.push_back(detail::contained_ref{some_object(), some_worker(), {}});
  return v;
}

inline internal::resource_set some_resources() {
  return internal::resource_set{{{"CPU", 4}, {"GPU", 0.5}}};
}

// One filled-in value of each registered message type, its fields set away
// from their defaults, so that a field the serializer drops changes the
// bytes. A type registered without one here fails to compile.

inline protocol::lease_request sample(type_tag<protocol::lease_request>,
                                      const caf::actor& a) {
  return {.request_id = 5,
          .job = job_id{3},
          .resources = some_resources(),
          .owner = a,
          .affinity = some_node(),
          .affinity_soft = true,
          .owner_contact = "10.0.0.1:41001",
          .retriable = false};
}

inline protocol::lease_grant sample(type_tag<protocol::lease_grant>,
                                    const caf::actor& a) {
  return {.request_id = 5,
          .lease_id = 6,
          .worker = some_worker(),
          .worker_handle = a,
          .node = some_node(),
          .raylet = a,
          .worker_contact = "10.0.0.2:41002",
          .raylet_contact = "10.0.0.3:41003",
          .worker_pid = 4123,
          .worker_control = a};
}

inline protocol::lease_return sample(type_tag<protocol::lease_return>,
                                     const caf::actor&) {
  return {.lease_id = 6};
}

inline protocol::worker_lost sample(type_tag<protocol::worker_lost>,
                                    const caf::actor&) {
  return {.lease_id = 6,
          .worker = some_worker(),
          .reason = "killed",
          .cause = errc::out_of_memory};
}

inline protocol::push_task sample(type_tag<protocol::push_task>,
                                  const caf::actor& a) {
  return {.spec = sample_spec(), .lease_id = 9, .reply_to = a};
}

inline protocol::task_done sample(type_tag<protocol::task_done>,
                                  const caf::actor& a) {
  return {.task = sample_spec().id,
          .attempt = 3,
          .lease_id = 11,
          .worker = some_worker(),
          .ok = true,
          .result = some_value(),
          .error = sample_error(),
          .retry_listed = true,
          .run_ns = 1234,
          .stored_at = some_node(),
          .store = a,
          .store_contact = "127.0.0.1:40123"};
}

inline protocol::submit_task sample(type_tag<protocol::submit_task>,
                                    const caf::actor&) {
  return {.spec = sample_spec(),
          .held = {some_object(), some_object()},
          .parent = sample_spec().id};
}

inline protocol::fetch_object sample(type_tag<protocol::fetch_object>,
                                     const caf::actor&) {
  return {.id = some_object(), .owner = some_worker(), .address = {}};
}

inline protocol::register_borrowers
sample(type_tag<protocol::register_borrowers>, const caf::actor& a) {
  return {.refs = some_value().refs, .borrower = some_worker(), .handle = a};
}

inline protocol::register_borrow sample(type_tag<protocol::register_borrow>,
                                        const caf::actor&) {
  detail::owner_address address;
  address.aid = 42;
  address.contact = "127.0.0.1:4711";
  return {.id = some_object(), .address = address};
}

inline protocol::object_request sample(type_tag<protocol::object_request>,
                                       const caf::actor& a) {
  return {.id = some_object(), .requester = a};
}

inline protocol::add_borrower sample(type_tag<protocol::add_borrower>,
                                     const caf::actor& a) {
  return {.id = some_object(), .borrower = some_worker(), .handle = a, .n = 2};
}

inline protocol::remove_borrower sample(type_tag<protocol::remove_borrower>,
                                        const caf::actor&) {
  return {.id = some_object(), .borrower = some_worker(), .n = 3};
}

inline protocol::object_reply sample(type_tag<protocol::object_reply>,
                                     const caf::actor& a) {
  return {.id = some_object(),
          .ok = true,
          .result = some_value(),
          .error = sample_error(),
          .copies = {protocol::stored_copy{a, "127.0.0.1:4242",
                                           node_id{unique_id{5, 6}}}},
          .attempt = 1};
}

inline protocol::copy_kept sample(type_tag<protocol::copy_kept>,
                                  const caf::actor& a) {
  return {.id = some_object(),
          .attempt = 2,
          .copy = {a, "127.0.0.1:4243", node_id{unique_id{7, 8}}}};
}

inline protocol::worker_blocked sample(type_tag<protocol::worker_blocked>,
                                       const caf::actor&) {
  return {.worker = some_worker()};
}

inline protocol::worker_unblocked sample(type_tag<protocol::worker_unblocked>,
                                         const caf::actor&) {
  return {.worker = some_worker()};
}

inline protocol::kill_worker sample(type_tag<protocol::kill_worker>,
                                    const caf::actor&) {
  return {.worker = some_worker()};
}

inline protocol::worker_hello sample(type_tag<protocol::worker_hello>,
                                     const caf::actor&) {
  return {.token = "0123456789abcdef", .pid = 4242};
}

inline protocol::worker_welcome sample(type_tag<protocol::worker_welcome>,
                                       const caf::actor& a) {
  return {.worker = some_worker(),
          .node = some_node(),
          .job = job_id{7},
          .raylet = a,
          .gcs = a,
          .max_inline_bytes = 102400};
}

inline protocol::worker_ready sample(type_tag<protocol::worker_ready>,
                                     const caf::actor& a) {
  return {.token = "fedcba9876543210",
          .handle = a,
          .contact = "10.0.0.4:41004",
          .control = a};
}

inline protocol::worker_exited sample(type_tag<protocol::worker_exited>,
                                      const caf::actor&) {
  return {.worker = some_worker(),
          .pid = 4243,
          .how = "was killed by signal 11 (SIGSEGV)"};
}

inline protocol::worker_launched sample(type_tag<protocol::worker_launched>,
                                        const caf::actor&) {
  return {.worker = some_worker(),
          .pid = 4244,
          .forked = true,
          .spare = true,
          .error = "cannot start worker process 'x': No such file"};
}

inline protocol::check_worker_process
sample(type_tag<protocol::check_worker_process>, const caf::actor&) {
  return {.worker = some_worker()};
}

inline protocol::start_instance_process
sample(type_tag<protocol::start_instance_process>, const caf::actor&) {
  return {.job = job_id{7},
          .socket = "prism-instances-0123456789abcdef",
          .token = "00112233445566778899aabbccddeeff",
          .worker = some_worker()};
}

inline protocol::instance_process_launched
sample(type_tag<protocol::instance_process_launched>, const caf::actor&) {
  return {.token = "00112233445566778899aabbccddeeff",
          .pid = 4245,
          .error = "cannot fork: Resource temporarily unavailable"};
}

inline protocol::instance_process_exited
sample(type_tag<protocol::instance_process_exited>, const caf::actor&) {
  return {.token = "00112233445566778899aabbccddeeff",
          .pid = 4246,
          .how = "was killed by signal 6 (SIGABRT)"};
}

inline protocol::door_target sample(type_tag<protocol::door_target>,
                                    const caf::actor& a) {
  return {.raylet = a};
}

inline protocol::count_workers sample(type_tag<protocol::count_workers>,
                                      const caf::actor&) {
  return {.unused = 1};
}

inline protocol::query_resources sample(type_tag<protocol::query_resources>,
                                        const caf::actor&) {
  return {.unused = 1};
}

inline protocol::node_resources sample(type_tag<protocol::node_resources>,
                                       const caf::actor&) {
  return {.node = some_node(),
          .total = some_resources(),
          .available = internal::resource_set{{{"CPU", 1.5}}},
          .infeasible = {internal::resource_set{{{"TPU", 1}}}},
          .waiting = {some_resources()}};
}

inline protocol::query_task sample(type_tag<protocol::query_task>,
                                   const caf::actor&) {
  return {.task = sample_spec().id};
}

inline protocol::query_copies sample(type_tag<protocol::query_copies>,
                                     const caf::actor&) {
  return {.id = some_object()};
}

inline protocol::lease_refused sample(type_tag<protocol::lease_refused>,
                                      const caf::actor&) {
  return {.request_id = 7, .error = sample_error()};
}

inline protocol::hosted_actor sample(type_tag<protocol::hosted_actor>,
                                     const caf::actor& a) {
  return {.actor = some_actor_id(),
          .incarnation = 5,
          .host = a,
          .contact = "10.0.0.5:41005"};
}

inline std::vector<protocol::hosted_actor>
sample(type_tag<std::vector<protocol::hosted_actor>>, const caf::actor& a) {
  return {sample(type_tag<protocol::hosted_actor>{}, a),
          sample(type_tag<protocol::hosted_actor>{}, a)};
}

inline protocol::add_node sample(type_tag<protocol::add_node>,
                                 const caf::actor& a) {
  return {.node = some_node(),
          .resources = some_resources(),
          .raylet = a,
          .hosted = sample(type_tag<std::vector<protocol::hosted_actor>>{}, a),
          .contact = "10.0.0.7:41007",
          .labels = {{"zone", "b"}, {"disk", "ssd"}}};
}

inline protocol::node_added sample(type_tag<protocol::node_added>,
                                   const caf::actor&) {
  return {.node = some_node()};
}

inline protocol::node_info sample(type_tag<protocol::node_info>,
                                  const caf::actor& a) {
  return {.node = some_node(),
          .resources = some_resources(),
          .raylet = a,
          .alive = false,
          .contact = "10.0.0.8:41008",
          .labels = {{"zone", "c"}}};
}

inline std::vector<protocol::node_info>
sample(type_tag<std::vector<protocol::node_info>>, const caf::actor& a) {
  return {sample(type_tag<protocol::node_info>{}, a),
          sample(type_tag<protocol::node_info>{}, a)};
}

inline protocol::job_program sample(type_tag<protocol::job_program>,
                                    const caf::actor&) {
  return {.path = "/opt/app/driver",
          .argv = {"driver", "--flag"},
          .sha256 = std::string(64, 'a'),
          .size = 123456};
}

inline protocol::start_job sample(type_tag<protocol::start_job>,
                                  const caf::actor& a) {
  return {.driver = some_worker(),
          .ns = "ns",
          .program = sample(type_tag<protocol::job_program>{}, a)};
}

inline protocol::get_job_program sample(type_tag<protocol::get_job_program>,
                                        const caf::actor&) {
  return {.job = job_id{6}};
}

inline protocol::offer_program sample(type_tag<protocol::offer_program>,
                                      const caf::actor&) {
  return {.sha256 = std::string(64, 'b'), .size = 7 << 20};
}

inline protocol::program_part sample(type_tag<protocol::program_part>,
                                     const caf::actor&) {
  return {.sha256 = std::string(64, 'b'),
          .offset = 1 << 20,
          .bytes = std::string(4096, '\x7f')};
}

inline protocol::read_program sample(type_tag<protocol::read_program>,
                                     const caf::actor&) {
  return {.sha256 = std::string(64, 'b'), .offset = 3, .max_bytes = 1 << 20};
}

inline protocol::program_bytes sample(type_tag<protocol::program_bytes>,
                                      const caf::actor&) {
  return {.ok = true,
          .pending = false,
          .unknown = true,
          .error = "no copy",
          .total = 7 << 20,
          .offset = 1 << 20,
          .bytes = std::string(512, '\0')};
}

inline protocol::program_checked sample(type_tag<protocol::program_checked>,
                                        const caf::actor& a) {
  return {.job = job_id{6},
          .program = sample(type_tag<protocol::job_program>{}, a),
          .error = "its SHA-256 differs"};
}

inline protocol::job_started sample(type_tag<protocol::job_started>,
                                    const caf::actor&) {
  return {.job = job_id{4}};
}

inline protocol::finish_job sample(type_tag<protocol::finish_job>,
                                   const caf::actor&) {
  return {.job = job_id{4}};
}

inline protocol::watch_driver sample(type_tag<protocol::watch_driver>,
                                     const caf::actor& a) {
  return {.job = job_id{4}, .owner = a};
}

inline protocol::list_nodes sample(type_tag<protocol::list_nodes>,
                                   const caf::actor&) {
  return {.unused = 1};
}

inline protocol::resolve_actor_call
sample(type_tag<protocol::resolve_actor_call>, const caf::actor&) {
  auto spec = sample_spec();
  return {.actor = some_actor_id(), .task = spec.id, .args = spec.args};
}

inline protocol::create_actor sample(type_tag<protocol::create_actor>,
                                     const caf::actor& a) {
  return {.spec = sample_actor_spec(), .owner = a, .get_if_exists = true};
}

inline protocol::subscribe_actor sample(type_tag<protocol::subscribe_actor>,
                                        const caf::actor& a) {
  return {.actor = some_actor_id(), .subscriber = a};
}

inline protocol::actor_update sample(type_tag<protocol::actor_update>,
                                     const caf::actor& a) {
  return {.actor = some_actor_id(),
          .state = internal::actor_state::restarting,
          .host = a,
          .incarnation = 2,
          .max_task_retries = 3,
          .death_kind = internal::death_kind::out_of_restarts,
          .death_cause = "node died",
          .host_contact = "10.0.0.9:41009",
          .node = node_id{unique_id{0x5be0, 0xc2a7}},
          .pid = 4123};
}

inline protocol::actor_updates sample(type_tag<protocol::actor_updates>,
                                      const caf::actor& a) {
  return {sample(type_tag<protocol::actor_update>{}, a),
          sample(type_tag<protocol::actor_update>{}, a)};
}

inline protocol::lookup_actor sample(type_tag<protocol::lookup_actor>,
                                     const caf::actor&) {
  return {.ns = "svc", .name = "counter"};
}

inline protocol::actor_found sample(type_tag<protocol::actor_found>,
                                    const caf::actor&) {
  return {.found = true, .actor = some_actor_id(), .class_tag = 77};
}

inline protocol::kill_actor sample(type_tag<protocol::kill_actor>,
                                   const caf::actor&) {
  return {.actor = some_actor_id(), .no_restart = false};
}

inline protocol::locate_actor sample(type_tag<protocol::locate_actor>,
                                     const caf::actor&) {
  return {.actor = some_actor_id()};
}

inline protocol::actor_location sample(type_tag<protocol::actor_location>,
                                       const caf::actor&) {
  return {.alive = true, .node = some_node()};
}

inline protocol::host_actor sample(type_tag<protocol::host_actor>,
                                   const caf::actor&) {
  return {
      .spec = sample_actor_spec(), .incarnation = 4, .instance_process = true};
}

inline protocol::host_actors sample(type_tag<protocol::host_actors>,
                                    const caf::actor& a) {
  return {sample(type_tag<protocol::host_actor>{}, a),
          sample(type_tag<protocol::host_actor>{}, a)};
}

inline protocol::drop_instance sample(type_tag<protocol::drop_instance>,
                                      const caf::actor&) {
  return {.actor = some_actor_id(), .incarnation = 3};
}

inline protocol::actor_started sample(type_tag<protocol::actor_started>,
                                      const caf::actor& a) {
  return {.actor = some_actor_id(),
          .incarnation = 1,
          .host = a,
          .node = some_node(),
          .contact = "10.0.0.10:41010",
          .pid = 4188};
}

inline protocol::actors_started sample(type_tag<protocol::actors_started>,
                                       const caf::actor& a) {
  return {sample(type_tag<protocol::actor_started>{}, a),
          sample(type_tag<protocol::actor_started>{}, a)};
}

inline protocol::actor_instance_lost
sample(type_tag<protocol::actor_instance_lost>, const caf::actor&) {
  return {.actor = some_actor_id(),
          .incarnation = 2,
          .why = "its process (pid 77) was killed by signal 9 (SIGKILL)"};
}

inline protocol::actor_ended sample(type_tag<protocol::actor_ended>,
                                    const caf::actor&) {
  return {.actor = some_actor_id(),
          .incarnation = 1,
          .kind = internal::death_kind::constructor_failed,
          .cause = "exit"};
}

inline protocol::actor_task sample(type_tag<protocol::actor_task>,
                                   const caf::actor& a) {
  auto spec = sample_spec();
  return {.task = spec.id,
          .method = "counter::add",
          .args = spec.args,
          .reply_to = a,
          .submit_us = 1'700'000'000'000'001,
          .group = "health"};
}

inline protocol::actor_task_done sample(type_tag<protocol::actor_task_done>,
                                        const caf::actor&) {
  return {.actor = some_actor_id(),
          .task = sample_spec().id,
          .incarnation = 3,
          .ok = true,
          .result = some_value(),
          .error = sample_error(),
          .start_us = 1'700'000'000'000'002,
          .end_us = 1'700'000'000'000'003};
}

inline protocol::actor_tasks_done sample(type_tag<protocol::actor_tasks_done>,
                                         const caf::actor& a) {
  return {sample(type_tag<protocol::actor_task_done>{}, a),
          sample(type_tag<protocol::actor_task_done>{}, a)};
}

inline detail::error_info sample(type_tag<detail::error_info>,
                                 const caf::actor&) {
  return sample_error();
}

inline protocol::lease_spillback sample(type_tag<protocol::lease_spillback>,
                                        const caf::actor& a) {
  return {.request_id = 8,
          .raylet = a,
          .node = some_node(),
          .raylet_contact = "10.0.0.11:41011"};
}

inline protocol::cluster_view sample(type_tag<protocol::cluster_view>,
                                     const caf::actor& a) {
  return {.nodes = sample(type_tag<std::vector<protocol::node_info>>{}, a)};
}

inline protocol::gcs_attach sample(type_tag<protocol::gcs_attach>,
                                   const caf::actor& a) {
  return {.gcs = a};
}

inline protocol::enter_cluster sample(type_tag<protocol::enter_cluster>,
                                      const caf::actor&) {
  return {.token = std::string(64, 'a'),
          .role = "driver",
          .contact = "10.0.0.6:41000"};
}

inline protocol::watch_gcs sample(type_tag<protocol::watch_gcs>,
                                  const caf::actor& a) {
  return {.watcher = a};
}

inline protocol::gcs_restarted sample(type_tag<protocol::gcs_restarted>,
                                      const caf::actor&) {
  return {.generation = 3};
}

inline protocol::resubscribe_actors
sample(type_tag<protocol::resubscribe_actors>, const caf::actor& a) {
  return {.owner_id = some_worker(),
          .owner = a,
          .actors = {some_actor_id(), some_actor_id()}};
}

inline protocol::kv_put sample(type_tag<protocol::kv_put>, const caf::actor&) {
  return {.ns = "ns",
          .key = "k",
          .value = std::string{"\0v", 2},
          .overwrite = false,
          .request = {.client = unique_id::random(), .seq = 3}};
}

inline protocol::kv_get sample(type_tag<protocol::kv_get>, const caf::actor&) {
  return {.ns = "ns", .key = "k"};
}

inline protocol::kv_value sample(type_tag<protocol::kv_value>,
                                 const caf::actor&) {
  return {.found = true, .value = "v"};
}

inline protocol::kv_del sample(type_tag<protocol::kv_del>, const caf::actor&) {
  return {.ns = "ns",
          .key = "k",
          .request = {.client = unique_id::random(), .seq = 4}};
}

inline protocol::kv_keys sample(type_tag<protocol::kv_keys>,
                                const caf::actor&) {
  return {.ns = "ns", .prefix = "p"};
}

inline protocol::lineage_put sample(type_tag<protocol::lineage_put>,
                                    const caf::actor&) {
  return {.object = object_id{sample_spec().id, 1},
          .job = job_id{3},
          .task_spec = std::string("spec\0bytes", 10)};
}

inline protocol::lineage_del sample(type_tag<protocol::lineage_del>,
                                    const caf::actor&) {
  return {.object = object_id{sample_spec().id, 2}};
}

inline protocol::lineage_get sample(type_tag<protocol::lineage_get>,
                                    const caf::actor&) {
  return {.object = object_id{sample_spec().id, 3}};
}

inline protocol::lineage_value sample(type_tag<protocol::lineage_value>,
                                      const caf::actor&) {
  return {.found = true, .task_spec = "spec"};
}

inline protocol::count_lineage sample(type_tag<protocol::count_lineage>,
                                      const caf::actor&) {
  return {};
}

inline protocol::seal_result sample(type_tag<protocol::seal_result>,
                                    const caf::actor& a) {
  return {.done = sample(type_tag<protocol::task_done>{}, a), .reply_to = a};
}

inline protocol::store_object sample(type_tag<protocol::store_object>,
                                     const caf::actor&) {
  return {.id = some_object(),
          .value = some_value(),
          .attempt = 2,
          .primary = true};
}

inline protocol::pull_object sample(type_tag<protocol::pull_object>,
                                    const caf::actor&) {
  return {.id = some_object(),
          .offset = 4 << 20,
          .max_bytes = 4 << 20,
          .bulk = true};
}

inline protocol::object_chunk sample(type_tag<protocol::object_chunk>,
                                     const caf::actor&) {
  return {.id = some_object(),
          .ok = true,
          .error = sample_error(),
          .total = 9 << 20,
          .offset = 0,
          .part = some_value(),
          .bulk_port = 40123,
          .bulk_ticket = std::string(32, 'e')};
}

inline protocol::map_object sample(type_tag<protocol::map_object>,
                                   const caf::actor&) {
  return {.id = some_object()};
}

inline protocol::object_mapped sample(type_tag<protocol::object_mapped>,
                                      const caf::actor&) {
  return {.id = some_object(),
          .ok = true,
          .error = sample_error(),
          .arena_path = "/proc/4242/fd/17",
          .arena_bytes = std::uint64_t{1} << 33,
          .arena_mark = unique_id{5, 6},
          .offset = 8192,
          .size = 100 << 20,
          .tag = 77,
          .refs = some_value().refs,
          .pin = 99};
}

inline protocol::unmap_object sample(type_tag<protocol::unmap_object>,
                                     const caf::actor&) {
  return {.pin = 99};
}

inline protocol::create_object sample(type_tag<protocol::create_object>,
                                      const caf::actor&) {
  return {.id = some_object(), .size = 100 << 20};
}

inline protocol::seal_object sample(type_tag<protocol::seal_object>,
                                    const caf::actor&) {
  return {.id = some_object(),
          .pin = 99,
          .tag = 77,
          .refs = some_value().refs,
          .attempt = 3};
}

inline protocol::object_kept sample(type_tag<protocol::object_kept>,
                                    const caf::actor&) {
  detail::error_info full;
  full.code = errc::object_store_full;
  full.message = "no room";
  return {.ok = false, .contact = "10.0.0.2:4001", .error = full};
}

inline protocol::free_object sample(type_tag<protocol::free_object>,
                                    const caf::actor&) {
  return {.id = some_object(), .attempt = 4};
}

// No fields.
inline protocol::drop_objects sample(type_tag<protocol::drop_objects>,
                                     const caf::actor&) {
  return {};
}

// No fields.
inline protocol::count_objects sample(type_tag<protocol::count_objects>,
                                      const caf::actor&) {
  return {};
}

inline protocol::object_store_usage
sample(type_tag<protocol::object_store_usage>, const caf::actor&) {
  return {.objects = 3,
          .bytes = 4096,
          .shared_bytes = 4160,
          .mapped_reads = 2,
          .spilled_objects = 1,
          .spilled_bytes = 1024,
          .spill_files = 1,
          .spills = 5,
          .restores = 4,
          .full_waits = 2,
          .full_errors = 1};
}

inline protocol::read_object sample(type_tag<protocol::read_object>,
                                    const caf::actor&) {
  return {.id = some_object()};
}

inline protocol::put_object sample(type_tag<protocol::put_object>,
                                   const caf::actor&) {
  return {.id = some_object(), .value = some_value()};
}

inline protocol::object_freed sample(type_tag<protocol::object_freed>,
                                     const caf::actor&) {
  return {.id = some_object()};
}

inline protocol::adopt_object sample(type_tag<protocol::adopt_object>,
                                     const caf::actor& a) {
  return {.id = some_object(), .owner = some_worker(), .requester = a};
}

inline protocol::which_children sample(type_tag<protocol::which_children>,
                                       const caf::actor&) {
  return {.unused = 1};
}

inline protocol::start_child sample(type_tag<protocol::start_child>,
                                    const caf::actor&) {
  return {.id = "worker-1"};
}

inline protocol::terminate_child sample(type_tag<protocol::terminate_child>,
                                        const caf::actor&) {
  return {.id = "worker-1"};
}

inline protocol::delete_child sample(type_tag<protocol::delete_child>,
                                     const caf::actor&) {
  return {.id = "worker-1"};
}

inline protocol::await_started sample(type_tag<protocol::await_started>,
                                      const caf::actor&) {
  return {.unused = 1};
}

inline child_info sample(type_tag<child_info>, const caf::actor&) {
  return {.id = "worker-1",
          .running = true,
          .restart = restart_type::transient,
          .restarts = 2};
}

inline std::vector<child_info> sample(type_tag<std::vector<child_info>>,
                                      const caf::actor& a) {
  return {sample(type_tag<child_info>{}, a), sample(type_tag<child_info>{}, a)};
}

inline protocol::node_refused sample(type_tag<protocol::node_refused>,
                                     const caf::actor&) {
  return {.node = some_node(), .reason = "declared dead"};
}

inline protocol::query_summary sample(type_tag<protocol::query_summary>,
                                      const caf::actor&) {
  return {.unused = 1};
}

inline protocol::cluster_summary sample(type_tag<protocol::cluster_summary>,
                                        const caf::actor&) {
  return {.jobs = {{.job = job_id{3},
                    .ns = "ns",
                    .running = true,
                    .start_ms = 1700000000000}},
          .actors_pending = 1,
          .actors_alive = 2,
          .actors_restarting = 3,
          .actors_dead = 4,
          .unplaced_actors = {some_resources()}};
}

inline protocol::output_line sample(type_tag<protocol::output_line>,
                                    const caf::actor&) {
  return {.source = "square", .pid = 4123, .err = true, .text = "x = 3"};
}

inline protocol::output_lines sample(type_tag<protocol::output_lines>,
                                     const caf::actor& a) {
  return {.job = job_id{3},
          .node = some_node(),
          .lines = {sample(type_tag<protocol::output_line>{}, a),
                    {.source = "", .pid = 7, .err = false, .text = ""}},
          .dropped = 12};
}

inline protocol::subscribe_output sample(type_tag<protocol::subscribe_output>,
                                         const caf::actor& a) {
  return {.job = job_id{3}, .sink = a};
}

inline protocol::flush_output sample(type_tag<protocol::flush_output>,
                                     const caf::actor&) {
  return {.job = job_id{3}};
}

inline protocol::read_logs sample(type_tag<protocol::read_logs>,
                                  const caf::actor&) {
  return {.of = some_node(),
          .component = "worker",
          .job = job_id{3},
          .pid = 4123,
          .actor = some_actor_id(),
          .err = true,
          .tail = 10,
          .offsets = {{"worker-3-4123.err", 77}}};
}

inline protocol::log_piece sample(type_tag<protocol::log_piece>,
                                  const caf::actor&) {
  return {.file = "worker-3-4123.out",
          .offset = 10,
          .size = 20,
          .bytes = "x = 3\ny = 4\n"};
}

inline protocol::log_pieces sample(type_tag<protocol::log_pieces>,
                                   const caf::actor& a) {
  return {.directory = "/tmp/prism-0",
          .pieces = {sample(type_tag<protocol::log_piece>{}, a)},
          .error = ""};
}

inline state::entry some_state_entry() {
  return {.fields = {{"actor_id", some_actor_id().hex()},
                     {"state", "RESTARTING"},
                     {"name", ""}},
          .history = {{{"restart", "1"}, {"cause", "its node died"}}, {}}};
}

inline protocol::list_state sample(type_tag<protocol::list_state>,
                                   const caf::actor&) {
  return {.kind = state::kind::actors,
          .filters = {"state=ALIVE", "class_name!=Counter"},
          .limit = 250,
          .cursor = some_actor_id().hex()};
}

inline protocol::state_page sample(type_tag<protocol::state_page>,
                                   const caf::actor&) {
  return {.page = {.entries = {some_state_entry(), {}},
                   .matched = 53572,
                   .total = 100000,
                   .next_cursor = "0c9d51e3",
                   .dropped_events = 17,
                   .forgotten_tasks = 4000,
                   .nodes_unanswered = 2},
          .error = {errc::invalid_argument, "no key 'colour'", "", ""}};
}

inline protocol::get_state sample(type_tag<protocol::get_state>,
                                  const caf::actor&) {
  return {.kind = state::kind::jobs, .id = "12"};
}

inline protocol::state_found sample(type_tag<protocol::state_found>,
                                    const caf::actor&) {
  return {.found = true, .entry = some_state_entry(), .error = {}};
}

inline protocol::summarize_state sample(type_tag<protocol::summarize_state>,
                                        const caf::actor&) {
  return {.kind = state::kind::actors, .group_key = "class_name"};
}

inline protocol::state_counts sample(type_tag<protocol::state_counts>,
                                     const caf::actor&) {
  return {.counts = {{"Counter", "ALIVE", 99999}, {"Counter", "DEAD", 1}},
          .error = {}};
}

inline internal::transfer_event sample_transfer() {
  internal::transfer_event t;
  t.object = object_id{task_id{some_worker(), 9}, 1};
  t.job = job_id{3};
  t.from = some_node();
  t.to = node_id{unique_id{0x0123456789abcdefULL, 0xfedcba9876543210ULL}};
  t.bytes = 10u << 20;
  t.start_us = 1795000000000100;
  t.end_us = 1795000000020100;
  t.error = "its node died";
  return t;
}

inline protocol::task_events sample(type_tag<protocol::task_events>,
                                    const caf::actor&) {
  internal::task_event first;
  first.task = task_id{some_worker(), 9};
  first.state = internal::task_state::queued;
  first.submit_us = 1795000000123456;
  first.name = "square";
  first.job = job_id{3};
  internal::task_event failed;
  failed.task = first.task;
  failed.attempt = 1;
  failed.state = internal::task_state::failed;
  failed.submit_us = first.submit_us;
  failed.start_us = first.submit_us + 10;
  failed.end_us = first.submit_us + 2000;
  failed.node = some_node();
  failed.worker = some_worker();
  failed.pid = 4123;
  failed.error = "the worker running task 'square' died";
  internal::task_event call;
  call.task = task_id{some_worker(), 10};
  call.state = internal::task_state::finished;
  call.name = "counter::add";
  call.actor = some_actor_id();
  call.end_us = first.submit_us + 3000;
  return {.events = {first, failed, call},
          .dropped = 3,
          .transfers = {sample_transfer()}};
}

inline protocol::submitted_job some_submitted_job() {
  return {.id = "job-3f9a2c1b7e4d",
          .name = "nightly",
          .state = protocol::submitted_job_state::stopped,
          .argv = {"./my_driver", "--rows", "1000000"},
          .sha256 = std::string(64, 'a'),
          .working_dir = "/srv/jobs",
          .env_names = {"MODE"},
          .submit_ms = 1795000000123,
          .start_ms = 1795000000456,
          .end_ms = 1795000009999,
          .exit_code = -1,
          .message = "was killed by signal 15 (SIGTERM)",
          .supervisor_pid = 4100,
          .supervisor_start = 123456789,
          .driver_pid = 4101,
          .stop_requested = true};
}

inline protocol::submit_job sample(type_tag<protocol::submit_job>,
                                   const caf::actor&) {
  return {.name = "nightly",
          .argv = {"./my_driver", "--rows", "1000000"},
          .sha256 = std::string(64, 'a'),
          .size = 9000000,
          .working_dir = "/srv/jobs",
          .env = {"MODE=fast", "EMPTY="}};
}

inline protocol::get_submitted_jobs
sample(type_tag<protocol::get_submitted_jobs>, const caf::actor&) {
  return {.id = "job-3f9a2c1b7e4d"};
}

inline protocol::stop_submitted_job
sample(type_tag<protocol::stop_submitted_job>, const caf::actor&) {
  return {.id = "job-3f9a2c1b7e4d", .grace_ms = 2500};
}

inline protocol::submitted_jobs sample(type_tag<protocol::submitted_jobs>,
                                       const caf::actor&) {
  return {.jobs = {some_submitted_job(), {}},
          .error = {errc::invalid_argument, "no job 'job-0'", "", ""}};
}

inline protocol::read_job_output sample(type_tag<protocol::read_job_output>,
                                        const caf::actor&) {
  return {.id = "job-3f9a2c1b7e4d",
          .err = true,
          .offset = 1 << 20,
          .max_bytes = 1 << 20};
}

inline protocol::job_output sample(type_tag<protocol::job_output>,
                                   const caf::actor&) {
  return {.bytes = "line 1\nline 2\n",
          .offset = 100,
          .size = 114,
          .ended = true,
          .error = {}};
}

inline protocol::cancel_task sample(type_tag<protocol::cancel_task>,
                                    const caf::actor&) {
  return {.task = sample_spec().id, .force = true, .recursive = false};
}

inline protocol::cancel_run sample(type_tag<protocol::cancel_run>,
                                   const caf::actor&) {
  return {.task = sample_spec().id, .force = true, .recursive = false};
}

inline protocol::cancel_call sample(type_tag<protocol::cancel_call>,
                                    const caf::actor&) {
  return {.task = sample_spec().id};
}

inline protocol::cancel_kill sample(type_tag<protocol::cancel_kill>,
                                    const caf::actor&) {
  return {.lease_id = 17};
}

inline internal::histogram some_histogram() {
  auto h = internal::histogram::of_latency();
  h.observe(0.0003);
  h.observe(0.2);
  h.observe(90);
  return h;
}

inline internal::user_series some_user_series() {
  internal::user_series s;
  s.name = "kv_requests_total";
  s.kind = internal::user_metric_kind::histogram;
  s.description = "Requests served";
  s.tags = {{"op", "get"}, {"shard", "3"}};
  s.value = 12;
  s.buckets = some_histogram();
  return s;
}

inline protocol::timeline_query sample(type_tag<protocol::timeline_query>,
                                       const caf::actor&) {
  return {.job = 3, .since_us = 1795000000000000, .cursor = 12, .limit = 500};
}

inline protocol::timeline_page sample(type_tag<protocol::timeline_page>,
                                      const caf::actor&) {
  internal::task_attempt a;
  a.attempt = 1;
  a.state = internal::task_state::failed;
  a.node = some_node();
  a.worker = some_worker();
  a.pid = 4123;
  a.start_us = 1795000000000100;
  a.end_us = 1795000000000900;
  a.error = "its worker died";
  return {.tasks = {{.id = task_id{some_worker(), 9},
                     .name = "square",
                     .submit_us = 1795000000000000,
                     .attempts = {a, a},
                     .actor = some_actor_id()}},
          .next = 13,
          .dropped_events = 2,
          .forgotten_tasks = 5,
          .transfers = {sample_transfer()},
          .forgotten_transfers = 7};
}

inline protocol::query_node_metrics
sample(type_tag<protocol::query_node_metrics>, const caf::actor&) {
  return {.unused = 1};
}

inline protocol::node_metrics sample(type_tag<protocol::node_metrics>,
                                     const caf::actor&) {
  return {.node = some_node(),
          .total = some_resources(),
          .available = some_resources(),
          .workers = {{"IDLE/process", 2}, {"LEASED/process", 5}},
          .leases_waiting = 3,
          .leases_infeasible = 1,
          .leases_granted = 4,
          .actors_hosted = 12,
          .objects = 6,
          .object_bytes = 1 << 20,
          .object_memory_bytes = 1 << 19,
          .spilled_objects = 3,
          .spilled_bytes = 1 << 19,
          .spills = 8,
          .restores = 5,
          .store_full_waits = 2,
          .store_full_errors = 1,
          .memory_used = 3ull << 30,
          .memory_limit = 8ull << 30,
          .memory_kills = 2,
          .output_lines_dropped = 7,
          .worker_processes_started = 9,
          .worker_processes_failed = 2,
          .user = {some_user_series()},
          .user_dropped = 1};
}

inline protocol::user_metrics sample(type_tag<protocol::user_metrics>,
                                     const caf::actor&) {
  auto gauge = some_user_series();
  gauge.kind = internal::user_metric_kind::gauge;
  gauge.set_us = 1795000000123456;
  return {.worker = some_worker(), .series = {some_user_series(), gauge}};
}

inline protocol::node_report sample(type_tag<protocol::node_report>,
                                    const caf::actor&) {
  return {.node = some_node(),
          .available = some_resources(),
          .objects = 3,
          .object_bytes = 4096};
}

inline protocol::query_control_metrics
sample(type_tag<protocol::query_control_metrics>, const caf::actor&) {
  return {.unused = 1};
}

inline protocol::control_metrics sample(type_tag<protocol::control_metrics>,
                                        const caf::actor&) {
  return {.nodes = {{.node = some_node(),
                     .state = "ALIVE",
                     .total = some_resources(),
                     .available = some_resources(),
                     .heartbeat_age_ms = 412,
                     .objects = 2,
                     .object_bytes = 100}},
          .actors = {{"Counter", "ALIVE", 99999}},
          .jobs = {{"RUNNING", 1}, {"FINISHED", 4}},
          .write_latency = some_histogram(),
          .writes_failed = 1};
}

inline protocol::query_task_metrics
sample(type_tag<protocol::query_task_metrics>, const caf::actor&) {
  return {.unused = 1};
}

inline protocol::task_metrics sample(type_tag<protocol::task_metrics>,
                                     const caf::actor&) {
  return {.tasks = {{"square", "FINISHED", 1000}},
          .scheduling = some_histogram(),
          .running = some_histogram(),
          .events_dropped = 5,
          .tasks_forgotten = 6};
}

template <class T>
concept has_sample = requires(const caf::actor& a) {
  sample(type_tag<T>{}, a);
};

// The bytes `x` serializes to, as a message.
template <class T>
std::vector<char> bytes_of(caf::actor_system& sys, const T& x) {
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  if (auto err = sink(caf::make_message(x)))
    BOOST_FAIL("cannot serialize: " << sys.render(err));
  return buf;
}

// Round-trips the sample of the registered type `Entry`, and checks that the
// copy serializes to the same bytes: no field is lost or changed on the way.
template <class Entry>
void roundtrip_sample(caf::actor_system& sys, const caf::actor& a) {
  using type = typename Entry::type;
  static_assert(has_sample<type>,
                "every registered message type needs a sample() above");
  if constexpr (has_sample<type>) {
    BOOST_TEST_CONTEXT(Entry::name) {
      auto x = sample(type_tag<type>{}, a);
      BOOST_TEST((bytes_of(sys, roundtrip(sys, x)) == bytes_of(sys, x)));
    }
  }
}

template <class... Entries>
void roundtrip_samples(caf::actor_system& sys, const caf::actor& a,
                       caf::detail::type_list<Entries...>) {
  (roundtrip_sample<Entries>(sys, a), ...);
}

// Reads `bytes` as a message: an error or an empty message is a refusal,
// anything else came through whole. Must never crash, whatever the bytes.
inline bool readable(caf::actor_system& sys, const std::vector<char>& bytes) {
  caf::message copy;
  caf::binary_deserializer source{sys, bytes};
  try {
    return !source(copy) && !copy.empty();
  } catch (const std::exception&) {
    return false; // e.g. std::bad_alloc of a forged length
  }
}

/// Damaged copies tried per message type: bytes overwritten at random.
constexpr int mutations_per_type = 200;

// Reads every prefix of the sample of `Entry` and damaged copies of it, as
// bytes from a hostile or broken peer would arrive.
template <class Entry>
void read_damaged_sample(caf::actor_system& sys, const caf::actor& a,
                         std::mt19937& rng) {
  using type = typename Entry::type;
  BOOST_TEST_CONTEXT(Entry::name) {
    auto whole = bytes_of(sys, sample(type_tag<type>{}, a));
    for (std::size_t cut = 0; cut < whole.size(); ++cut)
      BOOST_TEST(!readable(sys, {whole.begin(), whole.begin() + cut}),
                 "a prefix of " << cut << " bytes was read whole");
    std::uniform_int_distribution<std::size_t> where{0, whole.size() - 1};
    std::uniform_int_distribution<int> byte{0, 255};
    for (int i = 0; i < mutations_per_type; ++i) {
      auto damaged = whole;
      for (int k = 0; k < 1 + i % 4; ++k)
        damaged[where(rng)] = static_cast<char>(byte(rng));
      readable(sys, damaged); // read whole or refused: either is fine
    }
  }
}

template <class... Entries>
void read_damaged_samples(caf::actor_system& sys, const caf::actor& a,
                          caf::detail::type_list<Entries...>) {
  std::mt19937 rng{20261123};
  (read_damaged_sample<Entries>(sys, a, rng), ...);
}

template <class... Entries>
std::vector<std::string> names_of(caf::detail::type_list<Entries...>) {
  return {Entries::name...};
}

/// The registered message types, in two halves: each half's checks are a
/// test file of their own, so that the compiler's work on every type's
/// serializer is split over two files built in parallel.
constexpr std::size_t message_type_count =
    caf::detail::tl_size<protocol::message_types>::value;
using first_message_types = caf::detail::tl_slice<protocol::message_types, 0,
                                                  message_type_count / 2>::type;
using second_message_types =
    caf::detail::tl_slice<protocol::message_types, message_type_count / 2,
                          message_type_count>::type;
static_assert(caf::detail::tl_size<first_message_types>::value +
                      caf::detail::tl_size<second_message_types>::value ==
                  message_type_count,
              "the two halves hold every registered type");
static_assert(std::is_same_v<caf::detail::tl_at_t<first_message_types, 0>,
                             caf::detail::tl_at_t<protocol::message_types, 0>>);
static_assert(std::is_same_v<caf::detail::tl_at_t<second_message_types, 0>,
                             caf::detail::tl_at_t<protocol::message_types,
                                                  message_type_count / 2>>);

// Round-trips the sample of every type of `List` and reads its damaged
// copies: see the two test files for what each check means.
template <class List>
void roundtrip_every_sample(caf::actor_system& sys) {
  auto a = some_actor(sys);
  roundtrip_samples(sys, a, List{});
  caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
}

template <class List>
void read_every_damaged_sample(caf::actor_system& sys) {
  auto a = some_actor(sys);
  read_damaged_samples(sys, a, List{});
  caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
}

} // namespace protocol_samples
