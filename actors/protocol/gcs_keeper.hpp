#pragma once

// The cluster's bootstrap (cluster/) -> the control store's keeper
// (gcs/keeper.cpp), which starts, stops and restarts the control store.

#include <caf/atom.hpp>

namespace prism::protocol {

/// What the control store's keeper answers to, each a request from a
/// thread outside the scheduler:
/// - `gcs_stop_atom` -> bool: kills the control store as a crash would and
///   does not start it again; false if none was running.
/// - `gcs_start_atom` -> (bool, string): starts a control store on the
///   storage after a stop; (false, why) if the storage cannot be opened,
///   (false, "") if one is running.
/// - `gcs_close_atom` -> bool: stops the control store, closes its storage
///   and ends the keeper.
/// - `gcs_up_atom` -> bool: whether a control store is running.
using gcs_stop_atom = caf::atom_constant<caf::atom("gcs_stop")>;
using gcs_start_atom = caf::atom_constant<caf::atom("gcs_start")>;
using gcs_close_atom = caf::atom_constant<caf::atom("gcs_close")>;
using gcs_up_atom = caf::atom_constant<caf::atom("gcs_up")>;

} // namespace prism::protocol
