// Lineage and rebuild: where this owner's objects kept in nodes' stores
// live, how the tasks that made them can make them again, and running those
// tasks again when every copy is lost. Durable tasks' lineage is also
// recorded in the control store, for adoption (adoption.cpp).

#include <algorithm>
#include <atomic>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/lineage_record.hpp"
#include "owner/owner_state.hpp"

namespace prism::actors {

namespace {

/// Rebuilds of lost objects started by the owners of this process.
std::atomic<std::uint64_t> rebuilds_started{0};

} // namespace

std::uint64_t objects_rebuilt() {
  return rebuilds_started.load(std::memory_order_relaxed);
}

} // namespace prism::actors

namespace prism::actors::owner_internal {

namespace {

// Keeps how task `t` made `id`: the task as submitted, its retries left, and
// its arguments owned here.
void keep_lineage(owner_actor* self, const task_entry& t, const object_id& id) {
  auto& st = self->state;
  drop_lineage(self, id);
  lineage_entry lin;
  lin.spec = t.spec;
  for (auto& [pos, arg] : t.ref_args)
    lin.spec.args[pos] = arg;
  lin.retries_left = t.retries_left;
  lin.held = st.cfg.store->add_task_refs(lin.spec.args);
  st.lineage.entries.emplace(id, std::move(lin));
}

// Fails an object whose copies are lost and which cannot be made again.
void lost_for_good(owner_actor* self, const object_id& id,
                   const detail::error_info& err) {
  auto& st = self->state;
  st.log->warn("{}", err.message);
  st.lineage.located.erase(id);
  drop_lineage(self, id);
  st.cfg.store->reopen(id);
  st.cfg.store->fail(id, err);
  object_ready(self, id);
}

// Why `id`, lost with `where`, cannot be made again: it has no lineage
// (`lin` is null), or its task has no retries left; nothing if it can.
std::optional<detail::error_info> unrebuildable(const object_id& id,
                                                const std::string& where,
                                                const lineage_entry* lin) {
  detail::error_info err;
  if (lin == nullptr) {
    err.code = errc::object_lost;
    err.message = "object " + id.hex() + " was lost with the object store of " +
                  where + "; it was made by put, which has no lineage to " +
                  "rebuild it from";
    return err;
  }
  if (lin->retries_left == 0) {
    err.code = errc::reconstruction_failed;
    err.function_name = lin->spec.function;
    err.message = "object " + id.hex() + " of task '" +
                  lin->spec.display_name() + "' was lost with " + where +
                  ", and the task has no retries left to rebuild it";
    return err;
  }
  return std::nullopt;
}

// Makes the task entry that runs the task of `lin` again, holding its
// arguments owned here.
task_entry& rerun_entry(owner_actor* self, const object_id& id,
                        const lineage_entry& lin) {
  auto& st = self->state;
  auto& t = st.tasks.entries[id.task];
  t.spec = lin.spec;
  t.retries_left = lin.retries_left;
  if (t.retries_left > 0)
    --t.retries_left;
  ++t.spec.attempt;
  t.rebuilding = true;
  t.key = key_of(t.spec);
  for (auto& arg : t.spec.args) {
    if (arg.by_ref && arg.owner == st.cfg.self) {
      st.cfg.store->add_task_ref(arg.ref);
      t.held_args.push_back(arg.ref);
    }
  }
  return t;
}

// Remembers `id` as kept in one store only, `where`, made by run `attempt`.
void located_at(owner_actor* self, const object_id& id, object_copy where,
                std::int32_t attempt) {
  auto& loc = self->state.lineage.located[id];
  loc = located_object{};
  loc.copies.push_back(std::move(where));
  loc.attempt = attempt;
}

// Forgets the copy of `loc` in the store of `raylet`, if it has one there.
void drop_copy(located_object& loc, const caf::actor_addr& raylet) {
  auto i = std::find_if(
      loc.copies.begin(), loc.copies.end(),
      [&](const object_copy& c) { return c.raylet.address() == raylet; });
  if (i == loc.copies.end())
    return;
  loc.lost_at = i->node;
  loc.copies.erase(i);
}

void forget_lineage(owner_actor* self, const object_id& id) {
  auto& st = self->state;
  if (st.lineage.durable.erase(id) == 0)
    return;
  self->request(st.cfg.gcs, lineage_timeout, protocol::lineage_del{id})
      .then([](bool) {}, [](caf::error&) {});
}

} // namespace

// -- objects in nodes' stores, and lineage ------------------------------------

// Drops the lineage of `id`, and with it the hold on its arguments.
void drop_lineage(owner_actor* self, const object_id& id) {
  auto& st = self->state;
  auto i = st.lineage.entries.find(id);
  if (i == st.lineage.entries.end())
    return;
  auto held = std::move(i->second.held);
  st.lineage.entries.erase(i);
  for (auto& id : held)
    st.cfg.store->release_task_ref(id);
}

void stored_in_node(owner_actor* self, const task_entry& t, const object_id& id,
                    object_copy where, std::int32_t attempt) {
  watch_raylet(self, where.raylet);
  located_at(self, id, std::move(where), attempt);
  keep_lineage(self, t, id);
}

// Every copy of `id` is lost: runs the task that made it again (its lost
// arguments are rebuilt the same way when it resolves them), or fails the
// object if it has no lineage or no retries left.
void rebuild(owner_actor* self, const object_id& id) {
  auto& st = self->state;
  if (st.tasks.entries.count(id.task) > 0)
    return; // being rebuilt already
  auto loc = st.lineage.located.find(id);
  if (loc == st.lineage.located.end() || !loc->second.lost())
    return; // freed, rebuilt or failed meanwhile
  auto where = "node " + loc->second.lost_at.hex();
  auto lin = st.lineage.entries.find(id);
  auto found = lin != st.lineage.entries.end() ? &lin->second : nullptr;
  if (auto err = unrebuildable(id, where, found)) {
    lost_for_good(self, id, *err);
    return;
  }
  st.lineage.located.erase(loc);
  if (!st.cfg.store->reopen(id)) {
    drop_lineage(self, id);
    return;
  }
  auto& t = rerun_entry(self, id, lin->second);
  rebuilds_started.fetch_add(1, std::memory_order_relaxed);
  st.log->info("object {} was lost with {}: running task {} ({}) again, "
               "attempt {}",
               id.hex(), where, id.task.hex(), t.spec.display_name(),
               t.spec.attempt);
  submit_entry(self, t);
}

void copy_lost(owner_actor* self, const object_id& id,
               const caf::actor_addr& raylet) {
  auto& located = self->state.lineage.located;
  if (auto l = located.find(id); l != located.end())
    drop_copy(l->second, raylet);
}

bool add_copy(owner_actor* self, const object_id& id, const object_copy& copy,
              std::int32_t attempt) {
  auto& located = self->state.lineage.located;
  auto l = located.find(id);
  if (l == located.end() || l->second.attempt != attempt ||
      l->second.has_copy_on(copy.node))
    return false;
  watch_raylet(self, copy.raylet);
  l->second.copies.push_back(copy);
  return true;
}

bool kept_in_a_store(owner_actor* self, const object_id& id) {
  auto& located = self->state.lineage.located;
  auto l = located.find(id);
  return l != located.end() && !l->second.lost();
}

std::uint32_t copies_of(owner_actor* self, const object_id& id) {
  auto& located = self->state.lineage.located;
  auto l = located.find(id);
  return l == located.end()
             ? 0
             : static_cast<std::uint32_t>(l->second.copies.size());
}

void copy_kept(owner_actor* self, const protocol::copy_kept& msg) {
  if (add_copy(self, msg.id, msg.copy, msg.attempt))
    return;
  // Not needed: the object was freed or made again meanwhile, or a copy on
  // that node is counted already (the same one, if its attempt matches).
  auto& located = self->state.lineage.located;
  auto l = located.find(msg.id);
  bool counted = l != located.end() && l->second.attempt == msg.attempt &&
                 l->second.has_copy_on(msg.copy.node);
  if (!counted)
    self->send(msg.copy.raylet, protocol::free_object{msg.id, msg.attempt});
}

void objects_lost_with(owner_actor* self, const caf::actor_addr& raylet) {
  for (auto& [id, loc] : self->state.lineage.located)
    drop_copy(loc, raylet);
  pulls_lost_with(self, raylet);
}

// A put's value goes to this node's object store; the owner keeps where.
// The put returns once it is there: a full store holds it back.
caf::result<detail::error_info> object_put(owner_actor* self,
                                           protocol::put_object& msg) {
  auto& st = self->state;
  located_at(self, msg.id, object_copy{st.cfg.raylet, "", st.cfg.node}, 0);
  auto rp = self->make_response_promise<detail::error_info>();
  keep_in_node(
      self, msg.id, std::move(msg.value), 0,
      [rp](const std::string&) mutable { rp.deliver(detail::error_info{}); },
      [self, rp, id = msg.id](detail::error_info e) mutable {
        // Never handed out: nothing refers to it.
        object_freed(self, id);
        rp.deliver(std::move(e));
      },
      true);
  return rp;
}

// An object kept in a node's store is no longer referenced here.
void object_freed(owner_actor* self, const object_id& id) {
  auto& st = self->state;
  if (auto l = st.lineage.located.find(id); l != st.lineage.located.end()) {
    for (auto& copy : l->second.copies)
      self->send(copy.raylet, protocol::free_object{id, l->second.attempt});
    st.lineage.located.erase(l);
  }
  drop_lineage(self, id);
  forget_lineage(self, id);
}

// -- durable lineage ----------------------------------------------------------

// Records a durable task's lineage (its arguments are values by now) in the
// control store, once; the record goes when the result is freed here.
void save_lineage(owner_actor* self, const internal::task_spec& spec) {
  auto& st = self->state;
  auto id = spec.return_id();
  if (!st.cfg.gcs || !st.lineage.durable.insert(id).second)
    return;
  st.cfg.store->report_free(id);
  // The record keeps the argument values, and a run from it reads the refs
  // inside them: they stay alive as long as this owner (see README,
  // "Limits").
  for (auto& arg : spec.args)
    for (auto& r : arg.inline_value.refs)
      st.cfg.store->pin(r.id);
  self->request(st.cfg.gcs, lineage_timeout,
                protocol::lineage_put{id, spec.job, encode_lineage(spec)})
      .then([](bool) {},
            [self, id](caf::error& err) {
              self->state.log->warn(
                  "object {}: its lineage could not be made durable: {}",
                  id.hex(), self->system().render(err));
            });
}

} // namespace prism::actors::owner_internal
