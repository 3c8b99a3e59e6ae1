#pragma once

// `prism list|get|summary workers|objects`: each alive node holds its own
// workers and objects, so the control store asks them all (each with a
// deadline) and merges their answers. A node that does not answer in time
// is counted in the answer, never waited for past its deadline.

#include <caf/response_promise.hpp>

#include "gcs/gcs_actor.hpp"
#include "protocol/state.hpp"

namespace prism::actors::gcs_detail {

/// Each answers `rp` with the state_page, state_found or state_counts the
/// control store answers itself for its own kinds.

/// Whether the nodes, not the control store, hold the entries of `k`.
bool held_by_nodes(state::kind k) noexcept;

/// A page of the workers or objects of every alive node.
void list_from_nodes(gcs_actor* self, protocol::list_state msg,
                     caf::response_promise rp);

/// The worker or object `msg` names, found on whichever node has it; an
/// object with each of its copies as its history.
void get_from_nodes(gcs_actor* self, protocol::get_state msg,
                    caf::response_promise rp);

/// The counts of every alive node's workers or objects, summed.
void summarize_from_nodes(gcs_actor* self, protocol::summarize_state msg,
                          caf::response_promise rp);

} // namespace prism::actors::gcs_detail
