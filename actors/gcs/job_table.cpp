#include "gcs/job_table.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

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
  persistence::job_record r{.job = id,
                            .driver = j.driver,
                            .ns = j.ns,
                            .finished = !j.running,
                            .start_ms = j.start_ms,
                            .program_path = j.program.path,
                            .program_args = j.program.argv,
                            .program_sha256 = j.program.sha256,
                            .program_size = j.program.size};
  persistence::write_batch b;
  b.put_job(std::move(r));
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
  j = job_entry{msg.driver, msg.ns, true, now_ms(), msg.program};
  save_job(self, id, j);
  st.log->info("job {} started by driver {}", id.value, msg.driver.hex());
  return reply_when_durable(self, caf::make_message(protocol::job_started{id}));
}

protocol::job_program job_program_of(gcs_actor* self,
                                     const protocol::get_job_program& msg) {
  auto& st = self->state;
  auto i = st.jobs.entries.find(msg.job);
  return i != st.jobs.entries.end() ? i->second.program
                                    : protocol::job_program{};
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
  st.jobs.output_sinks.erase(msg.job);
  for (auto& [id, n] : st.nodes.entries)
    if (n.info.alive)
      self->send(n.info.raylet, msg);
  return reply_when_durable(self, caf::make_message(true));
}

void watch_driver(gcs_actor* self, const protocol::watch_driver& msg) {
  auto& st = self->state;
  auto j = st.jobs.entries.find(msg.job);
  if (!msg.owner || j == st.jobs.entries.end() || !j->second.running)
    return;
  if (st.jobs.drivers.emplace(msg.owner.address(), msg.job).second)
    self->monitor(msg.owner);
}

bool driver_gone(gcs_actor* self, const caf::actor_addr& source,
                 const caf::error& reason) {
  auto& st = self->state;
  auto d = st.jobs.drivers.find(source);
  if (d == st.jobs.drivers.end())
    return false;
  auto job = d->second;
  st.jobs.drivers.erase(d);
  auto j = st.jobs.entries.find(job);
  if (j == st.jobs.entries.end() || !j->second.running)
    return true; // it ended its job itself
  st.log->warn("the driver of job {} is gone ({}) without ending it; the job "
               "ends: its actors and workers go",
               job.value, self->system().render(reason));
  finish_job(self, protocol::finish_job{job});
  return true;
}

void end_unwatched_jobs(gcs_actor* self) {
  auto& st = self->state;
  std::vector<job_id> unwatched;
  for (auto& [id, j] : st.jobs.entries)
    if (j.running)
      unwatched.push_back(id);
  for (auto& [owner, job] : st.jobs.drivers)
    unwatched.erase(std::remove(unwatched.begin(), unwatched.end(), job),
                    unwatched.end());
  for (auto& job : unwatched) {
    st.log->warn("the driver of job {} did not report back after the control "
                 "store restarted; the job ends",
                 job.value);
    finish_job(self, protocol::finish_job{job});
  }
}

void subscribe_output(gcs_actor* self, protocol::subscribe_output& msg) {
  if (!msg.sink)
    return;
  self->monitor(msg.sink);
  self->state.jobs.output_sinks[msg.job] = std::move(msg.sink);
}

caf::result<caf::message> forward_output(gcs_actor* self,
                                         protocol::output_lines& msg) {
  auto& sinks = self->state.jobs.output_sinks;
  auto sink = sinks.find(msg.job);
  if (sink == sinks.end())
    return caf::make_message(true);
  self->delegate(sink->second, std::move(msg));
  return caf::delegated<caf::message>{};
}

caf::result<bool> flush_output(gcs_actor* self,
                               const protocol::flush_output& msg) {
  auto rp = self->make_response_promise<bool>();
  auto left = std::make_shared<std::size_t>(0);
  for (auto& [id, n] : self->state.nodes.entries)
    if (n.info.alive && n.info.raylet)
      ++*left;
  if (*left == 0) {
    rp.deliver(true);
    return rp;
  }
  auto one_done = [rp, left]() mutable {
    if (--*left == 0)
      rp.deliver(true);
  };
  for (auto& [id, n] : self->state.nodes.entries)
    if (n.info.alive && n.info.raylet)
      // Shorter than the driver's wait, so that a node that does not
      // answer leaves the others' answers in time.
      self->request(n.info.raylet, std::chrono::seconds{4}, msg)
          .then([one_done](bool) mutable { one_done(); },
                [one_done](caf::error&) mutable { one_done(); });
  return rp;
}

bool output_sink_gone(gcs_actor* self, const caf::actor_addr& source) {
  auto& sinks = self->state.jobs.output_sinks;
  bool found = false;
  for (auto i = sinks.begin(); i != sinks.end();) {
    if (i->second.address() == source) {
      i = sinks.erase(i);
      found = true;
    } else {
      ++i;
    }
  }
  return found;
}

} // namespace prism::actors::gcs_detail
