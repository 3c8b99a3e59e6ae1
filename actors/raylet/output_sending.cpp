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

/// Answers the flushes whose batch was answered, or whose job has none in
/// flight.
void answer_flushes(raylet_actor* self) {
  auto& st = self->state;
  auto& waiting = st.output_flushes;
  for (auto i = waiting.begin(); i != waiting.end();) {
    if (st.output_busy.count(i->job) > 0 &&
        st.output_answered[i->job] < i->after) {
      ++i;
      continue;
    }
    i->promise.deliver(true);
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
    auto seq = ++st.output_sent[job];
    st.output_busy.insert(job);
    self->request(st.cfg.gcs, output_timeout,
                  protocol::output_lines{b.job, st.cfg.node, std::move(b.lines),
                                         b.dropped})
        .then([self, job, seq](bool) { output_taken(self, job, seq); },
              [self, job, seq](caf::error& err) {
                // A driver that does not keep up gets nothing for as long
                // again: what its workers write meanwhile is dropped here
                // and counted, not piled up in its mailbox.
                self->state.log->debug("job {}: output not taken: {}",
                                       job.value, self->system().render(err));
                self->delayed_send(self, output_timeout, output_atom::value,
                                   job, seq);
              });
  }
}

void output_taken(raylet_actor* self, job_id job, std::uint64_t seq) {
  auto& st = self->state;
  st.output_busy.erase(job);
  st.output_answered[job] = std::max(st.output_answered[job], seq);
  send_output(self);
  answer_flushes(self);
}

caf::result<bool> flush_output(raylet_actor* self, job_id job) {
  auto& st = self->state;
  if (!st.cfg.output)
    return true;
  // Short: the pipes are read at once (a few milliseconds at most).
  st.cfg.output->read_now();
  // What was read now goes in the batch after the one in flight, if one
  // is; else in the one sent now.
  bool busy = st.output_busy.count(job) > 0;
  if (!busy)
    send_output(self);
  auto after = st.output_sent[job] + (busy ? 1 : 0);
  auto rp = self->make_response_promise<bool>();
  st.output_flushes.push_back({job, after, rp});
  answer_flushes(self);
  return rp;
}

} // namespace prism::actors::raylet_internal
