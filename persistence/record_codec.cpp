#include "record_codec.hpp"

#include <limits>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "records.pb.h"

namespace prism::persistence::codec {

namespace {

void to_pb(const unique_id& id, pb::UniqueId* out) {
  out->set_hi(id.hi);
  out->set_lo(id.lo);
}

template <class Id>
Id from_pb(const pb::UniqueId& id) {
  Id out;
  out.hi = id.hi();
  out.lo = id.lo();
  return out;
}

template <class Message>
std::string serialize(Message& m) {
  m.set_seal(record_seal);
  std::string out;
  m.SerializeToString(&out);
  return out;
}

/// A message of type `Message` for this thread to decode into, cleared:
/// reusing it keeps its allocations, which makes recovery of many records
/// markedly faster.
template <class Message>
Message& scratch() {
  thread_local Message m;
  m.Clear();
  return m;
}

/// Parses `bytes` into `m` and checks its seal; on failure says why.
template <class Message>
bool parse(std::string_view bytes, Message& m, std::string& why) {
  if (bytes.size() >
          static_cast<std::size_t>(std::numeric_limits<int>::max()) ||
      !m.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    why = "undecodable record (" + std::to_string(bytes.size()) + " bytes)";
    return false;
  }
  if (m.seal() != record_seal) {
    why = "record cut short (no seal)";
    return false;
  }
  return true;
}

pb::ActorState to_pb(actor_state s) {
  switch (s) {
  case actor_state::pending:
    return pb::ACTOR_STATE_PENDING;
  case actor_state::alive:
    return pb::ACTOR_STATE_ALIVE;
  case actor_state::restarting:
    return pb::ACTOR_STATE_RESTARTING;
  case actor_state::dead:
    return pb::ACTOR_STATE_DEAD;
  }
  return pb::ACTOR_STATE_UNSPECIFIED;
}

pb::DeathKind to_pb(death_kind k) {
  switch (k) {
  case death_kind::none:
    return pb::DEATH_KIND_UNSPECIFIED;
  case death_kind::exited:
    return pb::DEATH_KIND_EXITED;
  case death_kind::killed:
    return pb::DEATH_KIND_KILLED;
  case death_kind::constructor_failed:
    return pb::DEATH_KIND_CONSTRUCTOR_FAILED;
  case death_kind::out_of_restarts:
    return pb::DEATH_KIND_OUT_OF_RESTARTS;
  case death_kind::owner_died:
    return pb::DEATH_KIND_OWNER_DIED;
  case death_kind::job_ended:
    return pb::DEATH_KIND_JOB_ENDED;
  case death_kind::lost:
    return pb::DEATH_KIND_LOST;
  }
  return pb::DEATH_KIND_UNSPECIFIED;
}

// A kind this build does not know reads as `none`: the cause still says why.
death_kind from_pb(pb::DeathKind k) {
  switch (k) {
  case pb::DEATH_KIND_EXITED:
    return death_kind::exited;
  case pb::DEATH_KIND_KILLED:
    return death_kind::killed;
  case pb::DEATH_KIND_CONSTRUCTOR_FAILED:
    return death_kind::constructor_failed;
  case pb::DEATH_KIND_OUT_OF_RESTARTS:
    return death_kind::out_of_restarts;
  case pb::DEATH_KIND_OWNER_DIED:
    return death_kind::owner_died;
  case pb::DEATH_KIND_JOB_ENDED:
    return death_kind::job_ended;
  case pb::DEATH_KIND_LOST:
    return death_kind::lost;
  default:
    return death_kind::none;
  }
}

} // namespace

std::string encode(const job_record& r) {
  pb::JobRecord m;
  m.set_job_id(r.job.value);
  to_pb(r.driver, m.mutable_driver());
  m.set_ns(r.ns);
  m.set_finished(r.finished);
  m.set_start_ms(r.start_ms);
  m.set_program_path(r.program_path);
  for (const auto& arg : r.program_args)
    m.add_program_args(arg);
  m.set_program_sha256(r.program_sha256);
  m.set_program_size(r.program_size);
  return serialize(m);
}

std::string encode(const node_record& r) {
  pb::NodeRecord m;
  to_pb(r.node, m.mutable_node_id());
  for (const auto& [name, quantity] : r.resources) {
    auto* res = m.add_resources();
    res->set_name(name);
    res->set_quantity(quantity);
  }
  m.set_alive(r.alive);
  return serialize(m);
}

std::string encode(const actor_record& r) {
  // Written twice for each actor created: the reused message keeps its ids'
  // and strings' allocations.
  auto& m = scratch<pb::ActorRecord>();
  to_pb(r.actor, m.mutable_actor_id());
  m.set_job_id(r.job.value);
  m.set_name(r.name);
  m.set_ns(r.ns);
  m.set_detached(r.detached);
  m.set_max_restarts(r.max_restarts);
  m.set_num_restarts(r.num_restarts);
  m.set_state(to_pb(r.state));
  m.set_death_cause(r.death_cause);
  m.set_death_kind(to_pb(r.death_kind));
  to_pb(r.node, m.mutable_node_id());
  to_pb(r.owner, m.mutable_owner());
  m.set_creation_spec(r.creation_spec);
  for (const auto& x : r.restarts) {
    auto* note = m.add_restarts();
    note->set_restart(x.restart);
    note->set_unix_ms(x.unix_ms);
    to_pb(x.node, note->mutable_node_id());
    note->set_cause(x.cause);
  }
  return serialize(m);
}

std::string encode_named_actor(actor_id id) {
  pb::NamedActorEntry m;
  to_pb(id, m.mutable_actor_id());
  return serialize(m);
}

std::string encode_actor_started(node_id node) {
  // Written field by field: protobuf's own encoder leaves out fields that
  // are zero, and the operand must replace both halves of the node id.
  using google::protobuf::io::CodedOutputStream;
  using google::protobuf::io::StringOutputStream;
  constexpr std::uint32_t varint = 0, fixed64 = 1, length = 2, fixed32 = 5;
  auto tag = [](int field, std::uint32_t wire_type) {
    return (static_cast<std::uint32_t>(field) << 3) | wire_type;
  };
  std::string out;
  {
    StringOutputStream stream{&out};
    CodedOutputStream o{&stream};
    o.WriteTag(tag(pb::ActorRecord::kStateFieldNumber, varint));
    o.WriteVarint32(pb::ACTOR_STATE_ALIVE);
    o.WriteTag(tag(pb::ActorRecord::kNodeIdFieldNumber, length));
    o.WriteVarint32(2 * (1 + 8));
    o.WriteTag(tag(pb::UniqueId::kHiFieldNumber, fixed64));
    o.WriteLittleEndian64(node.hi);
    o.WriteTag(tag(pb::UniqueId::kLoFieldNumber, fixed64));
    o.WriteLittleEndian64(node.lo);
    o.WriteTag(tag(pb::ActorRecord::kSealFieldNumber, fixed32));
    o.WriteLittleEndian32(record_seal);
  }
  return out;
}

decoded decode(std::string_view bytes, job_record& out, std::string& why) {
  auto& m = scratch<pb::JobRecord>();
  if (!parse(bytes, m, why))
    return decoded::malformed;
  out.job.value = m.job_id();
  out.driver = from_pb<worker_id>(m.driver());
  out.ns = m.ns();
  out.finished = m.finished();
  out.start_ms = m.start_ms();
  out.program_path = m.program_path();
  out.program_args.assign(m.program_args().begin(), m.program_args().end());
  out.program_sha256 = m.program_sha256();
  out.program_size = m.program_size();
  return decoded::ok;
}

decoded decode(std::string_view bytes, node_record& out, std::string& why) {
  auto& m = scratch<pb::NodeRecord>();
  if (!parse(bytes, m, why))
    return decoded::malformed;
  out.node = from_pb<node_id>(m.node_id());
  out.resources.clear();
  for (const auto& res : m.resources())
    out.resources[res.name()] = res.quantity();
  out.alive = m.alive();
  return decoded::ok;
}

decoded decode(std::string_view bytes, actor_record& out, std::string& why) {
  auto& m = scratch<pb::ActorRecord>();
  if (!parse(bytes, m, why))
    return decoded::malformed;
  out.actor = from_pb<actor_id>(m.actor_id());
  out.job.value = m.job_id();
  out.name = m.name();
  out.ns = m.ns();
  out.detached = m.detached();
  out.max_restarts = m.max_restarts();
  out.num_restarts = m.num_restarts();
  out.death_cause = m.death_cause();
  out.death_kind = from_pb(m.death_kind());
  out.node = from_pb<node_id>(m.node_id());
  out.owner = from_pb<worker_id>(m.owner());
  out.creation_spec = m.creation_spec();
  out.restarts.clear();
  for (const auto& x : m.restarts())
    out.restarts.push_back(restart_record{
        x.restart(), x.unix_ms(), from_pb<node_id>(x.node_id()), x.cause()});
  switch (m.state()) {
  case pb::ACTOR_STATE_PENDING:
    out.state = actor_state::pending;
    return decoded::ok;
  case pb::ACTOR_STATE_ALIVE:
    out.state = actor_state::alive;
    return decoded::ok;
  case pb::ACTOR_STATE_RESTARTING:
    out.state = actor_state::restarting;
    return decoded::ok;
  case pb::ACTOR_STATE_DEAD:
    out.state = actor_state::dead;
    return decoded::ok;
  default:
    why =
        "actor in unknown state " + std::to_string(m.state()) + " marked dead";
    out.state = actor_state::dead;
    out.death_cause = "the control store held the actor in an unknown state";
    out.death_kind = death_kind::lost;
    return decoded::repaired;
  }
}

decoded decode_named_actor(std::string_view bytes, actor_id& out,
                           std::string& why) {
  auto& m = scratch<pb::NamedActorEntry>();
  if (!parse(bytes, m, why))
    return decoded::malformed;
  out = from_pb<actor_id>(m.actor_id());
  return decoded::ok;
}

std::string encode(const lineage_record& r) {
  auto& m = scratch<pb::LineageRecord>();
  to_pb(r.object.task.submitter, m.mutable_submitter());
  m.set_task_seq(r.object.task.seq);
  m.set_index(r.object.index);
  m.set_job_id(r.job.value);
  m.set_task_spec(r.task_spec);
  return serialize(m);
}

decoded decode(std::string_view bytes, lineage_record& out, std::string& why) {
  auto& m = scratch<pb::LineageRecord>();
  if (!parse(bytes, m, why))
    return decoded::malformed;
  out.object.task.submitter = from_pb<worker_id>(m.submitter());
  out.object.task.seq = m.task_seq();
  out.object.index = m.index();
  out.job.value = m.job_id();
  out.task_spec = m.task_spec();
  return decoded::ok;
}

} // namespace prism::persistence::codec
