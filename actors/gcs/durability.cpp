#include "gcs/durability.hpp"

#include <algorithm>
#include <unordered_map>
#include <vector>

#include <caf/all.hpp>

#include "gcs/gcs_state.hpp"
#include "protocol/gcs_raylet_actors.hpp"
#include "protocol/owner_gcs.hpp"

namespace prism::actors::gcs_detail {

durability_state::~durability_state() {
  // Dying (a crash, or the cluster stopping) before these changes were
  // durable: their requesters ask again, of the next control store.
  for (auto& h : awaiting_durable)
    h.promise.deliver(caf::make_error(caf::sec::request_receiver_down));
}

void open_durability(gcs_actor* self, std::shared_ptr<gcs_storage> storage) {
  auto& st = self->state.durability;
  st.storage = std::move(storage);
  if (!st.storage)
    return;
  st.storage->set_listener([weak = caf::actor_cast<caf::weak_actor_ptr>(self)](
                               std::uint64_t up_to, std::string failure) {
    if (auto strong = weak.lock())
      caf::anon_send(caf::actor_cast<caf::actor>(strong), committed_atom::value,
                     up_to, std::move(failure));
  });
  st.committed = st.storage->last_submitted();
  st.submitted = st.committed;
}

void commit(gcs_actor* self, persistence::write_batch b) {
  auto& st = self->state.durability;
  if (st.storage && !b.empty())
    st.submitted = st.storage->submit(std::move(b));
}

caf::response_promise reply_when_durable(gcs_actor* self, caf::message reply) {
  auto& st = self->state.durability;
  auto rp = self->make_response_promise();
  auto after = st.submitted;
  if (after <= st.committed)
    rp.deliver(std::move(reply));
  else
    st.awaiting_durable.push_back(deferred_reply{after, rp, std::move(reply)});
  return rp;
}

void send_when_durable(gcs_actor* self, const caf::actor& to,
                       caf::message content) {
  auto& st = self->state.durability;
  auto after = st.submitted;
  if (after <= st.committed)
    self->send(to, std::move(content));
  else
    st.deferred_sends.push_back(deferred_send{after, to, std::move(content)});
}

namespace {

/// Answers the deferred replies up to `up_to`: with their reply, or with
/// the error of a failed write.
void answer_deferred(durability_state& st, std::uint64_t up_to,
                     const std::string& failure) {
  while (!st.awaiting_durable.empty() &&
         st.awaiting_durable.front().after <= up_to) {
    auto& h = st.awaiting_durable.front();
    if (failure.empty())
      h.promise.deliver(std::move(h.reply));
    else
      h.promise.deliver(caf::make_error(
          caf::sec::runtime_error,
          "the control store could not write the change durably: " + failure));
    st.awaiting_durable.pop_front();
  }
}

/// The messages deferred for one receiver, made into one where they can be:
/// a run of actor updates, or of instances to host, goes as one message.
struct receiver_batch {
  caf::actor to;
  protocol::actor_updates updates;
  protocol::host_actors hosts;

  template <class T>
  void send_run(gcs_actor* self, std::vector<T>& run) {
    if (run.size() == 1)
      self->send(to, std::move(run.front()));
    else if (!run.empty())
      self->send(to, std::move(run));
    run.clear();
  }

  void flush(gcs_actor* self) {
    send_run(self, updates);
    send_run(self, hosts);
  }
};

/// Sends the messages deferred up to `up_to`, each receiver's in order, in
/// as few messages as it can: a burst of actor creations takes a message
/// per receiver and commit, not one per actor.
void send_deferred(gcs_actor* self, std::uint64_t up_to) {
  auto& st = self->state.durability;
  std::vector<receiver_batch> batches;
  std::unordered_map<caf::actor, std::size_t> index;
  while (!st.deferred_sends.empty() &&
         st.deferred_sends.front().after <= up_to) {
    auto h = std::move(st.deferred_sends.front());
    st.deferred_sends.pop_front();
    auto [i, added] = index.emplace(h.to, batches.size());
    if (added)
      batches.push_back(receiver_batch{h.to, {}, {}});
    auto& b = batches[i->second];
    if (h.content.match_elements<protocol::actor_update>()) {
      b.send_run(self, b.hosts);
      b.updates.push_back(
          std::move(h.content.get_mutable_as<protocol::actor_update>(0)));
    } else if (h.content.match_elements<protocol::host_actor>()) {
      b.send_run(self, b.updates);
      b.hosts.push_back(
          std::move(h.content.get_mutable_as<protocol::host_actor>(0)));
    } else {
      b.flush(self);
      self->send(h.to, std::move(h.content));
    }
  }
  for (auto& b : batches)
    b.flush(self);
}

} // namespace

void on_committed(gcs_actor* self, std::uint64_t up_to,
                  const std::string& failure) {
  auto& st = self->state.durability;
  st.committed = std::max(st.committed, up_to);
  if (failure.empty())
    send_deferred(self, up_to);
  answer_deferred(st, up_to, failure);
  if (!failure.empty()) {
    // Memory now holds changes the disk does not: serving them would show
    // callers what a restart forgets. Stop, and let the keeper start a
    // control store again from what is durable. Requests still deferred are
    // asked again of it.
    self->state.log->error(
        "stopping: the control store's storage failed a write ({}); "
        "it restarts from what is durable",
        failure);
    self->quit(
        caf::make_error(caf::sec::runtime_error,
                        "the control store's storage failed: " + failure));
  }
}

} // namespace prism::actors::gcs_detail
