#include "common/lineage_record.hpp"

#include <cstring>
#include <vector>

#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>

namespace prism::actors {

namespace {

constexpr std::size_t job_bytes = sizeof(std::uint64_t);

} // namespace

std::string lineage_key(const object_id& id) {
  return id.hex();
}

std::string encode_lineage(const internal::task_spec& spec) {
  std::vector<char> buf(job_bytes);
  std::uint64_t job = spec.job.value;
  std::memcpy(buf.data(), &job, job_bytes);
  caf::binary_serializer sink{static_cast<caf::execution_unit*>(nullptr), buf};
  if (auto err = sink(const_cast<internal::task_spec&>(spec)))
    throw error(errc::internal, "cannot serialize the lineage of task '" +
                                    spec.display_name() + "'");
  return std::string{buf.begin(), buf.end()};
}

std::optional<internal::task_spec> decode_lineage(const std::string& record) {
  if (record.size() < job_bytes)
    return std::nullopt;
  std::vector<char> buf(record.begin() + job_bytes, record.end());
  internal::task_spec spec;
  caf::binary_deserializer src{static_cast<caf::execution_unit*>(nullptr), buf};
  if (src(spec) || src.remaining() != 0)
    return std::nullopt;
  return spec;
}

std::optional<job_id> lineage_job(const std::string& record) {
  if (record.size() < job_bytes)
    return std::nullopt;
  std::uint64_t job = 0;
  std::memcpy(&job, record.data(), job_bytes);
  return job_id{static_cast<std::uint32_t>(job)};
}

} // namespace prism::actors
