#include "head_connection.hpp"

#include <chrono>
#include <cstdlib>

#include "join/cluster_token.hpp"
#include "join/head_link.hpp"
#include "prism/error.hpp"
#include "session.hpp"

namespace prism::tools {

std::string resolve_address(std::string address) {
  if (address.empty())
    if (const char* env = std::getenv("PRISM_ADDRESS"); env && *env)
      address = env;
  if (address.empty())
    address = session::open().head_address().value_or("");
  if (address.empty())
    throw invalid_argument_error(
        "no cluster to ask: give --address HOST:PORT, set PRISM_ADDRESS, or "
        "start a head on this host with `prism start --head`");
  return address;
}

head_connection::head_connection(std::string address, const std::string& who)
    : where_{actors::parse_host_port(resolve_address(std::move(address)),
                                     "the cluster address")} {
  actors::configure_cluster_process(cfg_, 2, actors::network_settings{});
  sys_ = std::make_unique<caf::actor_system>(cfg_);
  gcs_ = actors::connect_to_head(
      *sys_, where_, actors::head_entry{actors::resolve_token("", ""), who},
      std::chrono::seconds{5});
}

void head_connection::fail(const std::string& what,
                           const std::string& failure) {
  throw gcs_unavailable_error(what + " failed: the control store did not " +
                              "answer (" + failure + ")");
}

} // namespace prism::tools
