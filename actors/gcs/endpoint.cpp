#include <chrono>
#include <deque>
#include <mutex>
#include <unordered_map>
#include <vector>

#include <caf/all.hpp>

#include "common/default_handlers.hpp"
#include "common/log.hpp"
#include "gcs/gcs.hpp"
#include "gcs/gcs_client.hpp"
#include "prism/internal/thread_annotations.hpp"
#include "protocol/gcs_restart.hpp"

namespace prism::actors {

namespace {

using expire_atom = caf::atom_constant<caf::atom("ep_expire")>;
using clock_type = std::chrono::steady_clock;

/// The control store each endpoint of this process forwards to now
/// (`attached_gcs`). Weak: a handle kept here must not outlive its actor
/// system.
class attached_stores {
public:
  void set(const caf::actor_control_block* endpoint, caf::actor_addr gcs) {
    std::lock_guard<std::mutex> guard{mu_};
    stores_[endpoint] = std::move(gcs);
  }

  void erase(const caf::actor_control_block* endpoint) {
    std::lock_guard<std::mutex> guard{mu_};
    stores_.erase(endpoint);
  }

  caf::actor find(const caf::actor_control_block* endpoint) {
    std::lock_guard<std::mutex> guard{mu_};
    auto i = stores_.find(endpoint);
    return i == stores_.end() ? caf::actor{}
                              : caf::actor_cast<caf::actor>(i->second);
  }

private:
  std::mutex mu_;
  std::unordered_map<const caf::actor_control_block*, caf::actor_addr>
      stores_ GUARDED_BY(mu_);
};

attached_stores& attached() {
  static attached_stores stores;
  return stores;
}

/// A message that arrived while no control store was attached.
struct buffered_message {
  caf::response_promise promise;
  caf::message content;
  /// Requests are answered with an error after this; other messages wait.
  clock_type::time_point deadline;
  bool request = false;
};

struct endpoint_state {
  static inline const char* name = "gcs_endpoint";

  std::shared_ptr<spdlog::logger> log;
  std::chrono::milliseconds wait{0};
  caf::actor gcs;
  std::uint64_t generation = 0;
  std::vector<caf::actor> watchers;
  std::deque<buffered_message> buffered;
  bool expiry_scheduled = false;
};

using endpoint_actor = caf::stateful_actor<endpoint_state>;

void schedule_expiry(endpoint_actor* self) {
  auto& st = self->state;
  if (st.expiry_scheduled)
    return;
  for (auto& m : st.buffered)
    if (m.request) {
      st.expiry_scheduled = true;
      auto left = m.deadline - clock_type::now();
      self->delayed_send(
          self,
          std::max(std::chrono::duration_cast<std::chrono::milliseconds>(left),
                   std::chrono::milliseconds{1}),
          expire_atom::value);
      return;
    }
}

void expire(endpoint_actor* self) {
  auto& st = self->state;
  st.expiry_scheduled = false;
  auto now = clock_type::now();
  std::deque<buffered_message> kept;
  for (auto& m : st.buffered) {
    if (m.request && m.deadline <= now)
      m.promise.deliver(caf::make_error(
          caf::sec::request_timeout,
          "the control store was unavailable for " +
              std::to_string(st.wait.count()) +
              " ms (gcs_reconnect_timeout_ms); it is restarting or down"));
    else
      kept.push_back(std::move(m));
  }
  st.buffered = std::move(kept);
  schedule_expiry(self);
}

void attach(endpoint_actor* self, caf::actor gcs) {
  auto& st = self->state;
  if (!gcs) {
    st.log->warn("ignored a control store without a handle");
    return;
  }
  if (st.gcs)
    self->demonitor(st.gcs);
  st.gcs = std::move(gcs);
  self->monitor(st.gcs);
  ++st.generation;
  if (!st.buffered.empty())
    st.log->info("the control store is back; forwarding {} messages that "
                 "waited for it",
                 st.buffered.size());
  for (auto& m : st.buffered)
    m.promise.delegate(st.gcs, std::move(m.content));
  st.buffered.clear();
  // Only now: what a sender sends it directly follows what waited here.
  attached().set(self->ctrl(), st.gcs.address());
  if (st.generation > 1)
    for (auto& w : st.watchers)
      self->send(w, protocol::gcs_restarted{st.generation});
}

/// The attached control store, or a watcher, went down.
void on_down(endpoint_actor* self, const caf::down_msg& msg) {
  auto& st = self->state;
  if (st.gcs && msg.source == st.gcs.address()) {
    auto level = msg.reason == caf::exit_reason::user_shutdown
                     ? spdlog::level::info
                     : spdlog::level::warn;
    st.log->log(level,
                "the control store went down ({}); messages to it wait for "
                "its restart",
                self->system().render(msg.reason));
    attached().erase(self->ctrl());
    st.gcs = nullptr;
    return;
  }
  auto& ws = st.watchers;
  ws.erase(std::remove_if(
               ws.begin(), ws.end(),
               [&](const caf::actor& w) { return w.address() == msg.source; }),
           ws.end());
}

/// Forwards a message to the control store attached now, or buffers it
/// until one attaches.
caf::result<caf::message> forward_or_buffer(endpoint_actor* self,
                                            caf::message_view& x) {
  auto& st = self->state;
  if (st.gcs)
    return self->delegate(st.gcs, x.move_content_to_message());
  auto rp = self->make_response_promise();
  buffered_message m;
  m.request = rp.pending() && !rp.async();
  m.deadline = clock_type::now() + st.wait;
  m.content = x.move_content_to_message();
  m.promise = rp;
  st.buffered.push_back(std::move(m));
  schedule_expiry(self);
  return rp;
}

caf::behavior endpoint_behavior(endpoint_actor* self,
                                std::chrono::milliseconds wait) {
  auto& st = self->state;
  st.log = component_logger("gcs");
  st.wait = wait;
  self->attach_functor([key = self->ctrl()] { attached().erase(key); });
  install_default_handlers(self, st.log);
  set_checked_down_handler(self,
                           [self](caf::down_msg& msg) { on_down(self, msg); });
  self->set_default_handler(
      [](caf::scheduled_actor* ptr,
         caf::message_view& x) -> caf::result<caf::message> {
        return forward_or_buffer(static_cast<endpoint_actor*>(ptr), x);
      });
  return {
      [self](protocol::gcs_attach& msg) { attach(self, std::move(msg.gcs)); },
      [self](protocol::watch_gcs& msg) {
        self->monitor(msg.watcher);
        self->state.watchers.push_back(std::move(msg.watcher));
      },
      [self](expire_atom) { expire(self); },
  };
}

} // namespace

caf::actor attached_gcs(const caf::actor& endpoint) {
  auto gcs =
      attached().find(caf::actor_cast<caf::actor_control_block*>(endpoint));
  return gcs ? gcs : endpoint;
}

caf::actor spawn_gcs_endpoint(caf::actor_system& sys,
                              std::chrono::milliseconds wait) {
  return sys.spawn(endpoint_behavior, wait);
}

} // namespace prism::actors
