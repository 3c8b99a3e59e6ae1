#include "net/connection.hpp"

#include <caf/binary_deserializer.hpp>

namespace prism::actors {

std::string refusal_of_header(const void* buf, std::size_t size, bool greeted,
                              const read_limits& limits, basp_header& hdr) {
  if (size != caf::io::basp::header_size)
    return "it sent a header of " + std::to_string(size) + " bytes";
  caf::binary_deserializer source{nullptr, static_cast<const char*>(buf), size};
  if (source(hdr) || !caf::io::basp::valid(hdr))
    return "it sent no valid BASP header";
  auto handshake = caf::io::basp::is_handshake(hdr);
  if (handshake && hdr.payload_len == 0)
    return "it sent a handshake without its payload";
  if (!greeted && !handshake)
    return "it sent a message before its handshake";
  auto limit = greeted ? limits.message : limits.handshake;
  if (hdr.payload_len > limit)
    return "it announced a message of " + std::to_string(hdr.payload_len) +
           " bytes, over this process's limit of " + std::to_string(limit);
  return "";
}

} // namespace prism::actors
