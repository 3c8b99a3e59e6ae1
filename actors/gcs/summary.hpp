#pragma once

// What `prism status` shows of the control store's tables.

#include "protocol/status.hpp"

namespace prism::actors::gcs_detail {

struct gcs_state;

/// The jobs, the actors by state, and the resources of actors that wait
/// for a node.
protocol::cluster_summary summarize(const gcs_state& st);

} // namespace prism::actors::gcs_detail
