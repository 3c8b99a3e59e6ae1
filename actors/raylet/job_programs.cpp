// What a job's worker processes run: the program of its driver, which the
// control store keeps by path and SHA-256. A node runs it only once the file
// at that path on this host is checked to be those bytes.

#include <thread>

#include "common/program_file.hpp"
#include "raylet/raylet_state.hpp"

namespace prism::actors::raylet_internal {

namespace {

/// How long the control store may take to name a job's program.
constexpr auto program_timeout = std::chrono::seconds{30};

// Checks `program` on this host, off the scheduler's threads (reading a
// large file takes a while), and reports to the raylet.
void check_off_thread(raylet_actor* self, job_id job,
                      protocol::job_program program) {
  std::thread{[raylet = self->address(), job, program = std::move(program)] {
    auto error = check_program_file(program.path, program.sha256, program.size);
    if (auto r = caf::actor_cast<caf::actor>(raylet))
      caf::anon_send(r, protocol::program_checked{job, program, error});
  }}.detach();
}

void look_up(raylet_actor* self, job_id job) {
  auto& st = self->state;
  self->request(st.cfg.gcs, program_timeout, protocol::get_job_program{job})
      .then(
          [self, job](protocol::job_program& program) {
            if (program.path.empty() || program.sha256.empty()) {
              self->send(self,
                         protocol::program_checked{
                             job, program,
                             "the control store knows no program of job " +
                                 std::to_string(job.value) +
                                 " (its driver registered none)"});
              return;
            }
            check_off_thread(self, job, std::move(program));
          },
          [self, job](caf::error& err) {
            self->send(self, protocol::program_checked{
                                 job,
                                 {},
                                 "cannot ask the control store for the "
                                 "program of job " +
                                     std::to_string(job.value) + ": " +
                                     self->system().render(err)});
          });
}

} // namespace

const worker_program* program_of(raylet_actor* self, job_id job) {
  auto& st = self->state;
  if (!st.cfg.program.empty())
    return &st.cfg.program;
  if (auto i = st.programs.find(job); i != st.programs.end())
    return &i->second;
  if (st.programs_pending.insert(job).second)
    look_up(self, job);
  return nullptr;
}

void program_checked(raylet_actor* self, protocol::program_checked& msg) {
  auto& st = self->state;
  st.programs_pending.erase(msg.job);
  if (!msg.error.empty()) {
    refuse_job(self, msg.job, errc::function_not_found,
               "worker processes of job " + std::to_string(msg.job.value) +
                   " cannot start on node " + st.cfg.node.hex() + ": " +
                   msg.error);
    return;
  }
  st.log->info("job {} runs {} ({} bytes, SHA-256 {})", msg.job.value,
               msg.program.path, msg.program.size, msg.program.sha256);
  st.programs[msg.job] =
      worker_program{std::move(msg.program.path), std::move(msg.program.argv)};
  start_queued_hosts(self);
  schedule(self);
}

} // namespace prism::actors::raylet_internal
