#include "store_error.hpp"

#include <utility>

namespace prism::persistence {

store_error::store_error(kind_t kind, const std::string& message)
    : error(kind == kind_t::invalid_argument ? errc::invalid_argument
                                             : errc::internal,
            message),
      kind_(kind) {}

store_error::store_error(const std::string& message, std::string file,
                         std::uint64_t offset)
    : store_error(kind_t::corrupt, message) {
  file_ = std::move(file);
  offset_ = offset;
}

const char* to_string(store_error::kind_t kind) noexcept {
  switch (kind) {
  case store_error::kind_t::io:
    return "io";
  case store_error::kind_t::corrupt:
    return "corrupt";
  case store_error::kind_t::wrong_schema_version:
    return "wrong_schema_version";
  case store_error::kind_t::not_found:
    return "not_found";
  case store_error::kind_t::invalid_argument:
    return "invalid_argument";
  }
  return "unknown";
}

} // namespace prism::persistence
