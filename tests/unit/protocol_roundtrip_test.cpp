// Every message between Prism's components survives CAF's binary serializer,
// so that the same actors can later run in separate processes.

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <exception>
#include <random>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "protocol/registration.hpp"

namespace {

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

internal::task_spec sample_spec() {
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
  spec.affinity = node_id{unique_id::random()};
  spec.affinity_soft = true;
  spec.attempt = 2;
  spec.owner = by_ref.owner;
  return spec;
}

detail::error_info sample_error() {
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

caf::actor some_actor(caf::actor_system& sys) {
  // With an argument: CAF 0.17.6 dereferences a null argument tuple when a
  // function-based actor is spawned without one.
  return sys.spawn([](int) -> caf::behavior { return {[](int) {}}; }, 0);
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(protocol_roundtrip, actor_system_fixture)

BOOST_AUTO_TEST_CASE(task_messages_roundtrip) {
  auto a = some_actor(sys);
  auto push = protocol::push_task{sample_spec(), 9, a};
  auto push2 = roundtrip(sys, push);
  BOOST_TEST((push2.spec == push.spec));
  BOOST_TEST(push2.lease_id == 9u);
  BOOST_TEST((push2.reply_to == a));

  auto held = object_id{sample_spec().id, 1};
  auto submit = roundtrip(sys, protocol::submit_task{sample_spec(), {held}});
  BOOST_TEST(submit.spec.function == "plus");
  BOOST_TEST(submit.held.size() == 1u);
  BOOST_TEST(submit.spec.args.size() == 2u);
  BOOST_TEST(detail::decode<std::string>(submit.spec.args[0].inline_value) ==
             "payload");

  protocol::task_done done;
  done.task = sample_spec().id;
  done.attempt = 3;
  done.lease_id = 11;
  done.worker = worker_id{unique_id::random()};
  done.result = detail::encode(std::vector<int>{1, 2, 3});
  done.error = sample_error();
  done.run_ns = 1234;
  auto done2 = roundtrip(sys, done);
  BOOST_TEST((done2.task == done.task));
  BOOST_TEST((done2.worker == done.worker));
  BOOST_TEST((done2.result == done.result));
  BOOST_TEST((done2.error == done.error));
  BOOST_TEST(done2.run_ns == 1234);
  BOOST_TEST(done2.stored_at.nil());
  caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_CASE(object_store_messages_roundtrip) {
  auto a = some_actor(sys);
  auto id = object_id{sample_spec().id, 1};
  auto big = detail::encode(std::vector<char>(1000, 'x'));
  protocol::task_done done;
  done.task = sample_spec().id;
  done.attempt = 2;
  done.ok = true;
  done.stored_at = node_id{unique_id::random()};
  done.store = a;
  auto seal = roundtrip(sys, protocol::seal_result{done, a});
  BOOST_TEST((seal.done.stored_at == done.stored_at));
  BOOST_TEST((seal.done.store == a));
  BOOST_TEST((seal.reply_to == a));
  auto stored = roundtrip(sys, protocol::store_object{id, big, 3});
  BOOST_TEST((stored.id == id));
  BOOST_TEST((stored.value == big));
  BOOST_TEST(stored.attempt == 3);
  auto pull = roundtrip(sys, protocol::pull_object{id, 8, 4096});
  BOOST_TEST((pull.id == id));
  BOOST_TEST(pull.offset == 8u);
  BOOST_TEST(pull.max_bytes == 4096u);
  auto chunk =
      roundtrip(sys, protocol::object_chunk{id, true, {}, 1u << 20, 4096, big});
  BOOST_TEST((chunk.id == id));
  BOOST_TEST(chunk.ok);
  BOOST_TEST(chunk.total == 1u << 20);
  BOOST_TEST(chunk.offset == 4096u);
  BOOST_TEST((chunk.part == big));
  auto freed = roundtrip(sys, protocol::free_object{id, 4});
  BOOST_TEST((freed.id == id));
  BOOST_TEST(freed.attempt == 4);
  roundtrip(sys, protocol::drop_objects{});
  roundtrip(sys, protocol::count_objects{});
  auto usage = roundtrip(sys, protocol::object_store_usage{3, 4096});
  BOOST_TEST(usage.objects == 3u);
  BOOST_TEST(usage.bytes == 4096u);
  BOOST_TEST((roundtrip(sys, protocol::read_object{id}).id == id));
  auto put = roundtrip(sys, protocol::put_object{id, big});
  BOOST_TEST((put.value == big));
  BOOST_TEST((roundtrip(sys, protocol::object_freed{id}).id == id));
  auto w = worker_id{unique_id::random()};
  auto adopt = roundtrip(sys, protocol::adopt_object{id, w, a});
  BOOST_TEST((adopt.id == id));
  BOOST_TEST((adopt.owner == w));
  BOOST_TEST((adopt.requester == a));
  caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_CASE(lease_messages_roundtrip) {
  auto a = some_actor(sys);
  auto req =
      roundtrip(sys, protocol::lease_request{
                         5, job_id{3}, internal::resource_set{{{"CPU", 2}}}, a,
                         node_id{}, false});
  BOOST_TEST(req.request_id == 5u);
  BOOST_TEST(req.job.value == 3u);
  BOOST_TEST(req.resources.to_string() == "CPU:2");
  BOOST_TEST((req.owner == a));
  BOOST_TEST(req.affinity.nil());

  auto w = worker_id{unique_id::random()};
  auto n = node_id{unique_id::random()};
  auto pinned =
      roundtrip(sys, protocol::lease_request{
                         7, job_id{3}, internal::resource_set{}, a, n, true});
  BOOST_TEST((pinned.affinity == n));
  BOOST_TEST(pinned.affinity_soft);
  auto refused = roundtrip(sys, protocol::lease_refused{7, sample_error()});
  BOOST_TEST(refused.request_id == 7u);
  BOOST_TEST((refused.error == sample_error()));
  auto grant = roundtrip(sys, protocol::lease_grant{5, 6, w, a, n, a});
  BOOST_TEST((grant.worker == w));
  BOOST_TEST((grant.node == n));
  BOOST_TEST((grant.worker_handle == a));
  BOOST_TEST((grant.raylet == a));
  BOOST_TEST(roundtrip(sys, protocol::lease_return{6}).lease_id == 6u);
  auto lost = roundtrip(sys, protocol::worker_lost{6, w, "killed"});
  BOOST_TEST(lost.reason == "killed");
  BOOST_TEST((lost.worker == w));
  caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_CASE(object_messages_roundtrip) {
  auto a = some_actor(sys);
  auto id = object_id{sample_spec().id, 1};
  auto owner = worker_id{unique_id::random()};
  auto fetch = roundtrip(sys, protocol::fetch_object{id, owner});
  BOOST_TEST((fetch.id == id));
  BOOST_TEST((fetch.owner == owner));
  auto req = roundtrip(sys, protocol::object_request{id, a});
  BOOST_TEST((req.requester == a));
  BOOST_TEST(!req.whole);
  BOOST_TEST(roundtrip(sys, protocol::object_request{id, a, true}).whole);
  // Where an object is kept, instead of its value.
  auto node = node_id{unique_id::random()};
  protocol::object_reply located;
  located.id = id;
  located.ok = true;
  located.copies.push_back(protocol::stored_copy{a, "127.0.0.1:4242", node});
  located.attempt = 2;
  auto where = roundtrip(sys, located);
  BOOST_TEST(where.copies.size() == 1u);
  BOOST_TEST((where.copies.at(0).raylet == a));
  BOOST_TEST(where.copies.at(0).contact == "127.0.0.1:4242");
  BOOST_TEST((where.copies.at(0).node == node));
  BOOST_TEST(where.attempt == 2);
  auto kept = roundtrip(
      sys, protocol::copy_kept{id, 3, protocol::stored_copy{a, "", node}});
  BOOST_TEST((kept.id == id));
  BOOST_TEST(kept.attempt == 3);
  BOOST_TEST((kept.copy.raylet == a));
  BOOST_TEST((kept.copy.node == node));
  BOOST_TEST((roundtrip(sys, protocol::query_copies{id}).id == id));
  auto reply =
      roundtrip(sys, protocol::object_reply{id, true, detail::encode(3.5),
                                            sample_error()});
  BOOST_TEST(reply.ok);
  BOOST_TEST(detail::decode<double>(reply.result) == 3.5);
  BOOST_TEST((reply.error == sample_error()));
  auto add = roundtrip(sys, protocol::add_borrower{id, owner, a, 2});
  BOOST_TEST((add.id == id));
  BOOST_TEST((add.borrower == owner));
  BOOST_TEST((add.handle == a));
  BOOST_TEST(add.n == 2);
  auto remove = roundtrip(sys, protocol::remove_borrower{id, owner, 3});
  BOOST_TEST((remove.id == id));
  BOOST_TEST((remove.borrower == owner));
  BOOST_TEST(remove.n == 3);
  // The refs inside a value travel with it.
  detail::value nested = detail::encode(1);
  nested.refs.push_back(detail::contained_ref{id, owner});
  auto carried = roundtrip(sys, protocol::object_reply{id, true, nested, {}});
  BOOST_TEST(carried.result.refs.size() == 1u);
  BOOST_TEST((carried.result.refs.at(0) == detail::contained_ref{id, owner}));
  // So do their owners' addresses, which name the owner actor again.
  detail::owner_address address;
  auto ptr = caf::actor_cast<caf::strong_actor_ptr>(a);
  address.actor.reset(ptr.get());
  address.aid = ptr->id();
  address.nid = ptr->node();
  nested.refs.at(0).address = address;
  auto addressed = roundtrip(sys, protocol::object_reply{id, true, nested, {}});
  BOOST_TEST((caf::actor_cast<caf::actor>(
                  addressed.result.refs.at(0).address.lock()) == a));
  auto fetch_at = roundtrip(sys, protocol::fetch_object{id, owner, address});
  BOOST_TEST((fetch_at.address == address));
  auto registered =
      roundtrip(sys, protocol::register_borrowers{nested.refs, owner, a});
  BOOST_TEST((registered.refs == nested.refs));
  BOOST_TEST((registered.handle == a));
  caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_CASE(node_and_job_messages_roundtrip) {
  auto a = some_actor(sys);
  auto w = worker_id{unique_id::random()};
  auto n = node_id{unique_id::random()};
  BOOST_TEST((roundtrip(sys, protocol::worker_blocked{w}).worker == w));
  BOOST_TEST((roundtrip(sys, protocol::worker_unblocked{w}).worker == w));
  BOOST_TEST((roundtrip(sys, protocol::kill_worker{w}).worker == w));
  roundtrip(sys, protocol::count_workers{});
  roundtrip(sys, protocol::query_resources{});
  auto tq = roundtrip(sys, protocol::query_task{task_id{w, 77}});
  BOOST_TEST((tq.task == task_id{w, 77}));
  auto res = roundtrip(
      sys, protocol::node_resources{n,
                                    internal::resource_set{{{"CPU", 4}}},
                                    internal::resource_set{{{"CPU", 1.5}}},
                                    {internal::resource_set{{{"TPU", 1}}}},
                                    {}});
  BOOST_TEST(res.infeasible.size() == 1u);
  BOOST_TEST((res.node == n));
  BOOST_TEST(res.total.to_string() == "CPU:4");
  BOOST_TEST(res.available.to_string() == "CPU:1.5");
  auto add = roundtrip(
      sys, protocol::add_node{
               n,
               internal::resource_set{{{"CPU", 4}}},
               a,
               {protocol::hosted_actor{actor_id{unique_id::random()}, 2, a}}});
  BOOST_TEST((add.node == n));
  BOOST_TEST(add.hosted.size() == 1u);
  BOOST_TEST(add.hosted[0].incarnation == 2);
  BOOST_TEST((add.hosted[0].host == a));
  BOOST_TEST(add.resources.to_string() == "CPU:4");
  BOOST_TEST((roundtrip(sys, protocol::node_added{n}).node == n));
  auto info =
      protocol::node_info{n, internal::resource_set{{{"GPU", 1}}}, a, false};
  auto infos = roundtrip(sys, std::vector<protocol::node_info>{info, info});
  BOOST_TEST(infos.size() == 2u);
  BOOST_TEST(!infos[1].alive);
  BOOST_TEST((roundtrip(sys, info).node == n));
  auto job = roundtrip(sys, protocol::start_job{w, "ns"});
  BOOST_TEST(job.ns == "ns");
  BOOST_TEST(roundtrip(sys, protocol::job_started{job_id{4}}).job.value == 4u);
  BOOST_TEST(roundtrip(sys, protocol::finish_job{job_id{4}}).job.value == 4u);
  roundtrip(sys, protocol::list_nodes{});
  caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
}

internal::actor_spec sample_actor_spec() {
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
  return spec;
}

BOOST_AUTO_TEST_CASE(actor_messages_roundtrip) {
  auto a = some_actor(sys);
  auto spec = sample_actor_spec();
  auto created = roundtrip(sys, protocol::create_actor{spec, a});
  BOOST_TEST((created.spec == spec));
  BOOST_TEST((created.owner == a));
  auto sub = roundtrip(sys, protocol::subscribe_actor{spec.id, a});
  BOOST_TEST((sub.actor == spec.id));
  auto update =
      roundtrip(sys, protocol::actor_update{
                         spec.id, internal::actor_state::dead, a, 2, 3,
                         internal::death_kind::out_of_restarts, "node died"});
  BOOST_TEST((update.state == internal::actor_state::dead));
  BOOST_TEST(update.incarnation == 2);
  BOOST_TEST((update.death_kind == internal::death_kind::out_of_restarts));
  BOOST_TEST(update.death_cause == "node died");
  auto lookup = roundtrip(sys, protocol::lookup_actor{"svc", "counter"});
  BOOST_TEST(lookup.name == "counter");
  auto found = roundtrip(sys, protocol::actor_found{true, spec.id, 77});
  BOOST_TEST(found.found);
  BOOST_TEST(found.class_tag == 77u);
  auto kill = roundtrip(sys, protocol::kill_actor{spec.id, false});
  BOOST_TEST(!kill.no_restart);
  BOOST_TEST(
      (roundtrip(sys, protocol::locate_actor{spec.id}).actor == spec.id));
  auto n = node_id{unique_id::random()};
  auto loc = roundtrip(sys, protocol::actor_location{true, n});
  BOOST_TEST((loc.node == n));
  auto host = roundtrip(sys, protocol::host_actor{spec, 4});
  BOOST_TEST((host.spec == spec));
  BOOST_TEST(host.incarnation == 4);
  auto started = roundtrip(sys, protocol::actor_started{spec.id, 1, a, n});
  BOOST_TEST((started.host == a));
  auto ended = roundtrip(
      sys,
      protocol::actor_ended{spec.id, 1, internal::death_kind::exited, "exit"});
  BOOST_TEST((ended.kind == internal::death_kind::exited));
  BOOST_TEST(ended.cause == "exit");
  caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_CASE(actor_call_messages_roundtrip) {
  auto a = some_actor(sys);
  auto spec = sample_spec();
  auto call = roundtrip(
      sys, protocol::actor_task{spec.id, "counter::add", spec.args, a});
  BOOST_TEST(call.method == "counter::add");
  BOOST_TEST((call.args == spec.args));
  protocol::actor_task_done done;
  done.actor = actor_id{unique_id::random()};
  done.task = spec.id;
  done.incarnation = 3;
  done.result = detail::encode(std::string{"ok"});
  done.error = sample_error();
  auto done2 = roundtrip(sys, done);
  BOOST_TEST((done2.actor == done.actor));
  BOOST_TEST((done2.result == done.result));
  auto other = done;
  other.task = task_id{worker_id{unique_id::random()}, 43};
  auto batch = roundtrip(sys, protocol::actor_tasks_done{done, other});
  BOOST_REQUIRE(batch.size() == 2u);
  BOOST_TEST((batch[0].task == done.task));
  BOOST_TEST((batch[1].task == other.task));
  BOOST_TEST((batch[1].result == done.result));
  auto resolve = roundtrip(
      sys, protocol::resolve_actor_call{done.actor, spec.id, spec.args});
  BOOST_TEST((resolve.args == spec.args));
  BOOST_TEST((roundtrip(sys, sample_error()) == sample_error()));
  caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_CASE(spillback_and_cluster_view_roundtrip) {
  auto a = some_actor(sys);
  auto n = node_id{unique_id::random()};
  auto spill = roundtrip(sys, protocol::lease_spillback{8, a, n});
  BOOST_TEST(spill.request_id == 8u);
  BOOST_TEST((spill.raylet == a));
  BOOST_TEST((spill.node == n));
  protocol::cluster_view view;
  view.nodes.push_back(
      protocol::node_info{n, internal::resource_set{{{"CPU", 2}}}, a, true});
  auto view2 = roundtrip(sys, view);
  BOOST_TEST(view2.nodes.size() == 1u);
  BOOST_TEST((view2.nodes[0].node == n));
  caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_CASE(gcs_restart_messages_roundtrip) {
  auto a = some_actor(sys);
  auto w = worker_id{unique_id::random()};
  auto x = actor_id{unique_id::random()};
  BOOST_TEST((roundtrip(sys, protocol::gcs_attach{a}).gcs == a));
  BOOST_TEST((roundtrip(sys, protocol::watch_gcs{a}).watcher == a));
  BOOST_TEST(roundtrip(sys, protocol::gcs_restarted{3}).generation == 3u);
  auto h = roundtrip(sys, protocol::hosted_actor{x, 5, a});
  BOOST_TEST((h.actor == x));
  BOOST_TEST(h.incarnation == 5);
  BOOST_TEST((h.host == a));
  auto hs = roundtrip(sys, std::vector<protocol::hosted_actor>{h, h});
  BOOST_TEST(hs.size() == 2u);
  auto re = roundtrip(sys, protocol::resubscribe_actors{w, a, {x, x}});
  BOOST_TEST((re.owner_id == w));
  BOOST_TEST((re.owner == a));
  BOOST_TEST(re.actors.size() == 2u);
  caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_CASE(kv_messages_roundtrip) {
  auto put = roundtrip(
      sys, protocol::kv_put{"ns", "k", std::string{"\0v", 2}, false, {}});
  BOOST_TEST(put.ns == "ns");
  BOOST_TEST(put.key == "k");
  BOOST_TEST(put.value == std::string("\0v", 2));
  BOOST_TEST(!put.overwrite);
  auto get = roundtrip(sys, protocol::kv_get{"ns", "k"});
  BOOST_TEST(get.key == "k");
  auto val = roundtrip(sys, protocol::kv_value{true, "v"});
  BOOST_TEST(val.found);
  BOOST_TEST(val.value == "v");
  BOOST_TEST(roundtrip(sys, protocol::kv_del{"ns", "k", {}}).key == "k");
  BOOST_TEST(roundtrip(sys, protocol::kv_keys{"ns", "p"}).prefix == "p");
}

// -- a sample of every message type -------------------------------------------

namespace {

/// Picks the `sample` overload of message type `T`.
template <class T>
struct type_tag {};

worker_id some_worker() {
  return worker_id{unique_id::random()};
}

node_id some_node() {
  return node_id{unique_id::random()};
}

actor_id some_actor_id() {
  return actor_id{unique_id::random()};
}

object_id some_object() {
  return object_id{sample_spec().id, 1};
}

detail::value some_value() {
  auto v = detail::encode(std::vector<char>(1000, 'x'));
  v.refs.push_back(detail::contained_ref{some_object(), some_worker()});
  return v;
}

internal::resource_set some_resources() {
  return internal::resource_set{{{"CPU", 4}, {"GPU", 0.5}}};
}

// One filled-in value of each registered message type, its fields set away
// from their defaults, so that a field the serializer drops changes the
// bytes. A type registered without one here fails to compile.

protocol::lease_request sample(type_tag<protocol::lease_request>,
                               const caf::actor& a) {
  return {.request_id = 5,
          .job = job_id{3},
          .resources = some_resources(),
          .owner = a,
          .affinity = some_node(),
          .affinity_soft = true};
}

protocol::lease_grant sample(type_tag<protocol::lease_grant>,
                             const caf::actor& a) {
  return {.request_id = 5,
          .lease_id = 6,
          .worker = some_worker(),
          .worker_handle = a,
          .node = some_node(),
          .raylet = a};
}

protocol::lease_return sample(type_tag<protocol::lease_return>,
                              const caf::actor&) {
  return {.lease_id = 6};
}

protocol::worker_lost sample(type_tag<protocol::worker_lost>,
                             const caf::actor&) {
  return {.lease_id = 6, .worker = some_worker(), .reason = "killed"};
}

protocol::push_task sample(type_tag<protocol::push_task>, const caf::actor& a) {
  return {.spec = sample_spec(), .lease_id = 9, .reply_to = a};
}

protocol::task_done sample(type_tag<protocol::task_done>, const caf::actor& a) {
  return {.task = sample_spec().id,
          .attempt = 3,
          .lease_id = 11,
          .worker = some_worker(),
          .ok = true,
          .result = some_value(),
          .error = sample_error(),
          .run_ns = 1234,
          .stored_at = some_node(),
          .store = a,
          .store_contact = "127.0.0.1:40123"};
}

protocol::submit_task sample(type_tag<protocol::submit_task>,
                             const caf::actor&) {
  return {.spec = sample_spec(), .held = {some_object(), some_object()}};
}

protocol::fetch_object sample(type_tag<protocol::fetch_object>,
                              const caf::actor&) {
  return {.id = some_object(), .owner = some_worker()};
}

protocol::register_borrowers sample(type_tag<protocol::register_borrowers>,
                                    const caf::actor& a) {
  return {.refs = some_value().refs, .borrower = some_worker(), .handle = a};
}

protocol::object_request sample(type_tag<protocol::object_request>,
                                const caf::actor& a) {
  return {.id = some_object(), .requester = a};
}

protocol::add_borrower sample(type_tag<protocol::add_borrower>,
                              const caf::actor& a) {
  return {.id = some_object(), .borrower = some_worker(), .handle = a, .n = 2};
}

protocol::remove_borrower sample(type_tag<protocol::remove_borrower>,
                                 const caf::actor&) {
  return {.id = some_object(), .borrower = some_worker(), .n = 3};
}

protocol::object_reply sample(type_tag<protocol::object_reply>,
                              const caf::actor& a) {
  return {.id = some_object(),
          .ok = true,
          .result = some_value(),
          .error = sample_error(),
          .copies = {protocol::stored_copy{a, "127.0.0.1:4242",
                                           node_id{unique_id{5, 6}}}},
          .attempt = 1};
}

protocol::copy_kept sample(type_tag<protocol::copy_kept>, const caf::actor& a) {
  return {.id = some_object(),
          .attempt = 2,
          .copy = {a, "127.0.0.1:4243", node_id{unique_id{7, 8}}}};
}

protocol::worker_blocked sample(type_tag<protocol::worker_blocked>,
                                const caf::actor&) {
  return {.worker = some_worker()};
}

protocol::worker_unblocked sample(type_tag<protocol::worker_unblocked>,
                                  const caf::actor&) {
  return {.worker = some_worker()};
}

protocol::kill_worker sample(type_tag<protocol::kill_worker>,
                             const caf::actor&) {
  return {.worker = some_worker()};
}

protocol::worker_hello sample(type_tag<protocol::worker_hello>,
                              const caf::actor&) {
  return {.token = "0123456789abcdef", .pid = 4242};
}

protocol::worker_welcome sample(type_tag<protocol::worker_welcome>,
                                const caf::actor& a) {
  return {.worker = some_worker(),
          .node = some_node(),
          .job = job_id{7},
          .raylet = a,
          .gcs = a,
          .max_inline_bytes = 102400};
}

protocol::worker_ready sample(type_tag<protocol::worker_ready>,
                              const caf::actor& a) {
  return {.token = "fedcba9876543210", .handle = a};
}

protocol::worker_exited sample(type_tag<protocol::worker_exited>,
                               const caf::actor&) {
  return {.worker = some_worker(),
          .pid = 4243,
          .how = "was killed by signal 11 (SIGSEGV)"};
}

protocol::worker_launched sample(type_tag<protocol::worker_launched>,
                                 const caf::actor&) {
  return {.worker = some_worker(),
          .pid = 4244,
          .forked = true,
          .error = "cannot start worker process 'x': No such file"};
}

protocol::check_worker_process sample(type_tag<protocol::check_worker_process>,
                                      const caf::actor&) {
  return {.worker = some_worker()};
}

protocol::gate_target sample(type_tag<protocol::gate_target>,
                             const caf::actor& a) {
  return {.raylet = a};
}

protocol::count_workers sample(type_tag<protocol::count_workers>,
                               const caf::actor&) {
  return {.unused = 1};
}

protocol::query_resources sample(type_tag<protocol::query_resources>,
                                 const caf::actor&) {
  return {.unused = 1};
}

protocol::node_resources sample(type_tag<protocol::node_resources>,
                                const caf::actor&) {
  return {.node = some_node(),
          .total = some_resources(),
          .available = internal::resource_set{{{"CPU", 1.5}}},
          .infeasible = {internal::resource_set{{{"TPU", 1}}}},
          .waiting = {some_resources()}};
}

protocol::query_task sample(type_tag<protocol::query_task>, const caf::actor&) {
  return {.task = sample_spec().id};
}

protocol::query_copies sample(type_tag<protocol::query_copies>,
                              const caf::actor&) {
  return {.id = some_object()};
}

protocol::lease_refused sample(type_tag<protocol::lease_refused>,
                               const caf::actor&) {
  return {.request_id = 7, .error = sample_error()};
}

protocol::hosted_actor sample(type_tag<protocol::hosted_actor>,
                              const caf::actor& a) {
  return {.actor = some_actor_id(), .incarnation = 5, .host = a};
}

std::vector<protocol::hosted_actor>
sample(type_tag<std::vector<protocol::hosted_actor>>, const caf::actor& a) {
  return {sample(type_tag<protocol::hosted_actor>{}, a),
          sample(type_tag<protocol::hosted_actor>{}, a)};
}

protocol::add_node sample(type_tag<protocol::add_node>, const caf::actor& a) {
  return {.node = some_node(),
          .resources = some_resources(),
          .raylet = a,
          .hosted = sample(type_tag<std::vector<protocol::hosted_actor>>{}, a)};
}

protocol::node_added sample(type_tag<protocol::node_added>, const caf::actor&) {
  return {.node = some_node()};
}

protocol::node_info sample(type_tag<protocol::node_info>, const caf::actor& a) {
  return {.node = some_node(),
          .resources = some_resources(),
          .raylet = a,
          .alive = false};
}

std::vector<protocol::node_info>
sample(type_tag<std::vector<protocol::node_info>>, const caf::actor& a) {
  return {sample(type_tag<protocol::node_info>{}, a),
          sample(type_tag<protocol::node_info>{}, a)};
}

protocol::job_program sample(type_tag<protocol::job_program>,
                             const caf::actor&) {
  return {.path = "/opt/app/driver",
          .argv = {"driver", "--flag"},
          .sha256 = std::string(64, 'a'),
          .size = 123456};
}

protocol::start_job sample(type_tag<protocol::start_job>, const caf::actor& a) {
  return {.driver = some_worker(),
          .ns = "ns",
          .program = sample(type_tag<protocol::job_program>{}, a)};
}

protocol::get_job_program sample(type_tag<protocol::get_job_program>,
                                 const caf::actor&) {
  return {.job = job_id{6}};
}

protocol::offer_program sample(type_tag<protocol::offer_program>,
                               const caf::actor&) {
  return {.sha256 = std::string(64, 'b'), .size = 7 << 20};
}

protocol::program_part sample(type_tag<protocol::program_part>,
                              const caf::actor&) {
  return {.sha256 = std::string(64, 'b'),
          .offset = 1 << 20,
          .bytes = std::string(4096, '\x7f')};
}

protocol::read_program sample(type_tag<protocol::read_program>,
                              const caf::actor&) {
  return {.sha256 = std::string(64, 'b'), .offset = 3, .max_bytes = 1 << 20};
}

protocol::program_bytes sample(type_tag<protocol::program_bytes>,
                               const caf::actor&) {
  return {.ok = true,
          .pending = false,
          .error = "no copy",
          .total = 7 << 20,
          .offset = 1 << 20,
          .bytes = std::string(512, '\0')};
}

protocol::program_checked sample(type_tag<protocol::program_checked>,
                                 const caf::actor& a) {
  return {.job = job_id{6},
          .program = sample(type_tag<protocol::job_program>{}, a),
          .error = "its SHA-256 differs"};
}

protocol::job_started sample(type_tag<protocol::job_started>,
                             const caf::actor&) {
  return {.job = job_id{4}};
}

protocol::finish_job sample(type_tag<protocol::finish_job>, const caf::actor&) {
  return {.job = job_id{4}};
}

protocol::list_nodes sample(type_tag<protocol::list_nodes>, const caf::actor&) {
  return {.unused = 1};
}

protocol::resolve_actor_call sample(type_tag<protocol::resolve_actor_call>,
                                    const caf::actor&) {
  auto spec = sample_spec();
  return {.actor = some_actor_id(), .task = spec.id, .args = spec.args};
}

protocol::create_actor sample(type_tag<protocol::create_actor>,
                              const caf::actor& a) {
  return {.spec = sample_actor_spec(), .owner = a};
}

protocol::subscribe_actor sample(type_tag<protocol::subscribe_actor>,
                                 const caf::actor& a) {
  return {.actor = some_actor_id(), .subscriber = a};
}

protocol::actor_update sample(type_tag<protocol::actor_update>,
                              const caf::actor& a) {
  return {.actor = some_actor_id(),
          .state = internal::actor_state::restarting,
          .host = a,
          .incarnation = 2,
          .max_task_retries = 3,
          .death_kind = internal::death_kind::out_of_restarts,
          .death_cause = "node died"};
}

protocol::lookup_actor sample(type_tag<protocol::lookup_actor>,
                              const caf::actor&) {
  return {.ns = "svc", .name = "counter"};
}

protocol::actor_found sample(type_tag<protocol::actor_found>,
                             const caf::actor&) {
  return {.found = true, .actor = some_actor_id(), .class_tag = 77};
}

protocol::kill_actor sample(type_tag<protocol::kill_actor>, const caf::actor&) {
  return {.actor = some_actor_id(), .no_restart = false};
}

protocol::locate_actor sample(type_tag<protocol::locate_actor>,
                              const caf::actor&) {
  return {.actor = some_actor_id()};
}

protocol::actor_location sample(type_tag<protocol::actor_location>,
                                const caf::actor&) {
  return {.alive = true, .node = some_node()};
}

protocol::host_actor sample(type_tag<protocol::host_actor>, const caf::actor&) {
  return {.spec = sample_actor_spec(), .incarnation = 4};
}

protocol::actor_started sample(type_tag<protocol::actor_started>,
                               const caf::actor& a) {
  return {.actor = some_actor_id(),
          .incarnation = 1,
          .host = a,
          .node = some_node()};
}

protocol::actor_instance_lost sample(type_tag<protocol::actor_instance_lost>,
                                     const caf::actor&) {
  return {.actor = some_actor_id(),
          .incarnation = 2,
          .why = "its process (pid 77) was killed by signal 9 (SIGKILL)"};
}

protocol::actor_ended sample(type_tag<protocol::actor_ended>,
                             const caf::actor&) {
  return {.actor = some_actor_id(),
          .incarnation = 1,
          .kind = internal::death_kind::constructor_failed,
          .cause = "exit"};
}

protocol::actor_task sample(type_tag<protocol::actor_task>,
                            const caf::actor& a) {
  auto spec = sample_spec();
  return {.task = spec.id,
          .method = "counter::add",
          .args = spec.args,
          .reply_to = a};
}

protocol::actor_task_done sample(type_tag<protocol::actor_task_done>,
                                 const caf::actor&) {
  return {.actor = some_actor_id(),
          .task = sample_spec().id,
          .incarnation = 3,
          .ok = true,
          .result = some_value(),
          .error = sample_error()};
}

protocol::actor_tasks_done sample(type_tag<protocol::actor_tasks_done>,
                                  const caf::actor& a) {
  return {sample(type_tag<protocol::actor_task_done>{}, a),
          sample(type_tag<protocol::actor_task_done>{}, a)};
}

detail::error_info sample(type_tag<detail::error_info>, const caf::actor&) {
  return sample_error();
}

protocol::lease_spillback sample(type_tag<protocol::lease_spillback>,
                                 const caf::actor& a) {
  return {.request_id = 8, .raylet = a, .node = some_node()};
}

protocol::cluster_view sample(type_tag<protocol::cluster_view>,
                              const caf::actor& a) {
  return {.nodes = sample(type_tag<std::vector<protocol::node_info>>{}, a)};
}

protocol::gcs_attach sample(type_tag<protocol::gcs_attach>,
                            const caf::actor& a) {
  return {.gcs = a};
}

protocol::enter_cluster sample(type_tag<protocol::enter_cluster>,
                               const caf::actor&) {
  return {.token = std::string(64, 'a'),
          .role = "driver",
          .contact = "10.0.0.6:41000"};
}

protocol::watch_gcs sample(type_tag<protocol::watch_gcs>, const caf::actor& a) {
  return {.watcher = a};
}

protocol::gcs_restarted sample(type_tag<protocol::gcs_restarted>,
                               const caf::actor&) {
  return {.generation = 3};
}

protocol::resubscribe_actors sample(type_tag<protocol::resubscribe_actors>,
                                    const caf::actor& a) {
  return {.owner_id = some_worker(),
          .owner = a,
          .actors = {some_actor_id(), some_actor_id()}};
}

protocol::kv_put sample(type_tag<protocol::kv_put>, const caf::actor&) {
  return {.ns = "ns",
          .key = "k",
          .value = std::string{"\0v", 2},
          .overwrite = false,
          .request = {.client = unique_id::random(), .seq = 3}};
}

protocol::kv_get sample(type_tag<protocol::kv_get>, const caf::actor&) {
  return {.ns = "ns", .key = "k"};
}

protocol::kv_value sample(type_tag<protocol::kv_value>, const caf::actor&) {
  return {.found = true, .value = "v"};
}

protocol::kv_del sample(type_tag<protocol::kv_del>, const caf::actor&) {
  return {.ns = "ns",
          .key = "k",
          .request = {.client = unique_id::random(), .seq = 4}};
}

protocol::kv_keys sample(type_tag<protocol::kv_keys>, const caf::actor&) {
  return {.ns = "ns", .prefix = "p"};
}

protocol::lineage_put sample(type_tag<protocol::lineage_put>,
                             const caf::actor&) {
  return {.object = object_id{sample_spec().id, 1},
          .job = job_id{3},
          .task_spec = std::string("spec\0bytes", 10)};
}

protocol::lineage_del sample(type_tag<protocol::lineage_del>,
                             const caf::actor&) {
  return {.object = object_id{sample_spec().id, 2}};
}

protocol::lineage_get sample(type_tag<protocol::lineage_get>,
                             const caf::actor&) {
  return {.object = object_id{sample_spec().id, 3}};
}

protocol::lineage_value sample(type_tag<protocol::lineage_value>,
                               const caf::actor&) {
  return {.found = true, .task_spec = "spec"};
}

protocol::count_lineage sample(type_tag<protocol::count_lineage>,
                               const caf::actor&) {
  return {};
}

protocol::seal_result sample(type_tag<protocol::seal_result>,
                             const caf::actor& a) {
  return {.done = sample(type_tag<protocol::task_done>{}, a), .reply_to = a};
}

protocol::store_object sample(type_tag<protocol::store_object>,
                              const caf::actor&) {
  return {.id = some_object(), .value = some_value(), .attempt = 2};
}

protocol::pull_object sample(type_tag<protocol::pull_object>,
                             const caf::actor&) {
  return {.id = some_object(), .offset = 4 << 20, .max_bytes = 4 << 20};
}

protocol::object_chunk sample(type_tag<protocol::object_chunk>,
                              const caf::actor&) {
  return {.id = some_object(),
          .ok = true,
          .error = sample_error(),
          .total = 9 << 20,
          .offset = 0,
          .part = some_value()};
}

protocol::free_object sample(type_tag<protocol::free_object>,
                             const caf::actor&) {
  return {.id = some_object(), .attempt = 4};
}

// No fields.
protocol::drop_objects sample(type_tag<protocol::drop_objects>,
                              const caf::actor&) {
  return {};
}

// No fields.
protocol::count_objects sample(type_tag<protocol::count_objects>,
                               const caf::actor&) {
  return {};
}

protocol::object_store_usage sample(type_tag<protocol::object_store_usage>,
                                    const caf::actor&) {
  return {.objects = 3, .bytes = 4096};
}

protocol::read_object sample(type_tag<protocol::read_object>,
                             const caf::actor&) {
  return {.id = some_object()};
}

protocol::put_object sample(type_tag<protocol::put_object>, const caf::actor&) {
  return {.id = some_object(), .value = some_value()};
}

protocol::object_freed sample(type_tag<protocol::object_freed>,
                              const caf::actor&) {
  return {.id = some_object()};
}

protocol::adopt_object sample(type_tag<protocol::adopt_object>,
                              const caf::actor& a) {
  return {.id = some_object(), .owner = some_worker(), .requester = a};
}

protocol::which_children sample(type_tag<protocol::which_children>,
                                const caf::actor&) {
  return {.unused = 1};
}

protocol::start_child sample(type_tag<protocol::start_child>,
                             const caf::actor&) {
  return {.id = "worker-1"};
}

protocol::terminate_child sample(type_tag<protocol::terminate_child>,
                                 const caf::actor&) {
  return {.id = "worker-1"};
}

protocol::delete_child sample(type_tag<protocol::delete_child>,
                              const caf::actor&) {
  return {.id = "worker-1"};
}

protocol::await_started sample(type_tag<protocol::await_started>,
                               const caf::actor&) {
  return {.unused = 1};
}

child_info sample(type_tag<child_info>, const caf::actor&) {
  return {.id = "worker-1",
          .running = true,
          .restart = restart_type::transient,
          .restarts = 2};
}

std::vector<child_info> sample(type_tag<std::vector<child_info>>,
                               const caf::actor& a) {
  return {sample(type_tag<child_info>{}, a), sample(type_tag<child_info>{}, a)};
}

protocol::node_refused sample(type_tag<protocol::node_refused>,
                              const caf::actor&) {
  return {.node = some_node(), .reason = "declared dead"};
}

protocol::query_summary sample(type_tag<protocol::query_summary>,
                               const caf::actor&) {
  return {.unused = 1};
}

protocol::cluster_summary sample(type_tag<protocol::cluster_summary>,
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
bool readable(caf::actor_system& sys, const std::vector<char>& bytes) {
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

} // namespace

// The samples come from the list that registration walks, so a message type
// cannot be registered without one.
BOOST_AUTO_TEST_CASE(every_registered_message_type_roundtrips_its_sample) {
  auto a = some_actor(sys);
  roundtrip_samples(sys, a, protocol::message_types{});
  caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
}

// Processes tell types apart by name: two types under one name would be
// read as each other.
BOOST_AUTO_TEST_CASE(message_type_names_are_unique) {
  auto names = names_of(protocol::message_types{});
  std::sort(names.begin(), names.end());
  auto twice = std::adjacent_find(names.begin(), names.end());
  auto name = twice == names.end() ? std::string{} : *twice;
  BOOST_TEST(name.empty(), "registered twice: " << name);
}

// A truncated message is refused, never a crash: CAF 0.17 reports an error or
// yields an empty message (which every Prism actor's default handler logs and
// drops), but never a partly filled one.
BOOST_AUTO_TEST_CASE(truncated_message_is_refused) {
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  auto msg = caf::make_message(protocol::submit_task{sample_spec(), {}});
  BOOST_REQUIRE(!sink(msg));
  for (std::size_t cut : {buf.size() / 2, buf.size() - 1}) {
    std::vector<char> part(buf.begin(), buf.begin() + cut);
    caf::message copy;
    caf::binary_deserializer source{sys, part};
    auto err = source(copy);
    BOOST_TEST((static_cast<bool>(err) || copy.empty()));
  }
}

// Bytes from another process may be cut short or damaged: every prefix of
// every message type's sample is refused, and damaged copies are read or
// refused, never a crash (the sanitizers watch this test).
BOOST_AUTO_TEST_CASE(damaged_bytes_of_every_message_type_are_refused_or_read) {
  auto a = some_actor(sys);
  read_damaged_samples(sys, a, protocol::message_types{});
  caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_SUITE_END()
