#pragma once

// The control store actor's type, for the files that make up its behaviour;
// its state, which aggregates the tables, is in gcs_state.hpp.

#include <caf/stateful_actor.hpp>

namespace prism::actors::gcs_detail {

struct gcs_state;

/// The control store actor.
using gcs_actor = caf::stateful_actor<gcs_state>;

} // namespace prism::actors::gcs_detail
