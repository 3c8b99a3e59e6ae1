#pragma once

// An autoscaler instance as bytes, to keep it in the control store (JSON:
// readable with `prism kv`, and tolerant of fields added later).

#include <optional>
#include <string>

#include "prism/internal/instance_state.hpp"

namespace prism::internal {

/// `x` as JSON text.
std::string encode_instance(const instance& x);

/// The instance `text` holds; nothing if it is not one (damaged, or of an
/// unknown state), which the caller reports and skips.
std::optional<instance> decode_instance(const std::string& text);

} // namespace prism::internal
