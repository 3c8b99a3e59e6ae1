#include "gcs/job_table.hpp"

#include <chrono>

#include <caf/all.hpp>

#include "gcs/gcs_state.hpp"

namespace prism::actors::gcs_detail {

namespace {

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

} // namespace

void save_job(gcs_actor* self, job_id id, const job_entry& j) {
  if (!self->state.durability.storage)
    return;
  persistence::write_batch b;
  b.put_job(
      persistence::job_record{id, j.driver, j.ns, !j.running, j.start_ms});
  commit(self, std::move(b));
}

caf::response_promise start_job(gcs_actor* self,
                                const protocol::start_job& msg) {
  auto& st = self->state;
  for (auto& [id, j] : st.jobs.entries)
    if (j.running && j.driver == msg.driver)
      // The same request again, after a restart of the control store.
      return reply_when_durable(self,
                                caf::make_message(protocol::job_started{id}));
  job_id id{st.jobs.next_job++};
  auto& j = st.jobs.entries[id];
  j = job_entry{msg.driver, msg.ns, true, now_ms()};
  save_job(self, id, j);
  st.log->info("job {} started by driver {}", id.value, msg.driver.hex());
  return reply_when_durable(self, caf::make_message(protocol::job_started{id}));
}

caf::response_promise finish_job(gcs_actor* self,
                                 const protocol::finish_job& msg) {
  auto& st = self->state;
  if (auto i = st.jobs.entries.find(msg.job); i != st.jobs.entries.end()) {
    i->second.running = false;
    save_job(self, msg.job, i->second);
  }
  for (auto& [id, a] : st.actors.entries)
    if (a.spec.job == msg.job && !a.spec.detached)
      mark_dead(self, a, internal::death_kind::job_ended, "its job ended");
  forget_lineage_of_job(self, msg.job);
  for (auto& [id, n] : st.nodes.entries)
    if (n.info.alive)
      self->send(n.info.raylet, msg);
  return reply_when_durable(self, caf::make_message(true));
}

} // namespace prism::actors::gcs_detail
