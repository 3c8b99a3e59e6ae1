#pragma once

// An actor system on CAF's deterministic test scheduler, for fixtures that
// drive it by hand: every message is delivered by `drain`, and time moves
// only when a test says so. (CAF's own test DSL needs a `main` of its own,
// so it cannot be mixed with Boost.Test.)

#include <caf/all.hpp>

#include "protocol/registration.hpp"

namespace prism_unit {

struct deterministic_system {
  deterministic_system()
      : sys(configure(cfg)),
        sched(
            dynamic_cast<caf::scheduler::test_coordinator&>(sys.scheduler())) {}

  static caf::actor_system_config& configure(caf::actor_system_config& c) {
    c.set("scheduler.policy", caf::atom("testing"));
    c.set("logger.file-verbosity", caf::atom("quiet"));
    prism::protocol::add_message_types(c);
    return c;
  }

  /// Delivers every message that is due; the virtual clock stands still.
  void drain() {
    while (sched.try_run_once())
      ; // nop
  }

  /// Fires every timer left (late timeouts), so that nothing is left behind
  /// when the fixture ends.
  void fire_remaining_timers() {
    drain();
    while (sched.trigger_timeouts() > 0)
      drain();
  }

  caf::actor_system_config cfg;
  caf::actor_system sys;
  caf::scheduler::test_coordinator& sched;
};

} // namespace prism_unit
