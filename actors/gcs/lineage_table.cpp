#include "gcs/lineage_table.hpp"

#include <utility>

#include <caf/all.hpp>

#include "gcs/gcs_state.hpp"

namespace prism::actors::gcs_detail {

caf::response_promise put_lineage(gcs_actor* self, protocol::lineage_put& msg) {
  auto& st = self->state;
  persistence::lineage_record rec{msg.object, msg.job,
                                  std::move(msg.task_spec)};
  auto& lin = st.lineage;
  if (auto i = lin.records.find(msg.object);
      i != lin.records.end() && i->second.job != msg.job)
    lin.by_job[i->second.job].erase(msg.object);
  lin.by_job[msg.job].insert(msg.object);
  if (st.durability.storage) {
    persistence::write_batch b;
    b.put_lineage(rec);
    commit(self, std::move(b));
  }
  lin.records[msg.object] = std::move(rec);
  return reply_when_durable(self, caf::make_message(true));
}

namespace {

/// Drops the lineage of `object` from memory and adds its delete to `b`.
/// Returns whether there was one.
bool drop_lineage(gcs_state& st, const object_id& object,
                  persistence::write_batch& b) {
  auto& lin = st.lineage;
  auto i = lin.records.find(object);
  if (i == lin.records.end())
    return false;
  if (st.durability.storage)
    b.del_lineage(i->second.job, object);
  if (auto j = lin.by_job.find(i->second.job); j != lin.by_job.end()) {
    j->second.erase(object);
    if (j->second.empty())
      lin.by_job.erase(j);
  }
  lin.records.erase(i);
  return true;
}

} // namespace

caf::response_promise delete_lineage(gcs_actor* self,
                                     const protocol::lineage_del& msg) {
  persistence::write_batch b;
  bool existed = drop_lineage(self->state, msg.object, b);
  commit(self, std::move(b));
  return reply_when_durable(self, caf::make_message(existed));
}

caf::response_promise get_lineage(gcs_actor* self,
                                  const protocol::lineage_get& msg) {
  auto& records = self->state.lineage.records;
  protocol::lineage_value result;
  if (auto i = records.find(msg.object); i != records.end()) {
    result.found = true;
    result.task_spec = i->second.task_spec;
  }
  return reply_when_durable(self, caf::make_message(result));
}

caf::response_promise count_lineage(gcs_actor* self) {
  return reply_when_durable(self, caf::make_message(static_cast<std::uint64_t>(
                                      self->state.lineage.records.size())));
}

void forget_lineage_of_job(gcs_actor* self, job_id job) {
  auto& st = self->state;
  auto i = st.lineage.by_job.find(job);
  if (i == st.lineage.by_job.end())
    return;
  persistence::write_batch b;
  for (const auto& object : std::exchange(i->second, {}))
    drop_lineage(st, object, b);
  st.lineage.by_job.erase(job);
  commit(self, std::move(b));
}

void recover_lineage(gcs_actor* self,
                     std::vector<persistence::lineage_record>& records) {
  auto& st = self->state;
  for (auto& r : records) {
    st.lineage.by_job[r.job].insert(r.object);
    st.lineage.records[r.object] = std::move(r);
  }
  // The records of jobs that ended meanwhile (all of them, after the whole
  // cluster stopped) go now.
  std::vector<job_id> ended;
  for (const auto& [job, objects] : st.lineage.by_job)
    if (auto j = st.jobs.entries.find(job);
        j == st.jobs.entries.end() || !j->second.running)
      ended.push_back(job);
  for (auto job : ended)
    forget_lineage_of_job(self, job);
}

} // namespace prism::actors::gcs_detail
