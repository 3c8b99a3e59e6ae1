#include "gcs/gcs.hpp"

#include <chrono>
#include <deque>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include <caf/all.hpp>

#include "common/default_handlers.hpp"
#include "common/log.hpp"
#include "gcs/gcs_storage.hpp"
#include "prism/detail/value.hpp"
#include "protocol/gcs_raylet_actors.hpp"
#include "protocol/gcs_restart.hpp"
#include "protocol/kv.hpp"
#include "protocol/lineage.hpp"
#include "protocol/owner_gcs.hpp"
#include "protocol/raylet_gcs.hpp"
#include "protocol/testing.hpp"

namespace prism::actors {

namespace {

using internal::actor_state;

using committed_atom = caf::atom_constant<caf::atom("committed")>;
using grace_atom = caf::atom_constant<caf::atom("grace_end")>;
using forget_atom = caf::atom_constant<caf::atom("forget")>;

struct job_entry {
  worker_id driver;
  std::string ns;
  bool running = true;
  std::int64_t start_ms = 0;
};

struct node_entry {
  protocol::node_info info;
  /// What actors may still reserve on the node.
  internal::resource_set actor_available;
  std::size_t num_actors = 0;
  /// Alive before the control store restarted, and not registered since.
  bool awaited = false;
};

struct actor_entry {
  internal::actor_spec spec;
  actor_state state = actor_state::pending;
  caf::actor host;
  /// The node the actor lives on or is being started on.
  node_id node;
  bool placed = false;
  std::int32_t incarnation = 0;
  internal::death_kind death_kind = internal::death_kind::none;
  std::string death_cause;
  std::vector<caf::actor> subscribers;
  /// The spec as stored: encoded once, written with every change.
  std::string spec_bytes;
  /// Recovered from storage and not yet found alive or lost: no update is
  /// published for it meanwhile, so that its callers carry on undisturbed.
  bool recovering = false;
};

/// A reply held until the writes before it are durable.
struct held_reply {
  std::uint64_t after = 0;
  caf::response_promise promise;
  caf::message reply;
};

/// A message that tells others of a change (an actor's new state, where to
/// host it), held until that change is durable.
struct held_send {
  std::uint64_t after = 0;
  caf::actor to;
  caf::message content;
};

struct gcs_state {
  static inline const char* name = "gcs";

  std::shared_ptr<spdlog::logger> log;
  std::unordered_map<node_id, node_entry> nodes;
  std::unordered_map<job_id, job_entry> jobs;
  std::uint32_t next_job = 1;

  std::unordered_map<actor_id, actor_entry> actors;
  std::map<std::pair<std::string, std::string>, actor_id> named;
  std::unordered_map<caf::actor_addr, actor_id> by_host;
  /// Non-detached actors by the owner they share fate with.
  std::unordered_map<caf::actor_addr, std::vector<actor_id>> by_owner;
  /// Actors no node can host now, placed when one can.
  std::vector<actor_id> unplaced;
  /// Dead actors, those that died first in front; past `max_dead` the first
  /// are forgotten.
  std::deque<actor_id> dead;
  std::size_t max_dead = 100000;
  bool forget_scheduled = false;

  // -- storage ----------------------------------------------------------------
  std::shared_ptr<gcs_storage> storage;
  /// Every change numbered up to this one is durable.
  std::uint64_t committed = 0;
  std::deque<held_reply> held;
  /// Messages held until the changes before them are durable, in order.
  std::deque<held_send> held_sends;
  /// The user key-value table, by namespace and key.
  std::map<std::pair<std::string, std::string>, std::string> kv;
  /// Durable lineage by object (a table of its own, which no user key
  /// reaches), and each job's objects, so that a job's end drops its
  /// records without a scan of them all.
  std::unordered_map<object_id, persistence::lineage_record> lineage;
  std::unordered_map<job_id, std::unordered_set<object_id>> lineage_by_job;
  /// The answers of client writes applied lately, by request id, so that a
  /// write that arrives again is answered alike, not applied twice.
  std::map<protocol::request_id, bool> applied;
  /// Their ids by the order they were applied in, oldest first.
  std::deque<std::pair<std::uint64_t, protocol::request_id>> applied_order;
  std::uint64_t next_applied = 1;

  // -- recovery after a restart
  // ------------------------------------------------
  bool recovering = false;
  std::size_t awaited_nodes = 0;
  /// Non-detached actors whose owner has not reported back yet.
  std::unordered_set<actor_id> unclaimed;

  gcs_state() = default;
  gcs_state(const gcs_state&) = delete;
  gcs_state& operator=(const gcs_state&) = delete;

  ~gcs_state() {
    // Dying (a crash, or the cluster stopping) before these changes were
    // durable: their requesters ask again, of the next control store.
    for (auto& h : held)
      h.promise.deliver(caf::make_error(caf::sec::request_receiver_down));
  }
};

using gcs_actor = caf::stateful_actor<gcs_state>;

// -- storage ------------------------------------------------------------------

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

persistence::actor_state to_record(actor_state s) {
  switch (s) {
  case actor_state::pending:
    return persistence::actor_state::pending;
  case actor_state::alive:
    return persistence::actor_state::alive;
  case actor_state::restarting:
    return persistence::actor_state::restarting;
  case actor_state::dead:
    return persistence::actor_state::dead;
  }
  return persistence::actor_state::dead;
}

actor_state from_record(persistence::actor_state s) {
  switch (s) {
  case persistence::actor_state::pending:
    return actor_state::pending;
  case persistence::actor_state::alive:
    return actor_state::alive;
  case persistence::actor_state::restarting:
    return actor_state::restarting;
  case persistence::actor_state::dead:
    return actor_state::dead;
  }
  return actor_state::dead;
}

// The two enums list the same kinds in the same order, so a cast converts:
// every kind is checked, not just the last.
static_assert([] {
  using p = persistence::death_kind;
  using i = internal::death_kind;
  auto same = [](p a, i b) {
    return static_cast<int>(a) == static_cast<int>(b);
  };
  return same(p::none, i::none) && same(p::exited, i::exited) &&
         same(p::killed, i::killed) &&
         same(p::constructor_failed, i::constructor_failed) &&
         same(p::out_of_restarts, i::out_of_restarts) &&
         same(p::owner_died, i::owner_died) &&
         same(p::job_ended, i::job_ended) && same(p::lost, i::lost);
}());

persistence::death_kind to_record(internal::death_kind k) {
  return static_cast<persistence::death_kind>(k);
}

internal::death_kind from_record(persistence::death_kind k) {
  return static_cast<internal::death_kind>(k);
}

std::string encode_spec(const internal::actor_spec& spec) {
  auto v = detail::encode(spec);
  return v.bytes ? std::string{v.bytes->begin(), v.bytes->end()}
                 : std::string{};
}

/// Decodes a stored creation spec; nullopt if the bytes are not one.
std::optional<internal::actor_spec> decode_spec(const std::string& bytes) {
  detail::value v{
      detail::type_tag<internal::actor_spec>(),
      std::make_shared<detail::byte_buffer>(bytes.begin(), bytes.end()),
      {}};
  try {
    return detail::decode<internal::actor_spec>(v, "creation spec");
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

persistence::actor_record record_of(const actor_entry& a) {
  persistence::actor_record r;
  r.actor = a.spec.id;
  r.job = a.spec.job;
  r.name = a.spec.name;
  r.ns = a.spec.ns;
  r.detached = a.spec.detached;
  r.max_restarts = a.spec.max_restarts;
  r.num_restarts = a.incarnation;
  r.state = to_record(a.state);
  r.death_cause = a.death_cause;
  r.death_kind = to_record(a.death_kind);
  r.node = a.node;
  r.owner = a.spec.owner;
  r.creation_spec = a.spec_bytes;
  return r;
}

void commit(gcs_actor* self, persistence::write_batch b) {
  if (self->state.storage && !b.empty())
    self->state.storage->submit(std::move(b));
}

void save_actor(gcs_actor* self, const actor_entry& a) {
  if (!self->state.storage)
    return;
  persistence::write_batch b;
  b.put_actor(record_of(a));
  commit(self, std::move(b));
}

void save_node(gcs_actor* self, const node_entry& n) {
  if (!self->state.storage)
    return;
  persistence::write_batch b;
  b.put_node(persistence::node_record{n.info.node, n.info.resources.to_map(),
                                      n.info.alive});
  commit(self, std::move(b));
}

void save_job(gcs_actor* self, job_id id, const job_entry& j) {
  if (!self->state.storage)
    return;
  persistence::write_batch b;
  b.put_job(
      persistence::job_record{id, j.driver, j.ns, !j.running, j.start_ms});
  commit(self, std::move(b));
}

/// Answers the current request with `reply` once every change made so far
/// is durable; the handler returns the promise.
caf::response_promise reply_when_durable(gcs_actor* self, caf::message reply) {
  auto& st = self->state;
  auto rp = self->make_response_promise();
  auto after = st.storage ? st.storage->last_submitted() : 0;
  if (after <= st.committed)
    rp.deliver(std::move(reply));
  else
    st.held.push_back(held_reply{after, rp, std::move(reply)});
  return rp;
}

/// Sends `content` to `to` once every change made so far is durable: no one
/// acts on a change (an owner on an actor's new state, a raylet on where to
/// host it) that a crash of the control store could still take back.
void send_when_durable(gcs_actor* self, const caf::actor& to,
                       caf::message content) {
  auto& st = self->state;
  auto after = st.storage ? st.storage->last_submitted() : 0;
  if (after <= st.committed)
    self->send(to, std::move(content));
  else
    st.held_sends.push_back(held_send{after, to, std::move(content)});
}

void on_committed(gcs_actor* self, std::uint64_t up_to,
                  const std::string& failure) {
  auto& st = self->state;
  st.committed = std::max(st.committed, up_to);
  while (failure.empty() && !st.held_sends.empty() &&
         st.held_sends.front().after <= up_to) {
    auto& h = st.held_sends.front();
    self->send(h.to, std::move(h.content));
    st.held_sends.pop_front();
  }
  while (!st.held.empty() && st.held.front().after <= up_to) {
    auto& h = st.held.front();
    if (failure.empty())
      h.promise.deliver(std::move(h.reply));
    else
      h.promise.deliver(caf::make_error(
          caf::sec::runtime_error,
          "the control store could not write the change durably: " + failure));
    st.held.pop_front();
  }
  if (!failure.empty()) {
    // Memory now holds changes the disk does not: serving them would show
    // callers what a restart forgets. Stop, and let the keeper start a
    // control store again from what is durable. Requests still held are
    // asked again of it.
    st.log->error("stopping: the control store's storage failed a write ({}); "
                  "it restarts from what is durable",
                  failure);
    self->quit(
        caf::make_error(caf::sec::runtime_error,
                        "the control store's storage failed: " + failure));
  }
}

// -- client writes ------------------------------------------------------------

/// How many applied client writes the control store remembers. A retry
/// comes within `gcs_reconnect_timeout_ms`, and only the writes applied
/// meanwhile push its id out; past this many the oldest are forgotten.
constexpr std::size_t max_applied_requests = 100000;

/// The answer of the write `id` if it was applied already.
std::optional<bool> applied_answer(const gcs_state& st,
                                   const protocol::request_id& id) {
  if (id.nil())
    return std::nullopt;
  if (auto i = st.applied.find(id); i != st.applied.end())
    return i->second;
  return std::nullopt;
}

/// Forgets the oldest applied writes past the bound, in `b` too.
void forget_applied(gcs_state& st, persistence::write_batch& b) {
  while (st.applied_order.size() > max_applied_requests) {
    auto& [order, id] = st.applied_order.front();
    st.applied.erase(id);
    if (st.storage)
      b.del_applied_request(order);
    st.applied_order.pop_front();
  }
}

/// Remembers that the write `id` was applied and answered `answer`, in `b`
/// too: the batch of the change itself, so that a restart finds both or
/// neither.
void remember_applied(gcs_state& st, const protocol::request_id& id,
                      bool answer, persistence::write_batch& b) {
  if (id.nil())
    return;
  auto order = st.next_applied++;
  st.applied.emplace(id, answer);
  st.applied_order.emplace_back(order, id);
  if (st.storage)
    b.put_applied_request({order, id.client, id.seq, answer});
  forget_applied(st, b);
}

/// Takes back the applied writes that storage kept, oldest first.
void recover_applied(gcs_actor* self,
                     const std::vector<persistence::applied_request>& rs) {
  auto& st = self->state;
  for (const auto& r : rs) {
    protocol::request_id id{r.client, r.seq};
    st.applied.emplace(id, r.result);
    st.applied_order.emplace_back(r.order, id);
    st.next_applied = std::max(st.next_applied, r.order + 1);
  }
  persistence::write_batch b;
  forget_applied(st, b);
  commit(self, std::move(b));
}

// -- nodes --------------------------------------------------------------------

// Tells every live raylet which nodes exist, so that each can send work it
// cannot run to a node that can.
void broadcast_view(gcs_actor* self) {
  protocol::cluster_view view;
  for (auto& [id, n] : self->state.nodes)
    // A node still awaited after a restart is neither known alive nor dead
    // yet: left out, work pinned to it waits instead of being refused.
    if (!n.awaited)
      view.nodes.push_back(n.info);
  for (auto& [id, n] : self->state.nodes)
    if (n.info.alive)
      self->send(n.info.raylet, view);
}

// -- actors -------------------------------------------------------------------

protocol::actor_update update_of(const actor_entry& a) {
  return protocol::actor_update{a.spec.id,
                                a.state,
                                a.host,
                                a.incarnation,
                                a.spec.max_task_retries,
                                a.death_kind,
                                a.death_cause};
}

void publish(gcs_actor* self, const actor_entry& a) {
  auto update = caf::make_message(update_of(a));
  for (auto& s : a.subscribers)
    send_when_durable(self, s, update);
}

void release_node(gcs_actor* self, actor_entry& a) {
  if (!a.placed)
    return;
  a.placed = false;
  if (auto n = self->state.nodes.find(a.node); n != self->state.nodes.end()) {
    n->second.actor_available.add(a.spec.resources);
    --n->second.num_actors;
  }
}

/// Counts `a` against the resources of its node.
void occupy_node(gcs_actor* self, actor_entry& a) {
  a.placed = true;
  if (auto n = self->state.nodes.find(a.node); n != self->state.nodes.end()) {
    n->second.actor_available.subtract(a.spec.resources);
    ++n->second.num_actors;
  }
}

void place(gcs_actor* self, actor_entry& a) {
  auto& st = self->state;
  node_entry* best = nullptr;
  for (auto& [id, n] : st.nodes) {
    if (!n.info.alive || !n.actor_available.contains(a.spec.resources))
      continue;
    if (best == nullptr || n.num_actors < best->num_actors)
      best = &n;
  }
  if (best == nullptr) {
    st.log->warn("no node can host actor {} needing {{{}}}; it stays pending "
                 "until one joins",
                 a.spec.id.hex(), a.spec.resources.to_string());
    st.unplaced.push_back(a.spec.id);
    return;
  }
  a.node = best->info.node;
  occupy_node(self, a);
  send_when_durable(
      self, best->info.raylet,
      caf::make_message(protocol::host_actor{a.spec, a.incarnation}));
}

void place_unplaced(gcs_actor* self) {
  auto& st = self->state;
  auto waiting = std::move(st.unplaced);
  st.unplaced.clear();
  for (auto& id : waiting)
    if (auto a = st.actors.find(id); a != st.actors.end() &&
                                     a->second.state != actor_state::dead &&
                                     !a->second.placed)
      place(self, a->second);
}

/// Keeps dead actor `id` among the remembered ones; past the limit, those
/// that died first are forgotten soon after (not here: callers may be
/// walking the table).
void remember_dead(gcs_actor* self, const actor_id& id) {
  auto& st = self->state;
  st.dead.push_back(id);
  if (st.dead.size() > st.max_dead && !st.forget_scheduled) {
    st.forget_scheduled = true;
    self->send(self, forget_atom::value);
  }
}

/// Forgets the dead actors that died first, past the limit.
void forget_dead(gcs_actor* self) {
  auto& st = self->state;
  st.forget_scheduled = false;
  persistence::write_batch b;
  std::size_t forgotten = 0;
  while (st.dead.size() > st.max_dead) {
    auto id = st.dead.front();
    st.dead.pop_front();
    auto a = st.actors.find(id);
    if (a == st.actors.end() || a->second.state != actor_state::dead)
      continue;
    st.actors.erase(a);
    b.del_actor(id);
    ++forgotten;
  }
  if (forgotten > 0) {
    st.log->debug("forgot {} dead actors (gcs_max_dead_actors {})", forgotten,
                  st.max_dead);
    commit(self, std::move(b));
  }
}

void mark_dead(gcs_actor* self, actor_entry& a, internal::death_kind kind,
               const std::string& cause) {
  auto& st = self->state;
  if (a.state == actor_state::dead)
    return;
  st.log->info("actor {} is dead ({}): {}", a.spec.id.hex(),
               internal::to_string(kind), cause);
  a.state = actor_state::dead;
  a.death_kind = kind;
  a.death_cause = cause;
  a.recovering = false;
  st.unclaimed.erase(a.spec.id);
  if (a.host) {
    st.by_host.erase(a.host.address());
    self->demonitor(a.host);
    self->send_exit(a.host, caf::exit_reason::kill);
    a.host = nullptr;
  }
  release_node(self, a);
  persistence::write_batch b;
  b.put_actor(record_of(a));
  if (!a.spec.name.empty()) {
    auto key = std::make_pair(a.spec.ns, a.spec.name);
    if (auto n = st.named.find(key);
        n != st.named.end() && n->second == a.spec.id) {
      st.named.erase(n);
      b.del_named_actor(a.spec.ns, a.spec.name);
    }
  }
  commit(self, std::move(b));
  publish(self, a);
  remember_dead(self, a.spec.id);
}

// The instance of `a` is gone: restart it if it may, else it is dead.
void instance_lost(gcs_actor* self, actor_entry& a, const std::string& why) {
  if (a.state == actor_state::dead)
    return;
  a.recovering = false;
  if (a.host) {
    self->state.by_host.erase(a.host.address());
    a.host = nullptr;
  }
  release_node(self, a);
  auto max = a.spec.max_restarts;
  if (max >= 0 && a.incarnation >= max) {
    mark_dead(self, a, internal::death_kind::out_of_restarts,
              "its worker died (" + why +
                  ") and no restarts are left "
                  "(max_restarts=" +
                  std::to_string(max) + ")");
    return;
  }
  ++a.incarnation;
  a.state = actor_state::restarting;
  self->state.log->info("restarting actor {} (restart {}): {}", a.spec.id.hex(),
                        a.incarnation, why);
  save_actor(self, a);
  publish(self, a);
  place(self, a);
}

/// Takes `host` as the instance of `a`, without saving the change; false
/// if it is stale.
bool take_instance(gcs_actor* self, actor_entry& a, const caf::actor& host,
                   std::int32_t incarnation, const node_id& node) {
  auto& st = self->state;
  if (a.state == actor_state::dead || incarnation < a.incarnation)
    return false;
  if (a.host == host)
    return true;
  if (a.host) {
    st.by_host.erase(a.host.address());
    self->demonitor(a.host);
  }
  release_node(self, a);
  a.recovering = false;
  a.incarnation = incarnation;
  a.host = host;
  a.node = node;
  occupy_node(self, a);
  st.by_host[host.address()] = a.spec.id;
  self->monitor(host);
  return true;
}

/// Takes `host` as the live instance of `a` (reported after a restart of
/// the control store); false if it is stale.
bool adopt(gcs_actor* self, actor_entry& a, const caf::actor& host,
           std::int32_t incarnation, const node_id& node) {
  if (!take_instance(self, a, host, incarnation, node))
    return false;
  save_actor(self, a);
  if (a.state == actor_state::alive)
    publish(self, a);
  return true;
}

/// A recovered actor was not found alive: start it again. Only an instance
/// that had been running uses up a restart.
void settle(gcs_actor* self, actor_entry& a, const std::string& why) {
  if (!a.recovering)
    return;
  a.recovering = false;
  if (a.state == actor_state::alive) {
    instance_lost(self, a, why);
    return;
  }
  save_actor(self, a);
  publish(self, a);
  place(self, a);
}

caf::message create(gcs_actor* self, protocol::create_actor& msg,
                    bool& duplicate) {
  auto& st = self->state;
  auto& spec = msg.spec;
  detail::error_info result;
  if (st.actors.count(spec.id) > 0) {
    // The same request again (the control store restarted before it
    // answered): it is done already.
    duplicate = true;
    return caf::make_message(result);
  }
  if (!spec.name.empty()) {
    auto key = std::make_pair(spec.ns, spec.name);
    if (st.named.count(key) > 0) {
      result.code = errc::invalid_argument;
      result.message = "an actor named '" + spec.name +
                       "' already exists in namespace '" + spec.ns + "'";
      return caf::make_message(result);
    }
    st.named.emplace(key, spec.id);
  }
  auto id = spec.id;
  auto& a = st.actors[id];
  a.spec = std::move(spec);
  if (st.storage)
    a.spec_bytes = encode_spec(a.spec);
  a.subscribers.push_back(msg.owner);
  if (!a.spec.detached) {
    auto& owned = st.by_owner[msg.owner.address()];
    if (owned.empty())
      self->monitor(msg.owner);
    owned.push_back(id);
  }
  if (st.storage) {
    persistence::write_batch b;
    b.put_actor(record_of(a));
    if (!a.spec.name.empty())
      b.put_named_actor(a.spec.ns, a.spec.name, id);
    commit(self, std::move(b));
  }
  place(self, a);
  return caf::make_message(result);
}

void owner_gone(gcs_actor* self, const caf::actor_addr& owner) {
  auto& st = self->state;
  auto i = st.by_owner.find(owner);
  if (i == st.by_owner.end())
    return;
  auto owned = std::move(i->second);
  st.by_owner.erase(i);
  for (auto& id : owned)
    if (auto a = st.actors.find(id); a != st.actors.end())
      mark_dead(self, a->second, internal::death_kind::owner_died,
                "its owner died (the worker or driver that "
                "created it, which it shares fate with)");
}

void node_gone(gcs_actor* self, node_entry& n, const std::string& why) {
  auto& st = self->state;
  n.info.alive = false;
  st.log->warn("node {} is dead: {}", n.info.node.hex(), why);
  save_node(self, n);
  broadcast_view(self);
  // Actors that were being started there will never report: they are
  // placed again, and no restart is used up, since that instance never ran
  // (a host that went down before its node did may have been placed there
  // again just now). The others' hosts go down with the node and are
  // handled one by one.
  for (auto& [id, a] : st.actors)
    if (a.placed && a.node == n.info.node && !a.host &&
        a.state != actor_state::dead) {
      if (a.recovering) {
        settle(self, a, "its node died");
        continue;
      }
      release_node(self, a);
      place(self, a);
    }
}

// -- durable lineage ----------------------------------------------------------

void put_lineage(gcs_actor* self, protocol::lineage_put& msg) {
  auto& st = self->state;
  persistence::lineage_record rec{msg.object, msg.job,
                                  std::move(msg.task_spec)};
  if (auto i = st.lineage.find(msg.object);
      i != st.lineage.end() && i->second.job != msg.job)
    st.lineage_by_job[i->second.job].erase(msg.object);
  st.lineage_by_job[msg.job].insert(msg.object);
  if (st.storage) {
    persistence::write_batch b;
    b.put_lineage(rec);
    commit(self, std::move(b));
  }
  st.lineage[msg.object] = std::move(rec);
}

/// Drops the lineage of `object` from memory and adds its delete to `b`.
/// Returns whether there was one.
bool drop_lineage(gcs_state& st, const object_id& object,
                  persistence::write_batch& b) {
  auto i = st.lineage.find(object);
  if (i == st.lineage.end())
    return false;
  if (st.storage)
    b.del_lineage(i->second.job, object);
  if (auto j = st.lineage_by_job.find(i->second.job);
      j != st.lineage_by_job.end()) {
    j->second.erase(object);
    if (j->second.empty())
      st.lineage_by_job.erase(j);
  }
  st.lineage.erase(i);
  return true;
}

protocol::lineage_value get_lineage(const gcs_state& st,
                                    const protocol::lineage_get& msg) {
  protocol::lineage_value result;
  if (auto i = st.lineage.find(msg.object); i != st.lineage.end()) {
    result.found = true;
    result.task_spec = i->second.task_spec;
  }
  return result;
}

/// The lineage records of a job's durable tasks go with the job.
void forget_lineage_of_job(gcs_actor* self, job_id job) {
  auto& st = self->state;
  auto i = st.lineage_by_job.find(job);
  if (i == st.lineage_by_job.end())
    return;
  persistence::write_batch b;
  for (const auto& object : std::exchange(i->second, {}))
    drop_lineage(st, object, b);
  st.lineage_by_job.erase(job);
  commit(self, std::move(b));
}

void recover_lineage(gcs_actor* self,
                     std::vector<persistence::lineage_record>& records) {
  auto& st = self->state;
  for (auto& r : records) {
    st.lineage_by_job[r.job].insert(r.object);
    st.lineage[r.object] = std::move(r);
  }
  // The records of jobs that ended meanwhile (all of them, after the whole
  // cluster stopped) go now.
  std::vector<job_id> ended;
  for (const auto& [job, objects] : st.lineage_by_job)
    if (auto j = st.jobs.find(job); j == st.jobs.end() || !j->second.running)
      ended.push_back(job);
  for (auto job : ended)
    forget_lineage_of_job(self, job);
}

// -- recovery -----------------------------------------------------------------

/// Settles every recovered actor not found yet (on `node`, or anywhere if
/// `node` is nil).
void settle_missing(gcs_actor* self, const node_id& node,
                    const std::string& why) {
  for (auto& [id, a] : self->state.actors)
    if (a.recovering && (node.nil() || a.node == node))
      settle(self, a, why);
}

/// Rebuilds the tables from storage. After a cluster start nothing in them
/// is alive: detached actors are placed again, the rest are dead. After a
/// restart nodes, actor instances and owners are given the grace period to
/// report back.
void recover(gcs_actor* self, const gcs_config& cfg) {
  auto& st = self->state;
  auto rec = st.storage->take_recovered();
  for (auto& r : rec.report.repairs)
    st.log->warn("recovery {} {} record {}: {}", to_string(r.what), r.table,
                 r.key, r.reason);
  bool fresh = cfg.start == gcs_start::fresh_cluster;
  auto& t = rec.tables;
  for (auto& r : t.kv)
    st.kv[{std::move(r.ns), std::move(r.key)}] = std::move(r.value);
  recover_applied(self, t.requests);
  for (auto& r : t.jobs) {
    auto& j = st.jobs[r.job];
    j = job_entry{r.driver, r.ns, !r.finished, r.start_ms};
    st.next_job = std::max(st.next_job, r.job.value + 1);
    if (fresh && j.running) {
      j.running = false;
      save_job(self, r.job, j);
    }
  }
  recover_lineage(self, t.lineage);
  for (auto& r : t.nodes) {
    if (fresh) {
      // The nodes of a stopped cluster never come back; the new ones have
      // new ids.
      persistence::write_batch b;
      b.del_node(r.node);
      commit(self, std::move(b));
      continue;
    }
    auto& n = st.nodes[r.node];
    n.info = protocol::node_info{r.node, internal::resource_set{r.resources},
                                 caf::actor{}, false};
    n.actor_available = n.info.resources;
    n.awaited = r.alive;
    if (r.alive)
      ++st.awaited_nodes;
  }
  for (auto& r : t.named_actors)
    st.named[{r.ns, r.name}] = r.actor;
  for (auto& r : t.actors) {
    auto& a = st.actors[r.actor];
    a.state = from_record(r.state);
    a.incarnation = r.num_restarts;
    a.death_kind = from_record(r.death_kind);
    a.death_cause = r.death_cause;
    a.node = r.node;
    a.spec_bytes = std::move(r.creation_spec);
    auto spec = decode_spec(a.spec_bytes);
    if (spec) {
      a.spec = std::move(*spec);
    } else {
      a.spec.id = r.actor;
      a.spec.job = r.job;
      a.spec.name = r.name;
      a.spec.ns = r.ns;
      a.spec.detached = r.detached;
      a.spec.owner = r.owner;
    }
    if (a.state == actor_state::dead) {
      remember_dead(self, a.spec.id);
      continue;
    }
    if (!spec) {
      mark_dead(self, a, internal::death_kind::lost,
                "its creation spec in the control store is unreadable");
    } else if (fresh && !a.spec.detached) {
      mark_dead(self, a, internal::death_kind::job_ended,
                "its job ended when the cluster stopped");
    } else if (fresh) {
      // Stopped with the cluster, not failed: it comes back without using
      // a restart.
      if (a.state == actor_state::alive)
        a.state = actor_state::restarting;
      save_actor(self, a);
      st.unplaced.push_back(a.spec.id);
    } else {
      a.recovering = true;
      if (!a.spec.detached)
        st.unclaimed.insert(a.spec.id);
    }
  }
  st.log->info("recovered {} jobs, {} nodes, {} actors, {} keys from {}",
               t.jobs.size(), t.nodes.size(), t.actors.size(), t.kv.size(),
               st.storage->path());
  if (!fresh) {
    st.recovering = true;
    self->delayed_send(self, cfg.recovery_grace, grace_atom::value);
  }
}

void end_grace(gcs_actor* self) {
  auto& st = self->state;
  if (!st.recovering)
    return;
  st.recovering = false;
  bool changed = false;
  for (auto& [id, n] : st.nodes)
    if (n.awaited) {
      n.awaited = false;
      --st.awaited_nodes;
      changed = true;
      st.log->warn("node {} did not register again after the control store "
                   "restarted; it is dead",
                   id.hex());
      save_node(self, n);
    }
  if (changed)
    broadcast_view(self);
  settle_missing(self, node_id{},
                 "its node did not come back after the control store "
                 "restarted");
  auto unclaimed = std::move(st.unclaimed);
  st.unclaimed.clear();
  for (auto& id : unclaimed)
    if (auto a = st.actors.find(id); a != st.actors.end())
      mark_dead(self, a->second, internal::death_kind::owner_died,
                "its owner did not report back after the control store "
                "restarted");
}

void node_added(gcs_actor* self, protocol::add_node& msg) {
  auto& st = self->state;
  self->monitor(msg.raylet);
  st.log->info("node {} joined with {{{}}}", msg.node.hex(),
               msg.resources.to_string());
  auto& n = st.nodes[msg.node];
  bool was_awaited = n.awaited;
  if (was_awaited) {
    n.awaited = false;
    --st.awaited_nodes;
  }
  n.info = protocol::node_info{msg.node, msg.resources, msg.raylet, true};
  n.actor_available = msg.resources;
  n.num_actors = 0;
  for (auto& [id, a] : st.actors)
    if (a.placed && a.node == msg.node) {
      n.actor_available.subtract(a.spec.resources);
      ++n.num_actors;
    }
  save_node(self, n);
  for (auto& h : msg.hosted) {
    auto a = st.actors.find(h.actor);
    if (a == st.actors.end() ||
        !adopt(self, a->second, h.host, h.incarnation, msg.node)) {
      st.log->info("node {} hosts actor {}, which is unknown or stale; it "
                   "ends",
                   msg.node.hex(), h.actor.hex());
      self->send_exit(h.host, caf::exit_reason::kill);
    }
  }
  self->send(msg.raylet, protocol::node_added{msg.node});
  if (was_awaited)
    settle_missing(self, msg.node,
                   "its instance was gone when its node registered again");
  if (st.recovering && st.awaited_nodes == 0)
    settle_missing(self, node_id{},
                   "its node did not come back after the control store "
                   "restarted");
  broadcast_view(self);
  place_unplaced(self);
}

void resubscribe(gcs_actor* self, protocol::resubscribe_actors& msg) {
  auto& st = self->state;
  for (auto& id : msg.actors) {
    auto i = st.actors.find(id);
    if (i == st.actors.end()) {
      protocol::actor_update u;
      u.actor = id;
      u.state = actor_state::dead;
      u.death_kind = internal::death_kind::lost;
      u.death_cause =
          "the control store knows no such actor (it never existed, or "
          "it died long ago and was forgotten: see "
          "gcs_max_dead_actors)";
      send_when_durable(self, msg.owner, caf::make_message(u));
      continue;
    }
    auto& a = i->second;
    auto& subs = a.subscribers;
    if (std::find(subs.begin(), subs.end(), msg.owner) == subs.end())
      subs.push_back(msg.owner);
    if (!a.spec.detached && a.spec.owner == msg.owner_id &&
        st.unclaimed.erase(id) > 0) {
      auto& owned = st.by_owner[msg.owner.address()];
      if (owned.empty())
        self->monitor(msg.owner);
      owned.push_back(id);
    }
    if (!a.recovering)
      send_when_durable(self, msg.owner, caf::make_message(update_of(a)));
  }
}

// -- key-value table ----------------------------------------------------------

std::vector<std::string> kv_keys(gcs_state& st, const protocol::kv_keys& msg) {
  std::vector<std::string> result;
  for (auto i = st.kv.lower_bound({msg.ns, msg.prefix});
       i != st.kv.end() && i->first.first == msg.ns &&
       i->first.second.compare(0, msg.prefix.size(), msg.prefix) == 0;
       ++i)
    result.push_back(i->first.second);
  return result;
}

caf::behavior gcs_behavior(gcs_actor* self, gcs_config cfg) {
  auto& st = self->state;
  st.log = component_logger("gcs");
  st.storage = cfg.storage;
  st.max_dead = cfg.max_dead_actors;
  install_default_handlers(self, st.log);
  if (st.storage) {
    st.storage->set_listener(
        [weak = caf::actor_cast<caf::weak_actor_ptr>(self)](
            std::uint64_t up_to, std::string failure) {
          if (auto strong = weak.lock())
            caf::anon_send(caf::actor_cast<caf::actor>(strong),
                           committed_atom::value, up_to, std::move(failure));
        });
    st.committed = st.storage->last_submitted();
    recover(self, cfg);
  }
  self->set_down_handler([self](caf::down_msg& msg) {
    auto& st = self->state;
    if (auto h = st.by_host.find(msg.source); h != st.by_host.end()) {
      auto id = h->second;
      st.by_host.erase(h);
      if (auto a = st.actors.find(id); a != st.actors.end()) {
        a->second.host = nullptr;
        // A host ends normally only after it sent `actor_ended`, which
        // comes through the endpoint and may arrive after this.
        if (msg.reason != caf::exit_reason::normal)
          instance_lost(self, a->second, self->system().render(msg.reason));
      }
      return;
    }
    for (auto& [id, node] : st.nodes)
      if (node.info.alive && node.info.raylet.address() == msg.source) {
        node_gone(self, node, self->system().render(msg.reason));
        return;
      }
    owner_gone(self, msg.source);
  });
  return {
      // -- storage ----------------------------------------------------------
      [self](committed_atom, std::uint64_t up_to, const std::string& failure) {
        on_committed(self, up_to, failure);
      },
      [self](grace_atom) { end_grace(self); },
      [self](forget_atom) { forget_dead(self); },
      // -- nodes and jobs ---------------------------------------------------
      [self](protocol::add_node& msg) { node_added(self, msg); },
      [self](const protocol::start_job& msg) {
        auto& st = self->state;
        for (auto& [id, j] : st.jobs)
          if (j.running && j.driver == msg.driver)
            // The same request again, after a restart of the control store.
            return reply_when_durable(
                self, caf::make_message(protocol::job_started{id}));
        job_id id{st.next_job++};
        auto& j = st.jobs[id];
        j = job_entry{msg.driver, msg.ns, true, now_ms()};
        save_job(self, id, j);
        st.log->info("job {} started by driver {}", id.value, msg.driver.hex());
        return reply_when_durable(self,
                                  caf::make_message(protocol::job_started{id}));
      },
      [self](const protocol::finish_job& msg) {
        auto& st = self->state;
        if (auto i = st.jobs.find(msg.job); i != st.jobs.end()) {
          i->second.running = false;
          save_job(self, msg.job, i->second);
        }
        for (auto& [id, a] : st.actors)
          if (a.spec.job == msg.job && !a.spec.detached)
            mark_dead(self, a, internal::death_kind::job_ended,
                      "its job ended");
        forget_lineage_of_job(self, msg.job);
        for (auto& [id, n] : st.nodes)
          if (n.info.alive)
            self->send(n.info.raylet, msg);
        return reply_when_durable(self, caf::make_message(true));
      },
      [self](const protocol::list_nodes&) {
        std::vector<protocol::node_info> result;
        for (auto& [id, node] : self->state.nodes)
          result.push_back(node.info);
        return result;
      },
      // -- actors -----------------------------------------------------------
      [self](protocol::create_actor& msg) {
        bool duplicate = false;
        auto reply = create(self, msg, duplicate);
        if (duplicate) {
          auto& subs = self->state.actors[msg.spec.id].subscribers;
          if (std::find(subs.begin(), subs.end(), msg.owner) == subs.end())
            subs.push_back(msg.owner);
        }
        return reply_when_durable(self, std::move(reply));
      },
      [self](protocol::actor_started& msg) {
        auto& st = self->state;
        auto a = st.actors.find(msg.actor);
        if (a == st.actors.end() || a->second.state == actor_state::dead ||
            msg.incarnation < a->second.incarnation ||
            (msg.incarnation > a->second.incarnation &&
             !a->second.recovering)) {
          // Killed while it was starting, or a stale instance.
          self->send_exit(msg.host, caf::exit_reason::kill);
          return;
        }
        if (auto n = st.nodes.find(msg.node); n != st.nodes.end() &&
                                              !n->second.info.alive &&
                                              !n->second.awaited) {
          // Started on a node that died meanwhile: the actor was placed
          // elsewhere when the node went.
          self->send_exit(msg.host, caf::exit_reason::kill);
          return;
        }
        auto& e = a->second;
        // The same report again changes nothing; judged before taking the
        // instance, which ends a recovery.
        bool repeated = e.state == actor_state::alive && !e.recovering &&
                        e.host == msg.host;
        if (!take_instance(self, e, msg.host, msg.incarnation, msg.node)) {
          self->send_exit(msg.host, caf::exit_reason::kill);
          return;
        }
        if (repeated)
          return;
        e.state = actor_state::alive;
        e.recovering = false;
        e.node = msg.node;
        save_actor(self, e);
        publish(self, e);
      },
      [self](const protocol::actor_ended& msg) {
        auto& st = self->state;
        auto a = st.actors.find(msg.actor);
        if (a == st.actors.end() || a->second.incarnation != msg.incarnation)
          return;
        if (a->second.host) {
          st.by_host.erase(a->second.host.address());
          self->demonitor(a->second.host);
          a->second.host = nullptr;
        }
        mark_dead(self, a->second, msg.kind, msg.cause);
      },
      [self](protocol::subscribe_actor& msg) {
        auto& st = self->state;
        auto a = st.actors.find(msg.actor);
        if (a == st.actors.end()) {
          protocol::actor_update u;
          u.actor = msg.actor;
          u.state = actor_state::dead;
          u.death_kind = internal::death_kind::lost;
          u.death_cause =
              "the control store knows no such actor (it never existed, or "
              "it died long ago and was forgotten: see "
              "gcs_max_dead_actors)";
          send_when_durable(self, msg.subscriber, caf::make_message(u));
          return;
        }
        auto& subs = a->second.subscribers;
        if (std::find(subs.begin(), subs.end(), msg.subscriber) == subs.end())
          subs.push_back(msg.subscriber);
        if (!a->second.recovering)
          send_when_durable(self, msg.subscriber,
                            caf::make_message(update_of(a->second)));
      },
      [self](protocol::resubscribe_actors& msg) { resubscribe(self, msg); },
      [self](const protocol::lookup_actor& msg) {
        auto& st = self->state;
        protocol::actor_found result;
        auto n = st.named.find({msg.ns, msg.name});
        if (n != st.named.end())
          if (auto a = st.actors.find(n->second); a != st.actors.end()) {
            result.found = true;
            result.actor = a->second.spec.id;
            result.class_tag = a->second.spec.class_tag;
          }
        // Reads wait for the writes before them to be durable: no caller
        // sees a name or value that a crash could still take back.
        return reply_when_durable(self, caf::make_message(result));
      },
      [self](const protocol::kill_actor& msg) {
        auto& st = self->state;
        auto a = st.actors.find(msg.actor);
        if (a == st.actors.end() || a->second.state == actor_state::dead)
          return reply_when_durable(self, caf::make_message(false));
        if (msg.no_restart) {
          mark_dead(self, a->second, internal::death_kind::killed,
                    "it was killed (prism::kill)");
        } else if (a->second.host) {
          // Its down message restarts it, or ends it if no restarts are left.
          self->send_exit(a->second.host, caf::exit_reason::kill);
        }
        return reply_when_durable(self, caf::make_message(true));
      },
      [self](const protocol::locate_actor& msg) {
        auto& st = self->state;
        protocol::actor_location result;
        if (auto a = st.actors.find(msg.actor);
            a != st.actors.end() && a->second.state == actor_state::alive &&
            a->second.host) {
          result.alive = true;
          result.node = a->second.node;
        }
        return result;
      },
      // -- key-value table ----------------------------------------------------
      [self](protocol::kv_put& msg) {
        auto& st = self->state;
        if (auto first = applied_answer(st, msg.request))
          return reply_when_durable(self, caf::make_message(*first));
        auto key = std::make_pair(msg.ns, msg.key);
        auto i = st.kv.find(key);
        bool existed = i != st.kv.end();
        persistence::write_batch b;
        if (!existed || msg.overwrite) {
          if (st.storage)
            b.kv_put(msg.ns, msg.key, msg.value);
          st.kv[std::move(key)] = std::move(msg.value);
        }
        remember_applied(st, msg.request, existed, b);
        commit(self, std::move(b));
        return reply_when_durable(self, caf::make_message(existed));
      },
      [self](const protocol::kv_get& msg) {
        auto& st = self->state;
        protocol::kv_value result;
        if (auto i = st.kv.find({msg.ns, msg.key}); i != st.kv.end()) {
          result.found = true;
          result.value = i->second;
        }
        return reply_when_durable(self, caf::make_message(result));
      },
      [self](const protocol::kv_del& msg) {
        auto& st = self->state;
        if (auto first = applied_answer(st, msg.request))
          return reply_when_durable(self, caf::make_message(*first));
        bool existed = st.kv.erase({msg.ns, msg.key}) > 0;
        persistence::write_batch b;
        if (existed && st.storage)
          b.kv_del(msg.ns, msg.key);
        remember_applied(st, msg.request, existed, b);
        commit(self, std::move(b));
        return reply_when_durable(self, caf::make_message(existed));
      },
      [self](const protocol::kv_keys& msg) {
        return reply_when_durable(self,
                                  caf::make_message(kv_keys(self->state, msg)));
      },
      // -- durable lineage ----------------------------------------------------
      [self](protocol::lineage_put& msg) {
        put_lineage(self, msg);
        return reply_when_durable(self, caf::make_message(true));
      },
      [self](const protocol::lineage_del& msg) {
        persistence::write_batch b;
        bool existed = drop_lineage(self->state, msg.object, b);
        commit(self, std::move(b));
        return reply_when_durable(self, caf::make_message(existed));
      },
      [self](const protocol::lineage_get& msg) {
        return reply_when_durable(
            self, caf::make_message(get_lineage(self->state, msg)));
      },
      [self](protocol::count_lineage) {
        return reply_when_durable(
            self, caf::make_message(
                      static_cast<std::uint64_t>(self->state.lineage.size())));
      },
  };
}

} // namespace

caf::actor spawn_gcs(caf::actor_system& sys, gcs_config cfg) {
  return sys.spawn(gcs_behavior, std::move(cfg));
}

} // namespace prism::actors
