#include "floor_actors.hpp"

#include <algorithm>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include <caf/stateful_actor.hpp>

#include "bench.hpp"

namespace prism::bench {

namespace {

struct client_state {
  caf::actor server;
  caf::duration timeout;
  std::size_t unsent = 0;
  std::size_t unanswered = 0;
  // Shared so that the promise outlives set_value, whatever the waiter does.
  std::shared_ptr<std::promise<void>> done;
};

using client_actor = caf::stateful_actor<client_state>;

void send_request(client_actor* self) {
  auto& st = self->state;
  --st.unsent;
  self->request(st.server, st.timeout, 42)
      .then(
          [self](int) {
            auto& st = self->state;
            if (st.unsent > 0)
              send_request(self);
            if (--st.unanswered == 0) {
              st.done->set_value();
              self->quit();
            }
          },
          [self](caf::error& err) {
            self->state.done->set_exception(
                std::make_exception_ptr(std::runtime_error(
                    "a floor request failed: " + self->system().render(err))));
            self->quit();
          });
}

/// Lives on its pending responses alone; it needs no behavior of its own.
void client(client_actor* self, caf::actor server, std::size_t total,
            std::size_t window, caf::duration timeout,
            std::shared_ptr<std::promise<void>> done) {
  auto& st = self->state;
  st.server = std::move(server);
  st.timeout = timeout;
  st.unsent = total;
  st.unanswered = total;
  st.done = std::move(done);
  for (std::size_t i = 0; i < std::min(window, total); ++i)
    send_request(self);
}

} // namespace

double timed_requests(caf::actor_system& sys, const caf::actor& server,
                      std::size_t total, std::size_t window,
                      caf::duration timeout) {
  return ops_per_second(total, [&] {
    auto done = std::make_shared<std::promise<void>>();
    auto finished = done->get_future();
    sys.spawn(client, server, total, window, timeout, std::move(done));
    finished.get();
  });
}

} // namespace prism::bench
