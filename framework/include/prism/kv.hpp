#pragma once

// The cluster's key-value table, kept by the control store: small values
// that jobs, tasks and actors share, like Ray's internal KV. Keys live in a
// namespace, by default the caller's job namespace (`config::ns`). Every
// acknowledged change is durable: it survives a restart of the control store
// and, with `config::storage_path`, of the whole cluster.
//
//   prism::kv::put("model/version", "7");
//   auto v = prism::kv::get("model/version");        // "7"
//   auto all = prism::kv::keys("model/");            // {"model/version"}
//   prism::kv::del("model/version");
//
// Each call is a round trip to the control store; while it is restarting,
// calls wait up to `config::gcs_reconnect_timeout_ms`, then throw
// `gcs_unavailable_error`. A `put` or `del` that returned was applied exactly
// once (its retries carry one request id); one that threw may or may not
// have been applied.

#include <optional>
#include <string>
#include <vector>

namespace prism::kv {

/// Sets `key` to `value` (any bytes) in namespace `ns` (empty: the
/// caller's). With `overwrite` false an existing key keeps its value.
/// Returns whether the key existed before. Throws `gcs_unavailable_error`
/// if the control store did not answer in time: then the change may or may
/// not have been applied, and calling again is a new change.
bool put(const std::string& key, const std::string& value,
         bool overwrite = true, const std::string& ns = "");

/// The value of `key` in `ns`, if it is set.
[[nodiscard]] std::optional<std::string> get(const std::string& key,
                                             const std::string& ns = "");

/// Whether `key` is set in `ns`.
[[nodiscard]] bool exists(const std::string& key, const std::string& ns = "");

/// Removes `key` from `ns`. Returns whether it existed. On
/// `gcs_unavailable_error`, as for `put`, the key may or may not be gone.
bool del(const std::string& key, const std::string& ns = "");

/// The keys of `ns` that start with `prefix`, in byte order.
[[nodiscard]] std::vector<std::string> keys(const std::string& prefix = "",
                                            const std::string& ns = "");

} // namespace prism::kv
