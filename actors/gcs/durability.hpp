#pragma once

// The control store's storage, and the replies and messages that wait for a
// change to be durable before anyone acts on it.

#include <cstdint>
#include <deque>
#include <memory>
#include <string>

#include <caf/actor.hpp>
#include <caf/atom.hpp>
#include <caf/message.hpp>
#include <caf/response_promise.hpp>

#include "gcs/gcs_actor.hpp"
#include "gcs/gcs_storage.hpp"

namespace prism::actors::gcs_detail {

/// The storage reports that every change numbered up to some number is
/// durable, or that a write failed.
using committed_atom = caf::atom_constant<caf::atom("committed")>;

/// A reply deferred until the writes before it are durable.
struct deferred_reply {
  std::uint64_t after = 0;
  caf::response_promise promise;
  caf::message reply;
};

/// A message that tells others of a change (an actor's new state, where to
/// host it), deferred until that change is durable.
struct deferred_send {
  std::uint64_t after = 0;
  caf::actor to;
  caf::message content;
};

/// The storage, how far it is durable, and what waits for it.
struct durability_state {
  /// Where the tables live; null keeps them in memory only.
  std::shared_ptr<gcs_storage> storage;
  /// Every change numbered up to this one is durable.
  std::uint64_t committed = 0;
  /// The number of the last change this control store submitted (it is the
  /// storage's only writer).
  std::uint64_t submitted = 0;
  /// Replies deferred until the changes before them are durable, in order.
  std::deque<deferred_reply> awaiting_durable;
  /// Messages deferred until the changes before them are durable, in order.
  std::deque<deferred_send> deferred_sends;

  durability_state() = default;
  durability_state(const durability_state&) = delete;
  durability_state& operator=(const durability_state&) = delete;

  /// Fails the replies still deferred.
  ~durability_state();
};

/// Takes `storage` (null: memory only) and has its commits reported to
/// `self` as `committed_atom`.
void open_durability(gcs_actor* self, std::shared_ptr<gcs_storage> storage);

/// Submits `b` to the storage, if there is one and `b` changes anything.
void commit(gcs_actor* self, persistence::write_batch b);

/// Answers the current request with `reply` once every change made so far
/// is durable; the handler returns the promise.
caf::response_promise reply_when_durable(gcs_actor* self, caf::message reply);

/// Sends `content` to `to` once every change made so far is durable: no one
/// acts on a change (an owner on an actor's new state, a raylet on where to
/// host it) that a crash of the control store could still take back.
void send_when_durable(gcs_actor* self, const caf::actor& to,
                       caf::message content);

/// The storage made every change up to `up_to` durable, or failed
/// (`failure` not empty): sends and answers what waited for it; on a failure
/// the control store stops.
void on_committed(gcs_actor* self, std::uint64_t up_to,
                  const std::string& failure);

} // namespace prism::actors::gcs_detail
