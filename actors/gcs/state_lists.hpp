#pragma once

// The control store's answers to `prism list`, `prism get` and
// `prism summary`: its tables as entries, filtered before they are limited.

#include "protocol/state.hpp"

namespace prism::actors::gcs_detail {

struct gcs_state;

/// A page of the nodes, jobs or actors `msg` asks for.
protocol::state_page list_state(const gcs_state& st,
                                const protocol::list_state& msg);

/// The node, job or actor `msg` names, with its history.
protocol::state_found get_state(const gcs_state& st,
                                const protocol::get_state& msg);

/// The counts `msg` asks for.
protocol::state_counts summarize_state(const gcs_state& st,
                                       const protocol::summarize_state& msg);

} // namespace prism::actors::gcs_detail
