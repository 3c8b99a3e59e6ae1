#pragma once

// The user key-value table: any worker or driver -> gcs.

#include <string>
#include <vector>

namespace prism::protocol {

/// Sets a key; answered with `bool`: whether the key existed before. With
/// `overwrite` false an existing key keeps its value.
struct kv_put {
  std::string ns;
  std::string key;
  std::string value;
  bool overwrite = true;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, kv_put& x) {
  return f(x.ns, x.key, x.value, x.overwrite);
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
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, kv_del& x) {
  return f(x.ns, x.key);
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
