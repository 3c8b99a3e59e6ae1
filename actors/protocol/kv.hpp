#pragma once

// The user key-value table: any worker or driver -> gcs.

#include <compare>
#include <cstdint>
#include <string>
#include <vector>

#include "prism/ids.hpp"

namespace prism::protocol {

/// Names one write of one client to the control store. The control store
/// remembers the ids of the writes it applied lately, with their answers,
/// durably with the change itself: the same write arriving again (a retry
/// after its answer was lost, or a request the endpoint buffered across a
/// restart) gets the first answer and is not applied twice. Nil: no id, the
/// write is applied each time it arrives.
struct request_id {
  /// The client, random per process.
  unique_id client;
  /// Counts up from 1 within the client.
  std::uint64_t seq = 0;

  bool nil() const noexcept {
    return client.nil();
  }

  friend auto operator<=>(const request_id&, const request_id&) = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, request_id& x) {
  return f(x.client, x.seq);
}

/// Sets a key; answered with `bool`: whether the key existed before. With
/// `overwrite` false an existing key keeps its value.
struct kv_put {
  std::string ns;
  std::string key;
  std::string value;
  bool overwrite = true;
  request_id request;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, kv_put& x) {
  return f(x.ns, x.key, x.value, x.overwrite, x.request);
}

/// Reads a key; answered with `kv_value`.
struct kv_get {
  std::string ns;
  std::string key;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, kv_get& x) {
  return f(x.ns, x.key);
}

struct kv_value {
  bool found = false;
  std::string value;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, kv_value& x) {
  return f(x.found, x.value);
}

/// Removes a key; answered with `bool`: whether it existed.
struct kv_del {
  std::string ns;
  std::string key;
  request_id request;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, kv_del& x) {
  return f(x.ns, x.key, x.request);
}

/// Lists the keys of a namespace that start with `prefix`; answered with
/// `std::vector<std::string>`, in byte order.
struct kv_keys {
  std::string ns;
  std::string prefix;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, kv_keys& x) {
  return f(x.ns, x.prefix);
}

} // namespace prism::protocol
