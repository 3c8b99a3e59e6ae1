#pragma once

// Reaching an owner through the address a ref carries.

#include <caf/actor.hpp>
#include <caf/actor_cast.hpp>
#include <caf/actor_registry.hpp>
#include <caf/actor_system.hpp>

#include "prism/detail/value.hpp"

namespace prism::actors {

/// The owner actor at `address`, or an invalid handle if there is none or it
/// is gone (a proxy of another process is gone once its connection drops).
/// An address read without a handle finds an owner of this process by id.
inline caf::actor owner_at(caf::actor_system& sys,
                           const detail::owner_address& address) {
  if (auto ptr = address.lock())
    return caf::actor_cast<caf::actor>(std::move(ptr));
  if (address.aid != 0 && address.nid == sys.node())
    return caf::actor_cast<caf::actor>(sys.registry().get(address.aid));
  return {};
}

/// The address of the owner actor `owner`.
inline detail::owner_address address_of_owner(const caf::actor& owner) {
  detail::owner_address result;
  if (auto ptr = caf::actor_cast<caf::strong_actor_ptr>(owner)) {
    result.aid = ptr->id();
    result.nid = ptr->node();
    result.actor.reset(ptr.get());
  }
  return result;
}

} // namespace prism::actors
