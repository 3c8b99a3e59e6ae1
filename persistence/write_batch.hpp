#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "records.hpp"

namespace prism::persistence {

/// Changes to several tables that `control_store::write` applies atomically:
/// after a crash either all of them are in the store or none is. Use it when
/// one logical change touches two tables, e.g. an actor and its name:
///
///   write_batch b;
///   b.put_actor(a);
///   b.put_named_actor(a.ns, a.name, a.actor);
///   store.write(b);
///
/// Later operations in a batch win over earlier ones on the same key. A
/// moved-from batch may only be cleared, assigned to or destroyed.
class write_batch {
public:
  // -- constructors -----------------------------------------------------------

  write_batch();
  write_batch(write_batch&&) noexcept;
  write_batch& operator=(write_batch&&) noexcept;
  ~write_batch();

  // -- tables -----------------------------------------------------------------

  /// Adds or replaces the job `r.job`.
  void put_job(const job_record& r);

  /// Removes the job `id`. It is not an error if there is none.
  void del_job(job_id id);

  /// Adds or replaces the node `r.node`.
  void put_node(const node_record& r);

  /// Removes the node `id`. It is not an error if there is none.
  void del_node(node_id id);

  /// Adds or replaces the actor `r.actor`. Does not touch the name index.
  void put_actor(const actor_record& r);

  /// Marks the actor `id`, stored whole before as pending with no restart,
  /// alive on `node`: only that change is written, and the store merges it
  /// into the record (it reads back as the whole record with those fields
  /// changed). For any other change, `put_actor`.
  void put_actor_started(actor_id id, node_id node);

  /// Removes the actor `id`. Does not touch the name index.
  void del_actor(actor_id id);

  /// Points the name `name` in namespace `ns` at `actor`.
  void put_named_actor(const std::string& ns, const std::string& name,
                       actor_id actor);

  /// Frees the name `name` in namespace `ns`. It is not an error if it was
  /// free.
  void del_named_actor(const std::string& ns, const std::string& name);

  /// Sets `key` in namespace `ns` to `value`.
  void kv_put(const std::string& ns, const std::string& key,
              const std::string& value);

  /// Removes `key` from namespace `ns`. It is not an error if it is absent.
  void kv_del(const std::string& ns, const std::string& key);

  /// Records that the client write `r` was applied. Add it to the batch of
  /// the change it made, so that both are durable or neither is.
  void put_applied_request(const applied_request& r);

  /// Forgets the applied request numbered `order`. It is not an error if it
  /// is absent.
  void del_applied_request(std::uint64_t order);

  /// Adds or replaces the lineage of `r.object`.
  void put_lineage(const lineage_record& r);

  /// Removes the lineage of `object` of job `job`. It is not an error if
  /// there is none.
  void del_lineage(job_id job, const object_id& object);

  /// Moves every operation of `other` to the end of this batch, so that
  /// several changes commit in one write; `other` is left empty.
  void append(write_batch&& other);

  // -- properties -------------------------------------------------------------

  /// The number of operations added so far.
  std::size_t size() const noexcept;

  bool empty() const noexcept {
    return size() == 0;
  }

  /// Removes every operation.
  void clear();

private:
  friend class control_store;

  /// The encoded operations, in order (defined in write_batch.cpp).
  struct rep;

  std::unique_ptr<rep> rep_;
};

} // namespace prism::persistence
