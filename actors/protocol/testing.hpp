#pragma once

// Fault injection and probes: what the test fixtures (actors/testing/,
// behind <prism/testing.hpp>) ask the raylets, owners and the control store.
// Production code never sends these; they are registered with the rest so
// that the fixtures work across processes too.

#include <cstdint>
#include <vector>

#include <caf/atom.hpp>

#include "prism/ids.hpp"

namespace prism::protocol {

/// fixture -> raylet: how many live nodes its cluster view holds
/// (std::uint64_t), itself included once the control store has told it.
using view_size_atom = caf::atom_constant<caf::atom("view_size")>;

/// fixture -> raylet: kill a worker as a crash would (fault injection).
/// Answered with `true` if the worker was alive.
struct kill_worker {
  worker_id worker;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, kill_worker& x) {
  return f(static_cast<unique_id&>(x.worker));
}

/// fixture -> raylet: how many workers are alive. Answered with a count.
struct count_workers {
  std::uint32_t unused = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, count_workers& x) {
  return f(x.unused);
}

/// fixture -> an owner: the state of one of its tasks (see task_state.hpp).
/// Answered with the state's name, or "" if the owner no longer tracks the
/// task (it ended, or was never submitted there).
struct query_task {
  task_id task;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, query_task& x) {
  return f(x.task);
}

/// fixture -> an owner: how many copies of one of its objects, kept in
/// nodes' stores, it counts. Answered with a count (0 if it keeps none).
struct query_copies {
  object_id id;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, query_copies& x) {
  return f(x.id);
}

/// fixture -> raylet: lose every object in the node's store, as a crash of
/// the store would (fault injection). Answered with the number dropped.
struct drop_objects {};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, drop_objects&) {
  return f();
}

/// fixture -> raylet: how much the node's store holds. Answered with
/// `object_store_usage`.
struct count_objects {};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, count_objects&) {
  return f();
}

struct object_store_usage {
  std::uint64_t objects = 0;
  std::uint64_t bytes = 0;
  /// Bytes of the store's shared memory in use, and the reads in place that
  /// pin some of them.
  std::uint64_t shared_bytes = 0;
  std::uint64_t mapped_reads = 0;
  /// Objects only on disk now, their bytes, and the files holding them.
  std::uint64_t spilled_objects = 0;
  std::uint64_t spilled_bytes = 0;
  std::uint64_t spill_files = 0;
  /// Since the node started: spills, reads back, waits for room, and
  /// `object_store_full` failures.
  std::uint64_t spills = 0;
  std::uint64_t restores = 0;
  std::uint64_t full_waits = 0;
  std::uint64_t full_errors = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, object_store_usage& x) {
  return f(x.objects, x.bytes, x.shared_bytes, x.mapped_reads,
           x.spilled_objects, x.spilled_bytes, x.spill_files, x.spills,
           x.restores, x.full_waits, x.full_errors);
}

/// fixture -> gcs: how many lineage records the control store keeps; answered
/// with `std::uint64_t`.
struct count_lineage {};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, count_lineage&) {
  return f();
}

} // namespace prism::protocol
