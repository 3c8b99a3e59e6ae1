#include "supervisor/supervisor.hpp"

#include <exception>
#include <memory>
#include <optional>
#include <unordered_map>

#include <caf/all.hpp>
#include <nlohmann/json.hpp>

#include "common/default_handlers.hpp"
#include "common/log.hpp"
#include "prism/error.hpp"
#include "prism/internal/supervision_core.hpp"
#include "protocol/supervisor.hpp"

// The supervisor carries out the plans of `internal::supervision_core`: it
// starts, monitors and stops the children and tells the core what happened.
//
// It monitors its children rather than linking to them. With links, a child's
// death would arrive as an exit message, the same kind of message the parent
// uses to stop this supervisor, and an exit handler would have to tell the
// two apart (and a missing one would let a crashing child take the supervisor
// down with it). With monitors, a child's death is only ever information (a
// down message), and an exit message always means "stop": each has its own
// handler. What links would add, that children die with a supervisor that is
// killed, an attached functor does.

namespace prism::actors {

namespace {

// Self-messages: they never leave the supervisor, so they need no
// registration and are no part of the protocol.
using stop_timeout_atom = caf::atom_constant<caf::atom("sv_stop_to")>;
using wake_atom = caf::atom_constant<caf::atom("sv_wake")>;

using internal::action_kind;
using internal::supervision_action;
using internal::supervision_core;
using protocol::supervisor_errc;

using time_point = supervision_core::time_point;
using child_handles = std::unordered_map<std::string, caf::actor>;
/// Requests waiting for a child, by child id.
using waiter_map =
    std::unordered_map<std::string, std::vector<caf::response_promise>>;

struct supervisor_state {
  static inline const char* name = "supervisor";

  std::shared_ptr<spdlog::logger> log;
  std::optional<supervision_core> core;
  /// By child id; under simple_one_for_one, the template alone.
  std::unordered_map<std::string, child_definition> definitions;
  std::optional<child_definition> template_definition;
  /// The live children; shared with the functor that kills them should the
  /// supervisor itself be killed.
  std::shared_ptr<child_handles> live = std::make_shared<child_handles>();
  std::unordered_map<caf::actor_addr, std::string> id_of;
  /// The stop in flight per child, so a late timeout of an earlier stop does
  /// not kill a later incarnation.
  std::unordered_map<std::string, std::uint64_t> stop_attempt;
  std::uint64_t next_stop_attempt = 1;
  /// The time the wake-up for the next delayed start is armed for.
  std::optional<time_point> wake_at;
  /// Requests waiting for a child to run (start) or to be down (terminate).
  waiter_map start_waiters;
  waiter_map stop_waiters;
  /// Requests (`await_started`) waiting for every child to have started once.
  std::vector<caf::response_promise> started_waiters;
  /// The reason to exit with once every child is down after `stop_all`.
  caf::error stop_reason;
};

using supervisor_actor = caf::stateful_actor<supervisor_state>;

// -- helpers ------------------------------------------------------------------

time_point now(supervisor_actor* self) {
  return self->clock().now();
}

child_exit classify(const caf::error& reason) {
  if (!reason || reason == caf::exit_reason::normal)
    return child_exit::normal;
  if (reason == caf::exit_reason::user_shutdown)
    return child_exit::shutdown;
  return child_exit::abnormal;
}

caf::error to_error(supervisor_errc refusal, const std::string& id) {
  if (refusal == supervisor_errc::none)
    return caf::none;
  return protocol::make_error(refusal, id);
}

const child_definition* definition_of(supervisor_actor* self,
                                      const std::string& id) {
  auto& st = self->state;
  if (st.template_definition)
    return &*st.template_definition;
  auto i = st.definitions.find(id);
  return i != st.definitions.end() ? &i->second : nullptr;
}

// Whether the supervisor has started: every child was started once. One that
// gives up or stops never has; `finish` answers those waiting for it.
bool started_up(const supervision_core& core) {
  return !core.starting_up() && !core.shutting_down() &&
         core.escalation() == internal::escalation_cause::none;
}

// Answers the requests whose child reached the state they wait for.
void settle(supervisor_actor* self) {
  auto& st = self->state;
  auto& core = *st.core;
  for (auto i = st.start_waiters.begin(); i != st.start_waiters.end();) {
    auto& [id, promises] = *i;
    auto info = core.find(id);
    auto handle = st.live->find(id);
    if (info && info->running && handle != st.live->end()) {
      for (auto& rp : promises)
        rp.deliver(handle->second);
    } else if (!info || core.settled_down(id)) {
      for (auto& rp : promises)
        rp.deliver(protocol::make_error(supervisor_errc::start_failed, id));
    } else {
      ++i;
      continue;
    }
    i = st.start_waiters.erase(i);
  }
  for (auto i = st.stop_waiters.begin(); i != st.stop_waiters.end();) {
    if (!core.down(i->first)) {
      ++i;
      continue;
    }
    for (auto& rp : i->second)
      rp.deliver(caf::unit);
    i = st.stop_waiters.erase(i);
  }
  if (started_up(core)) {
    for (auto& rp : st.started_waiters)
      rp.deliver(caf::unit);
    st.started_waiters.clear();
  }
}

// Exits once every child is down; requests still waiting get an error.
void finish(supervisor_actor* self, caf::error reason) {
  auto& st = self->state;
  auto fail_all = [](auto& waiters) {
    for (auto& [id, promises] : waiters)
      for (auto& rp : promises)
        rp.deliver(protocol::make_error(supervisor_errc::shutting_down, id));
    waiters.clear();
  };
  fail_all(st.start_waiters);
  fail_all(st.stop_waiters);
  for (auto& rp : st.started_waiters)
    rp.deliver(protocol::make_error(supervisor_errc::start_failed));
  st.started_waiters.clear();
  self->quit(std::move(reason));
}

// -- carrying out the plan ----------------------------------------------------

void stop(supervisor_actor* self, const supervision_action& action) {
  auto& st = self->state;
  auto& id = action.child;
  st.core->on_stop_sent(id);
  auto i = st.live->find(id);
  if (i == st.live->end()) {
    // The core thinks it runs but no handle is left: nothing to wait for.
    st.log->error("{}: no handle of running child '{}'", self->name(), id);
    st.core->on_exit(id, child_exit::shutdown, now(self));
    return;
  }
  if (action.shutdown.brutal_kill) {
    st.log->debug("{}: killing child '{}'", self->name(), id);
    self->send_exit(i->second, caf::exit_reason::kill);
    return;
  }
  st.log->debug("{}: stopping child '{}'", self->name(), id);
  auto attempt = st.next_stop_attempt++;
  st.stop_attempt[id] = attempt;
  self->send_exit(i->second, caf::exit_reason::user_shutdown);
  self->delayed_send(self, action.shutdown.timeout, stop_timeout_atom::value,
                     id, attempt);
}

void carry_out_plan(supervisor_actor* self);

// The child's start completed, unless it is down already.
void on_child_started(supervisor_actor* self, const caf::actor& handle) {
  auto& st = self->state;
  auto i = st.id_of.find(handle.address());
  if (i == st.id_of.end())
    return;
  st.log->debug("{}: child '{}' started", self->name(), i->second);
  st.core->on_started(i->second, now(self));
  carry_out_plan(self);
}

// The child's start failed or took too long: it is killed, and its down
// message tells the core that the start failed.
void on_start_error(supervisor_actor* self, const caf::actor& handle,
                    const caf::error& err) {
  auto& st = self->state;
  auto i = st.id_of.find(handle.address());
  if (i == st.id_of.end())
    return;
  st.log->warn("{}: child '{}' failed to start: {}", self->name(), i->second,
               self->system().render(err));
  self->send_exit(handle, caf::exit_reason::kill);
}

void start(supervisor_actor* self, const std::string& id) {
  auto& st = self->state;
  auto def = definition_of(self, id);
  caf::actor handle;
  std::string failure = "its start function returned no actor";
  if (def == nullptr) {
    failure = "it has no definition";
  } else {
    try {
      handle = def->start_named ? def->start_named(self->system(), id)
                                : def->start(self->system());
    } catch (const std::exception& e) {
      failure = std::string{"its start function threw: "} + e.what();
    } catch (...) {
      failure = "its start function threw";
    }
  }
  if (!handle) {
    st.log->warn("{}: child '{}' failed to start: {}", self->name(), id,
                 failure);
    st.core->on_start_failed(id, now(self));
    return;
  }
  self->monitor(handle);
  st.id_of[handle.address()] = id;
  (*st.live)[id] = handle;
  if (!def->start_timeout) {
    st.core->on_started(id, now(self));
    return;
  }
  // The next child starts only once this one says it has started.
  st.core->on_start_sent(id);
  self->request(handle, *def->start_timeout, protocol::await_started{})
      .then([self, handle] { on_child_started(self, handle); },
            [self, handle](caf::error& err) {
              on_start_error(self, handle, err);
            });
}

void arm_wake(supervisor_actor* self, time_point at) {
  auto& st = self->state;
  if (st.wake_at && *st.wake_at <= at)
    return; // an earlier wake-up looks again
  st.wake_at = at;
  self->delayed_send(self, at - now(self), wake_atom::value);
}

// Carries out the plan up to the next thing to wait for: a child going down,
// or the time of a delayed start.
void carry_out_plan(supervisor_actor* self) {
  auto& st = self->state;
  auto& core = *st.core;
  while (!core.stop_in_flight() && !core.start_in_flight()) {
    auto plan = core.plan();
    if (plan.empty())
      break;
    auto& next = plan.front();
    switch (next.kind) {
    case action_kind::stop:
      stop(self, next);
      break;
    case action_kind::start:
      if (next.not_before > now(self)) {
        arm_wake(self, next.not_before);
        settle(self);
        return;
      }
      start(self, next.child);
      break;
    case action_kind::escalate: {
      auto cause = core.escalation() == internal::escalation_cause::start_failed
                       ? supervisor_errc::start_failed
                       : supervisor_errc::intensity_exceeded;
      st.log->warn("{}: giving up ({}); every child is down", self->name(),
                   to_string(cause));
      finish(self, protocol::make_error(cause));
      return;
    }
    case action_kind::exit:
      finish(self, st.stop_reason);
      return;
    }
  }
  settle(self);
}

// -- message handlers ---------------------------------------------------------

void on_child_down(supervisor_actor* self, caf::down_msg& msg) {
  auto& st = self->state;
  auto i = st.id_of.find(msg.source);
  if (i == st.id_of.end()) {
    st.log->debug("{}: down message of a stranger: {}", self->name(),
                  self->system().render(msg.reason));
    return;
  }
  auto id = std::move(i->second);
  st.id_of.erase(i);
  if (auto h = st.live->find(id);
      h != st.live->end() && h->second.address() == msg.source)
    st.live->erase(h);
  st.stop_attempt.erase(id);
  auto how = classify(msg.reason);
  st.log->info("{}: child '{}' exited ({}): {}", self->name(), id,
               to_string(how), self->system().render(msg.reason));
  st.core->on_exit(id, how, now(self));
  carry_out_plan(self);
}

void on_stop_timeout(supervisor_actor* self, const std::string& id,
                     std::uint64_t attempt) {
  auto& st = self->state;
  auto i = st.stop_attempt.find(id);
  if (i == st.stop_attempt.end() || i->second != attempt)
    return; // that stop is over
  st.stop_attempt.erase(i);
  if (auto h = st.live->find(id); h != st.live->end()) {
    st.log->warn("{}: child '{}' did not stop in time; killing it",
                 self->name(), id);
    self->send_exit(h->second, caf::exit_reason::kill);
  }
}

void on_exit_request(supervisor_actor* self, caf::exit_msg& msg) {
  auto& st = self->state;
  if (!msg.reason)
    return; // a linked actor finished normally; no reason to stop
  st.log->info("{}: asked to exit: {}", self->name(),
               self->system().render(msg.reason));
  if (!st.stop_reason)
    st.stop_reason = msg.reason;
  st.core->stop_all();
  carry_out_plan(self);
}

// Answers `command` now if it failed, else once `settle` sees it done.
caf::response_promise await_child(supervisor_actor* self,
                                  supervisor_errc status, const std::string& id,
                                  waiter_map& waiters) {
  auto rp = self->make_response_promise();
  if (status != supervisor_errc::none) {
    self->state.log->info("{}: request for child '{}' refused: {}",
                          self->name(), id, to_string(status));
    rp.deliver(to_error(status, id));
    return rp;
  }
  waiters[id].push_back(rp);
  carry_out_plan(self);
  return rp;
}

// Answered once every child has started (at once if they have).
caf::result<void> on_await_started(supervisor_actor* self) {
  auto& st = self->state;
  if (started_up(*st.core))
    return caf::unit;
  auto rp = self->make_response_promise();
  st.started_waiters.push_back(rp);
  return rp;
}

caf::result<void> on_delete(supervisor_actor* self,
                            const protocol::delete_child& req) {
  auto status = self->state.core->delete_child(req.id);
  if (status != supervisor_errc::none)
    return to_error(status, req.id);
  return caf::unit;
}

/// How long a nested supervisor may take to describe its tree.
constexpr auto describe_timeout = std::chrono::seconds{2};
/// How long a child actor's stand-in may take to say how many calls wait
/// for the actor, and how many children one description asks.
constexpr auto queue_length_timeout = std::chrono::seconds{1};
constexpr std::size_t max_asked_children = 256;

caf::result<std::string> on_describe(supervisor_actor* self) {
  using nlohmann::json;
  auto& st = self->state;
  struct gathering {
    json tree;
    std::size_t waiting = 0;
    caf::response_promise promise;
  };
  auto g = std::make_shared<gathering>();
  const auto& flags = st.core->flags();
  g->tree = {{"strategy", to_string(flags.strategy)},
             {"intensity", flags.intensity},
             {"period_ms", flags.period.count()},
             // What it took in and has not handled yet: `mailbox().size()`
             // would take in the rest first, through a downcast of CAF's
             // queue sentinel that UBSan rejects.
             {"mailbox", self->mailbox().queue().total_task_size()},
             {"children", json::array()}};
  // Nested supervisors describe their trees; child actors' stand-ins ask
  // their hosts how many calls wait (the first `max_asked_children`).
  std::vector<std::pair<std::size_t, caf::actor>> nested;
  std::vector<std::pair<std::size_t, caf::actor>> actors;
  for (const auto& c : st.core->which_children()) {
    const auto* def = definition_of(self, c.id);
    bool is_supervisor = def != nullptr && def->supervisor;
    g->tree["children"].push_back({{"id", c.id},
                                   {"supervisor", is_supervisor},
                                   {"running", c.running},
                                   {"restart", to_string(c.restart)},
                                   {"restarts", c.restarts}});
    auto live = st.live->find(c.id);
    if (!c.running || live == st.live->end())
      continue;
    auto at = g->tree["children"].size() - 1;
    if (is_supervisor)
      nested.emplace_back(at, live->second);
    else if (actors.size() < max_asked_children)
      actors.emplace_back(at, live->second);
  }
  if (nested.empty() && actors.empty())
    return g->tree.dump();
  g->waiting = nested.size() + actors.size();
  g->promise = self->make_response_promise();
  auto one_done = [g] {
    if (--g->waiting == 0)
      g->promise.deliver(g->tree.dump());
  };
  for (auto& [at, handle] : nested)
    self->request(handle, describe_timeout, describe_tree_atom::value)
        .then(
            [g, at = at, one_done](std::string& sub) {
              g->tree["children"][at]["tree"] =
                  json::parse(sub, nullptr, false);
              one_done();
            },
            [one_done](caf::error&) { one_done(); });
  for (auto& [at, handle] : actors)
    self->request(handle, queue_length_timeout,
                  protocol::queue_length_atom::value)
        .then(
            [g, at = at, one_done](std::uint64_t n) {
              g->tree["children"][at]["mailbox"] = n;
              one_done();
            },
            [one_done](caf::error&) { one_done(); });
  return caf::delegated<std::string>{};
}

// The time of a delayed start came.
void on_wake(supervisor_actor* self) {
  auto& st = self->state;
  if (st.wake_at && *st.wake_at <= now(self))
    st.wake_at.reset();
  carry_out_plan(self);
}

caf::behavior supervisor(supervisor_actor* self, supervision_core core,
                         std::vector<child_definition> definitions) {
  auto& st = self->state;
  st.log = component_logger("supervisor");
  st.core.emplace(std::move(core));
  if (st.core->flags().strategy == restart_strategy::simple_one_for_one)
    st.template_definition = std::move(definitions.front());
  else
    for (auto& def : definitions) {
      auto id = def.id;
      st.definitions.emplace(std::move(id), std::move(def));
    }
  // Errors and unexpected messages are logged (requests get an error reply);
  // exits and downs have handlers of their own below.
  install_default_handlers(self, st.log);
  self->set_exit_handler(
      [self](caf::exit_msg& msg) { on_exit_request(self, msg); });
  set_checked_down_handler(
      self, [self](caf::down_msg& msg) { on_child_down(self, msg); });
  self->attach_functor([live = st.live](const caf::error&) {
    for (auto& [id, handle] : *live)
      caf::anon_send_exit(handle, caf::exit_reason::kill);
    live->clear();
  });
  st.core->start_all();
  carry_out_plan(self);
  return {
      [self](protocol::which_children) {
        return self->state.core->which_children();
      },
      [self](protocol::start_child& req) {
        auto status = self->state.core->start_child(req.id);
        return await_child(self, status, req.id, self->state.start_waiters);
      },
      [self](protocol::terminate_child& req) {
        auto status = self->state.core->terminate_child(req.id);
        return await_child(self, status, req.id, self->state.stop_waiters);
      },
      [self](protocol::await_started) { return on_await_started(self); },
      [self](describe_tree_atom) { return on_describe(self); },
      [self](protocol::delete_child& req) { return on_delete(self, req); },
      [self](stop_timeout_atom, const std::string& id, std::uint64_t attempt) {
        on_stop_timeout(self, id, attempt);
      },
      [self](wake_atom) { on_wake(self); },
  };
}

} // namespace

caf::actor spawn_supervisor(caf::actor_system& sys, supervisor_flags flags,
                            std::vector<child_definition> children) {
  std::vector<internal::child_spec> specs;
  specs.reserve(children.size());
  for (auto& def : children) {
    if (!def.start && !def.start_named)
      throw invalid_argument_error("child '" + def.id +
                                   "' of a supervisor has no start function");
    specs.push_back(internal::child_spec{def.id, def.restart, def.shutdown});
  }
  // Validates flags, ids and shutdown specs before anything runs.
  supervision_core core{flags, std::move(specs)};
  return sys.spawn(supervisor, std::move(core), std::move(children));
}

} // namespace prism::actors
