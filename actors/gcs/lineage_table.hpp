#pragma once

// Durable lineage: the task that makes each durable object, a table of its
// own which no user key reaches.

#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <caf/response_promise.hpp>

#include "control_store.hpp"
#include "gcs/gcs_actor.hpp"
#include "prism/ids.hpp"
#include "protocol/lineage.hpp"

namespace prism::actors::gcs_detail {

struct lineage_table {
  /// Durable lineage by object, and each job's objects, so that a job's end
  /// drops its records without a scan of them all.
  std::unordered_map<object_id, persistence::lineage_record> records;
  std::unordered_map<job_id, std::unordered_set<object_id>> by_job;
};

/// Stores the lineage of an object; answers once durable.
caf::response_promise put_lineage(gcs_actor* self, protocol::lineage_put& msg);

/// Deletes the lineage of an object; answers whether there was one.
caf::response_promise delete_lineage(gcs_actor* self,
                                     const protocol::lineage_del& msg);

/// The lineage of an object.
caf::response_promise get_lineage(gcs_actor* self,
                                  const protocol::lineage_get& msg);

/// How many objects have lineage.
caf::response_promise count_lineage(gcs_actor* self);

/// The lineage records of a job's durable tasks go with the job.
void forget_lineage_of_job(gcs_actor* self, job_id job);

/// Takes back the lineage that storage kept, and drops that of jobs that
/// ended meanwhile.
void recover_lineage(gcs_actor* self,
                     std::vector<persistence::lineage_record>& records);

} // namespace prism::actors::gcs_detail
