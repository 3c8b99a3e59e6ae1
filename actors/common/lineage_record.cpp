#include "common/lineage_record.hpp"

#include <vector>

#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>

namespace prism::actors {

std::string encode_lineage(const internal::task_spec& spec) {
  std::vector<char> buf;
  caf::binary_serializer sink{static_cast<caf::execution_unit*>(nullptr), buf};
  if (auto err = sink(const_cast<internal::task_spec&>(spec)))
    throw error(errc::internal, "cannot serialize the lineage of task '" +
                                    spec.display_name() + "'");
  return std::string{buf.begin(), buf.end()};
}

std::optional<internal::task_spec> decode_lineage(const std::string& record) {
  std::vector<char> buf(record.begin(), record.end());
  internal::task_spec spec;
  caf::binary_deserializer src{static_cast<caf::execution_unit*>(nullptr), buf};
  if (src(spec) || src.remaining() != 0)
    return std::nullopt;
  return spec;
}

} // namespace prism::actors
