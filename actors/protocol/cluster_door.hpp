#pragma once

// How a process enters a cluster: the head publishes its door, not the
// control store, and the door hands the control store's endpoint to a
// process that presents the cluster token.

#include <string>

namespace prism::protocol {

/// node, driver or `prism status` -> the head's door: let me in. Answered
/// with the control store's endpoint (a `caf::actor`), or refused with an
/// error that says why (no token, or a wrong one); the head logs each
/// refusal, never the token.
struct enter_cluster {
  /// The cluster token, "" if the process has none.
  std::string token;
  /// What enters, for the head's log: "node", "driver", "status".
  std::string role;
  /// Where the process listens ("" if it does not), for the head's log.
  std::string contact;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, enter_cluster& x) {
  return f(x.token, x.role, x.contact);
}

} // namespace prism::protocol
