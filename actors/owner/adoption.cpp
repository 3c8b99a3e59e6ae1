// Adoption: when the owner of an object dies, its borrowers ask the control
// store's owner, which adopts the object if its task's lineage is durable
// (runs the task again, as its own, and keeps the result) and answers
// owner_died otherwise.

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "common/lineage_record.hpp"
#include "owner/owner_state.hpp"

namespace prism::actors::owner_internal {

namespace {

// Gives the borrowers waiting for `id` an error.
void fail_waiters(owner_actor* self, const object_id& id,
                  detail::error_info err) {
  internal::memory_store::result found;
  found.st = internal::memory_store::state::ready;
  found.err = std::make_shared<const detail::error_info>(std::move(err));
  deliver(self, id, found);
}

// The control store's owner adopts `id`, whose owner died: it runs the task
// in the durable record again, as its own, and keeps the result.
void adopt(owner_actor* self, const object_id& id, const worker_id& owner,
           const protocol::lineage_value& record) {
  auto& st = self->state;
  st.adoption.adopting.erase(id);
  auto spec = record.found ? decode_lineage(record.task_spec) : std::nullopt;
  if (!spec) {
    auto err = owner_died_reply(id, owner).error;
    if (record.found)
      err.message += " (its lineage record is malformed)";
    fail_waiters(self, id, std::move(err));
    return;
  }
  st.log->info("adopting object {} of task '{}', whose owner (worker {}) "
               "died: running the task again",
               id.hex(), spec->display_name(), owner.hex());
  spec->owner = st.cfg.self;
  spec->durable = false; // the record stays as it is
  st.cfg.store->add_pending(id);
  st.cfg.store->pin(id);
  submit(self, std::move(*spec), {}, task_id{});
}

} // namespace

// The answer to a fetch of `id` whose owner died, and what it knew of the
// object with it.
protocol::object_reply owner_died_reply(const object_id& id,
                                        const worker_id& owner) {
  protocol::object_reply reply;
  reply.id = id;
  reply.error.code = errc::owner_died;
  reply.error.message = "the owner of object " + id.hex() + " (worker " +
                        owner.hex() + ") died; the object cannot be fetched";
  return reply;
}

// The owner of `id` died: the control store's owner answers instead, with
// the object made again if it was durable, else with owner_died.
void ask_adopter(owner_actor* self, const object_id& id,
                 const worker_id& owner) {
  auto& st = self->state;
  auto adopter = st.cfg.directory->adopter();
  if (!adopter || adopter == self_handle(self)) {
    // Answered as a message, not here: the caller may still be resolving
    // the arguments of a task that this answer fails.
    self->send(self, owner_died_reply(id, owner));
    return;
  }
  st.objects.fetching[id] = adopter_id;
  if (st.objects.watched_owners.emplace(adopter.address(), adopter_id).second)
    self->monitor(adopter);
  self->send(adopter, protocol::adopt_object{id, owner, self_handle(self)});
}

// A borrower asks the control store's owner for an object whose owner died.
void adopt_requested(owner_actor* self, protocol::adopt_object& msg) {
  auto& st = self->state;
  auto found = st.cfg.store->lookup(msg.id);
  if (found.st == internal::memory_store::state::ready) {
    reply_object(self, msg.requester, msg.id, found);
    return;
  }
  st.objects.waiting_borrowers[msg.id].push_back(msg.requester);
  if (found.st == internal::memory_store::state::pending ||
      !st.adoption.adopting.insert(msg.id).second)
    return; // being made already
  auto id = msg.id;
  auto owner = msg.owner;
  self->request(st.cfg.gcs, lineage_timeout, protocol::lineage_get{id})
      .then(
          [self, id, owner](protocol::lineage_value& record) {
            adopt(self, id, owner, record);
          },
          [self, id, owner](caf::error& err) {
            self->state.adoption.adopting.erase(id);
            auto reply = owner_died_reply(id, owner);
            reply.error.message += "; the control store did not say whether "
                                   "it was durable (" +
                                   self->system().render(err) + ")";
            fail_waiters(self, id, std::move(reply.error));
          });
}

} // namespace prism::actors::owner_internal
