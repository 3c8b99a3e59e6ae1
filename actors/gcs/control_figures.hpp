#pragma once

// The control store's figures for the metrics port: its nodes with their
// heartbeats, its actors and jobs by state, and its storage's writes.

#include "protocol/metrics.hpp"

namespace prism::actors::gcs_detail {

struct gcs_state;

/// The figures of `st`, as of now.
protocol::control_metrics control_figures(const gcs_state& st);

} // namespace prism::actors::gcs_detail
