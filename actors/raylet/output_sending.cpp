// The output of the node's worker processes, on to the drivers of their
// jobs through the control store (protocol/output.hpp). One round of batches
// is out at a time: while a driver takes the last round, new lines wait in
// the node's bounded buffer (raylet/worker_output.hpp), which counts what it
// drops, and no worker ever waits for a driver.

#include "raylet/raylet_state.hpp"

namespace prism::actors::raylet_internal {

namespace {

/// How long a driver may take to answer a batch.
constexpr auto output_timeout = std::chrono::seconds{10};

void output_answered(raylet_actor* self) {
  auto& st = self->state;
  if (st.output_in_flight > 0 && --st.output_in_flight == 0)
    send_output(self);
}

} // namespace

void send_output(raylet_actor* self) {
  auto& st = self->state;
  if (!st.cfg.output || st.output_in_flight > 0)
    return;
  for (auto& b : st.cfg.output->take()) {
    ++st.output_in_flight;
    self->request(st.cfg.gcs, output_timeout,
                  protocol::output_lines{b.job, st.cfg.node, std::move(b.lines),
                                         b.dropped})
        .then([self](bool) { output_answered(self); },
              [self](caf::error& err) {
                self->state.log->debug("worker output not taken: {}",
                                       self->system().render(err));
                output_answered(self);
              });
  }
}

} // namespace prism::actors::raylet_internal
