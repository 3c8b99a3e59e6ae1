#pragma once

// The user key-value table, and the ids of the client writes applied lately,
// so that a write that arrives again is answered alike, not applied twice.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <caf/response_promise.hpp>

#include "control_store.hpp"
#include "gcs/gcs_actor.hpp"
#include "protocol/kv.hpp"

namespace prism::actors::gcs_detail {

/// How many applied client writes the control store remembers. A retry
/// comes within `gcs_reconnect_timeout_ms`, and only the writes applied
/// meanwhile push its id out; past this many the oldest are forgotten.
constexpr std::size_t max_applied_requests = 100000;

struct kv_table {
  /// The user key-value table, by namespace and key.
  std::map<std::pair<std::string, std::string>, std::string> values;
  /// The answers of client writes applied lately, by request id, so that a
  /// write that arrives again is answered alike, not applied twice.
  std::map<protocol::request_id, bool> applied;
  /// Their ids by the order they were applied in, oldest first.
  std::deque<std::pair<std::uint64_t, protocol::request_id>> applied_order;
  std::uint64_t next_applied = 1;
};

// -- client writes ------------------------------------------------------------

/// The answer of the write `id` if it was applied already.
std::optional<bool> applied_answer(const gcs_state& st,
                                   const protocol::request_id& id);

/// Remembers that the write `id` was applied and answered `answer`, in `b`
/// too: the batch of the change itself, so that a restart finds both or
/// neither.
void remember_applied(gcs_state& st, const protocol::request_id& id,
                      bool answer, persistence::write_batch& b);

/// Takes back the applied writes that storage kept, oldest first.
void recover_applied(gcs_actor* self,
                     const std::vector<persistence::applied_request>& rs);

// -- key-value requests -------------------------------------------------------

/// Stores a value (unless one exists and `overwrite` is off); answers
/// whether one existed.
caf::response_promise put_value(gcs_actor* self, protocol::kv_put& msg);

/// The value of a key.
caf::response_promise get_value(gcs_actor* self, const protocol::kv_get& msg);

/// Deletes a key; answers whether it existed.
caf::response_promise delete_value(gcs_actor* self,
                                   const protocol::kv_del& msg);

/// The keys of a namespace that start with a prefix.
caf::response_promise list_keys(gcs_actor* self, const protocol::kv_keys& msg);

} // namespace prism::actors::gcs_detail
