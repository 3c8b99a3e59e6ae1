#pragma once

// The conversation between a raylet and the workers of its pool.

#include <cstdint>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/atom.hpp>

#include "prism/ids.hpp"
#include "prism/internal/resource_set.hpp"
#include "protocol/raylet_gcs.hpp"

namespace prism::protocol {

/// worker -> raylet: the running task waits in `get`; its CPU may be lent
/// to other work until `worker_unblocked`.
struct worker_blocked {
  worker_id worker;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, worker_blocked& x) {
  return f(static_cast<unique_id&>(x.worker));
}

/// worker -> raylet: the task runs again and takes its CPU back.
struct worker_unblocked {
  worker_id worker;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, worker_unblocked& x) {
  return f(static_cast<unique_id&>(x.worker));
}

// -- worker processes ---------------------------------------------------------
//
// A raylet that runs its workers as processes starts each with a one-time
// token and the address of the node's door (an actor published for them
// alone). The process says hello with the token and learns where it is,
// starts its worker actor, and reports it ready; only then does it join
// the pool.

/// worker process -> door -> raylet: the process started with `token` is
/// up. Answered with a `worker_welcome`, or an error if the raylet gave
/// out no such token or the process registered already.
struct worker_hello {
  std::string token;
  std::int32_t pid = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, worker_hello& x) {
  return f(x.token, x.pid);
}

/// raylet -> worker process: who it is and whom it works for.
struct worker_welcome {
  worker_id worker;
  node_id node;
  job_id job;
  caf::actor raylet;
  caf::actor gcs;
  std::uint64_t max_inline_bytes = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, worker_welcome& x) {
  return f(static_cast<unique_id&>(x.worker), static_cast<unique_id&>(x.node),
           x.job, x.raylet, x.gcs, x.max_inline_bytes);
}

/// worker process -> door -> raylet: its worker actor runs and takes
/// tasks. Answered with true once it is in the pool, or an error.
struct worker_ready {
  std::string token;
  caf::actor handle;
  /// Where the worker's process takes connections.
  std::string contact;
  /// The worker's owner actor (see `lease_grant::worker_control`).
  caf::actor control;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, worker_ready& x) {
  return f(x.token, x.handle, x.contact, x.control);
}

/// launcher -> raylet (in its process): a worker process ended; `how`
/// says how ("was killed by signal 11 (SIGSEGV)").
struct worker_exited {
  worker_id worker;
  std::int32_t pid = 0;
  std::string how;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, worker_exited& x) {
  return f(static_cast<unique_id&>(x.worker), x.pid, x.how);
}

/// launcher -> raylet (in its process): the launch of a worker process
/// ended: it runs as `pid` (forked from its program's fork server, or
/// started by exec), or `error` says why none started.
struct worker_launched {
  worker_id worker;
  std::int32_t pid = 0;
  bool forked = false;
  /// Forked ahead of its launch, and prepared (see worker/fork_server.hpp).
  bool spare = false;
  std::string error;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, worker_launched& x) {
  return f(static_cast<unique_id&>(x.worker), x.pid, x.forked, x.spare,
           x.error);
}

// -- instance processes -------------------------------------------------------
//
// An actor of its own process (`prism::isolation::process`) is hosted by a
// worker process of its job that hosts others too; its instance runs in a
// process forked for it alone, which connects to its host's socket
// (worker/instance_wire.hpp). The host asks its node for that process.

/// actor host -> raylet: start an instance process of `job`, forked fresh
/// from its program (never a spare, which prepares to be a worker), told to
/// connect to the socket named `socket` and say `token`. Answered with its
/// pid once it runs, or an error if none started.
struct start_instance_process {
  job_id job;
  std::string socket;
  std::string token;
  /// The id the instance's user metrics go by (`user_metrics::worker`),
  /// which its host ships for it.
  worker_id worker;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f,
                                        start_instance_process& x) {
  return f(x.job, x.socket, x.token, static_cast<unique_id&>(x.worker));
}

/// launcher -> raylet (in its process): the instance process of `token`
/// runs as `pid`, or `error` says why none started.
struct instance_process_launched {
  std::string token;
  std::int32_t pid = 0;
  std::string error;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f,
                                        instance_process_launched& x) {
  return f(x.token, x.pid, x.error);
}

/// launcher -> raylet (in its process): the instance process of `token`
/// ended; `how` says how.
struct instance_process_exited {
  std::string token;
  std::int32_t pid = 0;
  std::string how;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f,
                                        instance_process_exited& x) {
  return f(x.token, x.pid, x.how);
}

/// raylet -> itself: the time a worker process had to register, or to
/// exit after its connection dropped, is up.
struct check_worker_process {
  worker_id worker;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, check_worker_process& x) {
  return f(static_cast<unique_id&>(x.worker));
}

/// raylet -> itself: the program of `job` was checked on this host: its
/// worker processes run `program` from now on, or `error` says why they
/// cannot run.
struct program_checked {
  job_id job;
  job_program program;
  std::string error;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, program_checked& x) {
  return f(x.job, x.program, x.error);
}

/// raylet -> itself: time to stop idle worker processes above its CPUs.
using reap_idle_atom = caf::atom_constant<caf::atom("reapidle")>;

/// raylet -> itself, with a job id: the job finished a while ago; end its
/// program's fork server unless another job runs the program by now.
using forget_program_atom = caf::atom_constant<caf::atom("forgetprg")>;

/// raylet -> door: the raylet whose workers register through the door.
struct door_target {
  caf::actor raylet;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, door_target& x) {
  return f(x.raylet);
}

} // namespace prism::protocol
