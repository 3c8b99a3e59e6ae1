#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace prism {

/// A 128-bit identifier, random at creation. Base of node and worker ids.
struct unique_id {
  std::uint64_t hi = 0;
  std::uint64_t lo = 0;

  /// Returns a new random id, never nil.
  static unique_id random();

  /// Returns whether this is the all-zero id.
  bool nil() const noexcept {
    return hi == 0 && lo == 0;
  }

  /// Returns 32 lowercase hex digits.
  std::string hex() const;

  friend auto operator<=>(const unique_id&, const unique_id&) = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, unique_id& x) {
  return f(x.hi, x.lo);
}

/// Identifies one node (one raylet). A restarted raylet is a new node.
struct node_id : unique_id {};

/// Identifies one worker or driver, and with it the owner it hosts.
struct worker_id : unique_id {};

/// Identifies an actor for its whole life, across restarts.
struct actor_id : unique_id {
  /// The `n`th id of the run that starts at `start`: an owner names the
  /// actors it creates so. The high half is `start.hi + n` times an odd
  /// constant, which spreads a run's ids as random ones are (a short prefix
  /// of their hex tells them apart), and which `std::hash<actor_id>` undoes:
  /// a run's ids hash to consecutive values.
  static actor_id in_run(const unique_id& start, std::uint64_t n) noexcept {
    return actor_id{{(start.hi + n) * spread, start.lo}};
  }

  static constexpr std::uint64_t spread = 0x9e3779b97f4a7c15ULL;
  /// `spread`'s inverse: their product is 1 modulo 2^64.
  static constexpr std::uint64_t unspread = 0xf1de83e19937733dULL;
};

static_assert(actor_id::spread * actor_id::unspread == 1);

/// Identifies a job: one driver's session on a cluster.
struct job_id {
  std::uint32_t value = 0;
  friend auto operator<=>(const job_id&, const job_id&) = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, job_id& x) {
  return f(x.value);
}

/// Identifies a task: the worker that submitted it and a sequence number
/// unique within that worker.
struct task_id {
  worker_id submitter;
  std::uint64_t seq = 0;

  std::string hex() const;
  friend auto operator<=>(const task_id&, const task_id&) = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, task_id& x) {
  return f(static_cast<unique_id&>(x.submitter), x.seq);
}

/// Identifies an object. Derived from the task that returns it, so the id
/// itself names the object's lineage; index 0 marks an object made by `put`,
/// which has no lineage.
struct object_id {
  task_id task;
  std::uint32_t index = 0;

  /// Returns whether the object was made by `put` rather than by a task.
  bool is_put() const noexcept {
    return index == 0;
  }

  /// Returns whether this id names no object.
  bool nil() const noexcept {
    return task.submitter.nil() && task.seq == 0 && index == 0;
  }

  std::string hex() const;
  friend auto operator<=>(const object_id&, const object_id&) = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, object_id& x) {
  return f(x.task, x.index);
}

} // namespace prism

namespace std {

template <>
struct hash<prism::unique_id> {
  size_t operator()(const prism::unique_id& x) const noexcept {
    return static_cast<size_t>(x.hi ^ (x.lo * 0x9e3779b97f4a7c15ULL));
  }
};

template <>
struct hash<prism::node_id> : hash<prism::unique_id> {};

template <>
struct hash<prism::worker_id> : hash<prism::unique_id> {};

/// A run of actor ids (`actor_id::in_run`, an owner's actors) hashes to
/// consecutive values in the order it was made, as a submitter's tasks do:
/// the tables of actors (the control store's, an owner's routes) then hold
/// a burst of creations side by side in memory. Random ids hash at random.
template <>
struct hash<prism::actor_id> {
  size_t operator()(const prism::actor_id& x) const noexcept {
    return static_cast<size_t>(x.hi * prism::actor_id::unspread + x.lo);
  }
};

template <>
struct hash<prism::job_id> {
  size_t operator()(const prism::job_id& x) const noexcept {
    return x.value;
  }
};

/// A submitter's tasks hash to consecutive values, in the order it made
/// them: a table's buckets then hold them in that order, so that the results
/// of calls made one after another, and read one after another, sit side by
/// side in memory rather than a cache miss apart. Submitters' ids are random,
/// so their runs of tasks start far apart.
template <>
struct hash<prism::task_id> {
  size_t operator()(const prism::task_id& x) const noexcept {
    return hash<prism::unique_id>{}(x.submitter) + static_cast<size_t>(x.seq);
  }
};

template <>
struct hash<prism::object_id> {
  size_t operator()(const prism::object_id& x) const noexcept {
    return hash<prism::task_id>{}(x.task) + x.index * 0xc4ceb9fe1a85ec53ULL;
  }
};

} // namespace std
