// The output of the node's worker processes, on to the drivers of their
// jobs through the control store (protocol/output.hpp). One batch per job is
// out at a time: while a driver takes the last, new lines of its job wait in
// the node's bounded buffer (raylet/worker_output.hpp), which counts what it
// drops, and no worker, and no other job's driver, ever waits for it.

#include "raylet/raylet_state.hpp"

namespace prism::actors::raylet_internal {

namespace {

/// How long a driver may take to answer a batch.
constexpr auto output_timeout = std::chrono::seconds{10};

/// Answers the flushes of jobs with no batch in flight.
void answer_flushes(raylet_actor* self) {
  auto& st = self->state;
  auto& waiting = st.output_flushes;
  for (auto i = waiting.begin(); i != waiting.end();) {
    if (st.output_busy.count(i->first) > 0) {
      ++i;
      continue;
    }
    i->second.deliver(true);
    i = waiting.erase(i);
  }
}

} // namespace

void send_output(raylet_actor* self) {
  auto& st = self->state;
  if (!st.cfg.output)
    return;
  for (auto& b : st.cfg.output->take(st.output_busy)) {
    auto job = b.job;
    st.output_busy.insert(job);
    self->request(st.cfg.gcs, output_timeout,
                  protocol::output_lines{b.job, st.cfg.node, std::move(b.lines),
                                         b.dropped})
        .then([self, job](bool) { output_taken(self, job); },
              [self, job](caf::error& err) {
                // A driver that does not keep up gets nothing for as long
                // again: what its workers write meanwhile is dropped here
                // and counted, not piled up in its mailbox.
                self->state.log->debug("job {}: output not taken: {}",
                                       job.value, self->system().render(err));
                self->delayed_send(self, output_timeout, output_atom::value,
                                   job);
              });
  }
}

void output_taken(raylet_actor* self, job_id job) {
  self->state.output_busy.erase(job);
  send_output(self);
  answer_flushes(self);
}

caf::result<bool> flush_output(raylet_actor* self, job_id job) {
  auto& st = self->state;
  if (!st.cfg.output)
    return true;
  // Short: the pipes are read at once (a few milliseconds at most).
  st.cfg.output->read_now();
  auto rp = self->make_response_promise<bool>();
  st.output_flushes.emplace_back(job, rp);
  send_output(self);
  answer_flushes(self);
  return rp;
}

} // namespace prism::actors::raylet_internal
