#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "common/default_handlers.hpp"
#include "common/log.hpp"
#include "gcs/gcs.hpp"
#include "gcs/gcs_storage.hpp"
#include "prism/internal/backoff.hpp"
#include "protocol/gcs_keeper.hpp"
#include "protocol/gcs_restart.hpp"

namespace prism::actors {

namespace {

using retry_atom = caf::atom_constant<caf::atom("gcs_retry")>;

constexpr std::chrono::milliseconds first_backoff{10};
/// Each pause is up to this share shorter, at random.
constexpr double retry_jitter = 0.2;

struct keeper_state {
  static inline const char* name = "gcs_keeper";

  /// What the keeper does when the control store goes down.
  enum class on_down {
    /// It died unasked: start it again.
    restart,
    /// `gcs_stop_atom`: leave it down.
    stay_down,
    /// `gcs_close_atom`: close the storage and end the keeper.
    close,
  };

  std::shared_ptr<spdlog::logger> log;
  gcs_keeper_config cfg;
  std::shared_ptr<gcs_storage> storage;
  caf::actor instance;
  on_down next = on_down::restart;
  /// Requests answered once the control store is down.
  std::vector<caf::response_promise> waiting;
  /// The pauses between attempts to start the control store again (up to
  /// `cfg.max_backoff`, set with `cfg`).
  internal::retry_backoff retries{backoff{}};
  bool retry_scheduled = false;
  /// When the running control store started.
  std::chrono::steady_clock::time_point started;

  keeper_state() = default;
  keeper_state(const keeper_state&) = delete;
  keeper_state& operator=(const keeper_state&) = delete;

  ~keeper_state() {
    // Ended without `gcs_close_atom` (an exit message): the control store
    // goes too, and the storage closes behind it.
    if (instance)
      caf::anon_send_exit(instance, caf::exit_reason::user_shutdown);
    if (storage)
      storage->close();
  }
};

using keeper_actor = caf::stateful_actor<keeper_state>;

void spawn_instance(keeper_actor* self, gcs_start start) {
  auto& st = self->state;
  gcs_config gc;
  gc.storage = st.storage;
  gc.start = start;
  gc.recovery_grace = st.cfg.recovery_grace;
  gc.max_dead_actors = st.cfg.max_dead_actors;
  gc.programs = st.cfg.programs;
  gc.task_events = st.cfg.task_events;
  gc.jobs = st.cfg.jobs;
  st.instance = spawn_gcs(self->system(), std::move(gc));
  st.started = std::chrono::steady_clock::now();
  self->monitor(st.instance);
  self->send(st.cfg.endpoint, protocol::gcs_attach{st.instance});
}

/// Opens the storage and starts a control store that recovers from it;
/// returns why not, or an empty string.
std::string try_start(keeper_actor* self) {
  auto& st = self->state;
  try {
    st.storage = st.cfg.open_storage();
  } catch (const std::exception& e) {
    return e.what();
  }
  spawn_instance(self, gcs_start::restart);
  return {};
}

void schedule_retry(keeper_actor* self, std::chrono::milliseconds after) {
  auto& st = self->state;
  if (st.retry_scheduled)
    return;
  st.retry_scheduled = true;
  self->delayed_send(self, after, retry_atom::value);
}

void retry(keeper_actor* self) {
  auto& st = self->state;
  st.retry_scheduled = false;
  if (st.instance || st.next != keeper_state::on_down::restart)
    return;
  auto why = try_start(self);
  if (why.empty()) {
    st.log->info("the control store restarted from its storage");
    return;
  }
  auto pause = st.retries.next();
  st.log->warn("the control store's storage cannot be opened ({}); trying "
               "again in {} ms",
               why, pause.count());
  schedule_retry(self, pause);
}

void instance_down(keeper_actor* self, const caf::error& reason) {
  auto& st = self->state;
  st.instance = nullptr;
  if (st.storage) {
    // Closing commits what is queued; a crash drops it, as none of it was
    // acknowledged.
    if (st.next == keeper_state::on_down::close)
      st.storage->close();
    else
      st.storage->crash();
    st.storage.reset();
  }
  for (auto& rp : st.waiting)
    rp.deliver(true);
  st.waiting.clear();
  switch (st.next) {
  case keeper_state::on_down::close:
    self->quit();
    return;
  case keeper_state::on_down::stay_down:
    return;
  case keeper_state::on_down::restart:
    // One that ran a while starts again at once; one that dies soon after
    // each start (a disk that opens but refuses writes) waits longer each
    // time.
    if (std::chrono::steady_clock::now() - st.started > std::chrono::seconds{1})
      st.retries.reset();
    auto pause = st.retries.next();
    st.log->error("the control store stopped ({}); starting it again from "
                  "its storage in {} ms",
                  self->system().render(reason), pause.count());
    schedule_retry(self, pause);
    return;
  }
}

caf::behavior keeper_behavior(keeper_actor* self, gcs_keeper_config cfg,
                              std::shared_ptr<gcs_storage> storage) {
  auto& st = self->state;
  st.log = component_logger("gcs");
  st.cfg = std::move(cfg);
  st.retries = internal::retry_backoff{
      backoff{first_backoff, st.cfg.max_backoff, retry_jitter}};
  st.storage = std::move(storage);
  install_default_handlers(self, st.log);
  set_checked_down_handler(self, [self](caf::down_msg& msg) {
    if (self->state.instance && msg.source == self->state.instance.address())
      instance_down(self, msg.reason);
  });
  spawn_instance(self, st.cfg.first_start);
  return {
      [self](protocol::gcs_stop_atom) -> caf::result<bool> {
        auto& st = self->state;
        st.next = keeper_state::on_down::stay_down;
        if (!st.instance)
          return false;
        self->send_exit(st.instance, caf::exit_reason::kill);
        st.waiting.push_back(self->make_response_promise());
        return st.waiting.back();
      },
      [self](protocol::gcs_start_atom) -> caf::result<bool, std::string> {
        auto& st = self->state;
        if (st.instance)
          return {false, std::string{}};
        auto before = st.next;
        st.next = keeper_state::on_down::restart;
        auto why = try_start(self);
        if (!why.empty() && before == keeper_state::on_down::stay_down)
          // Stopped on request and not started: whoever asked hears why.
          st.next = keeper_state::on_down::stay_down;
        else if (!why.empty())
          // It was restarting on its own: it keeps trying.
          schedule_retry(self, st.retries.next());
        return {why.empty(), why};
      },
      [self](protocol::gcs_close_atom) -> caf::result<bool> {
        auto& st = self->state;
        st.next = keeper_state::on_down::close;
        if (!st.instance) {
          if (st.storage)
            st.storage->close();
          self->quit();
          return true;
        }
        self->send_exit(st.instance, caf::exit_reason::user_shutdown);
        st.waiting.push_back(self->make_response_promise());
        return st.waiting.back();
      },
      [self](protocol::gcs_up_atom) {
        return static_cast<bool>(self->state.instance);
      },
      [self](retry_atom) { retry(self); },
  };
}

} // namespace

caf::actor spawn_gcs_keeper(caf::actor_system& sys, gcs_keeper_config cfg,
                            std::shared_ptr<gcs_storage> storage) {
  return sys.spawn<caf::detached>(keeper_behavior, std::move(cfg),
                                  std::move(storage));
}

} // namespace prism::actors
