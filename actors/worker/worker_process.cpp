#include "worker/worker_process.hpp"

#include <cstdlib>

namespace prism::actors {

std::vector<std::string>
worker_common_environment(const std::string& door_address,
                          const tls_files& tls) {
  auto result = std::vector<std::string>{std::string{worker_door_variable} +
                                         "=" + door_address};
  for (auto& entry : tls_environment(tls))
    result.push_back(std::move(entry));
  return result;
}

std::string worker_token_entry(const std::string& token) {
  return std::string{worker_token_variable} + "=" + token;
}

std::vector<std::string> worker_environment(const std::string& token,
                                            const std::string& door_address,
                                            const tls_files& tls) {
  auto result = worker_common_environment(door_address, tls);
  result.push_back(worker_token_entry(token));
  return result;
}

bool started_as_worker() noexcept {
  const char* token = std::getenv(worker_token_variable);
  return token != nullptr && *token != '\0';
}

} // namespace prism::actors
