#pragma once

#include <vector>

#include "store_layout.hpp"
#include "write_batch.hpp"

namespace prism::persistence {

/// A batch's operations, keys and values already encoded, in order.
struct write_batch::rep {
  std::vector<layout::op> ops;
};

} // namespace prism::persistence
