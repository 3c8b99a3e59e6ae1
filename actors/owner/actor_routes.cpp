#include "owner/actor_routes.hpp"

#include <algorithm>

#include <caf/all.hpp>

#include "owner/task_events.hpp"

namespace prism::actors {

using internal::actor_state;

namespace {

/// How long an ended call's event waits for the ones after it.
constexpr auto call_events_delay = std::chrono::seconds{1};

} // namespace

actor_routes::actor_routes(std::shared_ptr<internal::memory_store> store)
    : store_(std::move(store)) {}

void actor_routes::connect(caf::actor owner, caf::actor gcs) {
  std::lock_guard<std::mutex> guard{mu_};
  owner_ = std::move(owner);
  gcs_ = std::move(gcs);
  caf::anon_send(gcs_, protocol::watch_gcs{owner_});
}

void actor_routes::resubscribe(const worker_id& self) {
  std::lock_guard<std::mutex> guard{mu_};
  protocol::resubscribe_actors msg{self, owner_, {}};
  msg.actors.reserve(routes_.size());
  for (auto& [id, r] : routes_) {
    // A creation the old control store may have lost: the new one creates
    // the actor, or finds it created already.
    if (r.creation)
      caf::anon_send(gcs_, *r.creation);
    msg.actors.push_back(id);
  }
  if (!msg.actors.empty())
    caf::anon_send(gcs_, std::move(msg));
}

actor_routes::route& actor_routes::route_of(const actor_id& actor) {
  static_assert(sizeof(route) <= 96,
                "an actor's route no longer fits the allocator's 128-byte "
                "size with its id and the map's link");
  auto [i, added] = routes_.try_emplace(actor);
  if (added) {
    // First contact: ask the control store where the actor is, and to keep
    // this owner informed.
    caf::anon_send(gcs_, protocol::subscribe_actor{actor, owner_});
  }
  return i->second;
}

void actor_routes::created(const actor_id& actor, std::int32_t max_task_retries,
                           const protocol::create_actor& msg) {
  std::lock_guard<std::mutex> guard{mu_};
  auto& r = routes_[actor];
  r.max_task_retries = max_task_retries;
  r.creation = std::make_unique<protocol::create_actor>(msg);
}

void actor_routes::forget(const actor_id& actor) {
  std::lock_guard<std::mutex> guard{mu_};
  routes_.erase(actor);
}

detail::error_info actor_routes::died(const actor_id& actor,
                                      const std::string& cause) const {
  detail::error_info err;
  err.code = errc::actor_died;
  err.message = "actor " + actor.hex() + " is dead: " + cause;
  return err;
}

void actor_routes::release(call& c) {
  for (auto& id : c.held)
    store_->release_task_ref(id);
  c.held.clear();
}

void actor_routes::record(const actor_id& actor, const route* where,
                          const call& c, internal::task_state state,
                          const std::string& error,
                          const protocol::actor_task_done* done) {
  if (c.msg.submit_us == 0)
    return;
  internal::task_event e;
  e.task = c.msg.task;
  e.attempt = c.retries_used;
  e.state = state;
  e.submit_us = c.msg.submit_us;
  if (done != nullptr) {
    e.start_us = done->start_us;
    e.end_us = done->end_us;
  }
  if (e.end_us == 0)
    e.end_us = internal::unix_us_now();
  if (where != nullptr) {
    e.node = where->node;
    e.pid = where->pid;
  }
  if (c.name != last_name_ && c.name != nullptr) {
    e.name = *c.name;
    last_name_ = c.name;
  }
  e.job = c.job;
  e.actor = actor;
  e.error = error;
  events_.add(std::move(e));
  if (events_.size() == internal::task_event_batch) {
    caf::anon_send(owner_, take_call_events_atom::value);
  } else if (!take_asked_) {
    take_asked_ = true;
    caf::delayed_anon_send(owner_, call_events_delay,
                           take_call_events_atom::value);
  }
}

const std::string* actor_routes::name_of(const std::string& method) {
  // Calls come in runs of one method: the last name is likely again.
  if (last_named_ == nullptr || *last_named_ != method)
    last_named_ = &*names_.insert(method).first;
  return last_named_;
}

std::pair<std::vector<internal::task_event>, std::uint64_t>
actor_routes::take_events() {
  std::lock_guard<std::mutex> guard{mu_};
  take_asked_ = false;
  // A batch starts without a name before it.
  last_name_ = nullptr;
  return events_.take();
}

void actor_routes::fail(const actor_id& actor, const route* where, call& c,
                        const detail::error_info& err,
                        internal::task_state state) {
  record(actor, where, c, state, err.message, nullptr);
  store_->fail(object_id{c.msg.task, 1}, err);
  if (collecting_)
    failed_.push_back(object_id{c.msg.task, 1});
  release(c);
}

void actor_routes::send(route& r, call&& c) {
  if (r.max_task_retries == 0) {
    // Never sent again: what stays is the task id, to match the answer
    // (the method's name, if the call is recorded, is `c.name`).
    caf::anon_send(r.host, std::move(c.msg));
    c.msg.method.clear();
    c.msg.args.clear();
  } else {
    caf::anon_send(r.host, c.msg);
  }
  r.in_flight.push_back(std::move(c));
}

void actor_routes::send_queued(route& r) {
  if (r.state != actor_state::alive)
    return;
  while (!r.waiting.empty() && r.waiting.front().ready) {
    send(r, std::move(r.waiting.front()));
    r.waiting.pop_front();
  }
}

void actor_routes::submit(const actor_id& actor, protocol::actor_task msg,
                          bool ready, std::vector<object_id> held, job_id job) {
  if (task_event_recording())
    msg.submit_us = internal::unix_us_coarse();
  std::lock_guard<std::mutex> guard{mu_};
  auto& r = route_of(actor);
  call c{std::move(msg), ready, 0, std::move(held), job};
  if (c.msg.submit_us != 0)
    c.name = name_of(c.msg.method);
  // Never dead: a dead actor's route goes as its death is learnt (a call
  // after that finds a new route, and the control store tells it).
  if (ready && r.state == actor_state::alive && r.waiting.empty()) {
    send(r, std::move(c));
    return;
  }
  r.waiting.push_back(std::move(c));
}

void actor_routes::resolved(const actor_id& actor, const task_id& task,
                            std::vector<detail::task_arg> args) {
  std::lock_guard<std::mutex> guard{mu_};
  auto& r = route_of(actor);
  for (auto& c : r.waiting) {
    if (c.msg.task == task) {
      c.msg.args = std::move(args);
      c.ready = true;
      break;
    }
  }
  send_queued(r);
}

void actor_routes::fail_call(const actor_id& actor, const task_id& task,
                             const detail::error_info& err) {
  std::lock_guard<std::mutex> guard{mu_};
  auto& r = route_of(actor);
  auto i = std::find_if(r.waiting.begin(), r.waiting.end(),
                        [&](const call& c) { return c.msg.task == task; });
  if (i != r.waiting.end()) {
    fail(actor, nullptr, *i, err);
    r.waiting.erase(i);
  }
  send_queued(r);
}

void actor_routes::requeue_or_fail_in_flight(route& r,
                                             const protocol::actor_update& u) {
  // The instance that had these calls is gone: retry what may be retried
  // (in its original order, ahead of the waiting calls), fail the rest.
  std::list<call> retry;
  for (auto& c : r.in_flight) {
    if (c.cancelled) {
      // Its result failed when it was cancelled.
      record(u.actor, &r, c, internal::task_state::cancelled, "cancelled",
             nullptr);
      release(c);
      continue;
    }
    bool may = u.state != actor_state::dead &&
               (r.max_task_retries < 0 || c.retries_used < r.max_task_retries);
    if (may) {
      record(u.actor, &r, c, internal::task_state::failed,
             "the actor's instance was lost while it ran the call; it is "
             "retried",
             nullptr);
      ++c.retries_used;
      retry.push_back(std::move(c));
    } else {
      detail::error_info err;
      err.code = errc::actor_died;
      err.message = "actor " + u.actor.hex() +
                    (u.state == actor_state::dead
                         ? " is dead: " + u.death_cause
                         : " died while running the call, which has no "
                           "retries left (max_task_retries)");
      fail(u.actor, &r, c, err);
    }
  }
  r.in_flight.clear();
  for (auto i = retry.rbegin(); i != retry.rend(); ++i)
    r.waiting.push_front(std::move(*i));
}

std::vector<object_id>
actor_routes::on_update(const protocol::actor_update& u) {
  std::lock_guard<std::mutex> guard{mu_};
  failed_.clear();
  auto i = routes_.find(u.actor);
  if (i == routes_.end()) {
    // Forgotten once dead (below); a late update, such as the answer to a
    // second subscription, must not subscribe again.
    return {};
  }
  collecting_ = true;
  auto& r = i->second;
  r.known = true;
  r.creation.reset();
  r.max_task_retries = u.max_task_retries;
  bool new_instance =
      u.incarnation != r.incarnation || u.state != actor_state::alive;
  if (new_instance && !r.in_flight.empty())
    requeue_or_fail_in_flight(r, u);
  if (u.state == actor_state::alive) {
    // A control store recovered from storage knows an instance's node
    // but not its pid: the one known stays.
    if (u.pid != 0 || u.incarnation != r.incarnation)
      r.pid = u.pid;
    r.node = u.node;
  }
  r.state = u.state;
  r.incarnation = u.incarnation;
  r.host = u.state == actor_state::alive ? u.host : caf::actor{};
  if (u.state == actor_state::dead) {
    // Most actors die with no call waiting (their job ended): no error to
    // write then.
    if (!r.waiting.empty()) {
      auto err = died(u.actor, u.death_cause);
      for (auto& c : r.waiting)
        fail(u.actor, nullptr, c, err);
    }
    // Nothing is left to route: a later call asks the control store again,
    // which keeps the actor and its cause of death. A long-lived owner
    // creating many short-lived actors thus keeps none of them.
    routes_.erase(u.actor);
    collecting_ = false;
    return std::move(failed_);
  }
  send_queued(r);
  collecting_ = false;
  return std::move(failed_);
}

bool actor_routes::on_done(protocol::actor_task_done& done) {
  std::lock_guard<std::mutex> guard{mu_};
  auto i = routes_.find(done.actor);
  if (i == routes_.end())
    return false;
  auto& r = i->second;
  // The first answer wins; a retried call's second answer finds nothing.
  auto match = [&](const call& c) { return c.msg.task == done.task; };
  call c;
  if (!r.in_flight.empty() && match(r.in_flight.front())) {
    c = std::move(r.in_flight.front());
    r.in_flight.pop_front();
  } else if (auto j =
                 std::find_if(r.in_flight.begin(), r.in_flight.end(), match);
             j != r.in_flight.end()) {
    c = std::move(*j);
    r.in_flight.erase(j);
  } else if (auto k = std::find_if(r.waiting.begin(), r.waiting.end(), match);
             k != r.waiting.end()) {
    c = std::move(*k);
    r.waiting.erase(k);
  } else {
    return false;
  }
  // The answer of an instance lost since tells the attempt it ran, before
  // the retry, and where that was is recorded already.
  const route* where = &r;
  if (done.incarnation != r.incarnation && c.retries_used > 0) {
    --c.retries_used;
    where = nullptr;
  }
  if (c.cancelled)
    record(done.actor, where, c, internal::task_state::cancelled, "cancelled",
           &done);
  else if (done.ok)
    record(done.actor, where, c, internal::task_state::finished, {}, &done);
  else
    record(done.actor, where, c, internal::task_state::failed,
           done.error.message, &done);
  auto id = object_id{done.task, 1};
  bool kept = false;
  if (done.ok)
    kept =
        store_->complete(id, std::move(done.result),
                         internal::memory_store::arrival::registered_by_sender);
  else
    store_->fail(id, done.error);
  release(c);
  return kept || !done.ok;
}

actor_routes::cancelled_call
actor_routes::cancel(const task_id& task, const detail::error_info& err) {
  std::lock_guard<std::mutex> guard{mu_};
  auto match = [&](const call& c) { return c.msg.task == task; };
  for (auto& [id, r] : routes_) {
    if (auto i = std::find_if(r.waiting.begin(), r.waiting.end(), match);
        i != r.waiting.end()) {
      fail(id, nullptr, *i, err, internal::task_state::cancelled);
      r.waiting.erase(i);
      // Calls behind it may go now.
      send_queued(r);
      return {true, {}};
    }
    if (auto i = std::find_if(r.in_flight.begin(), r.in_flight.end(), match);
        i != r.in_flight.end()) {
      if (i->cancelled)
        return {};
      i->cancelled = true;
      store_->fail(object_id{task, 1}, err);
      return {true, r.host};
    }
  }
  return {};
}

bool actor_routes::has_call(const task_id& task) {
  std::lock_guard<std::mutex> guard{mu_};
  auto match = [&](const call& c) { return c.msg.task == task; };
  for (auto& [id, r] : routes_)
    if (std::any_of(r.waiting.begin(), r.waiting.end(), match) ||
        std::any_of(r.in_flight.begin(), r.in_flight.end(), match))
      return true;
  return false;
}

void actor_routes::fail_all(const detail::error_info& err) {
  std::lock_guard<std::mutex> guard{mu_};
  for (auto& [id, r] : routes_) {
    for (auto& c : r.in_flight)
      fail(id, &r, c, err);
    for (auto& c : r.waiting)
      fail(id, nullptr, c, err);
    r.in_flight.clear();
    r.waiting.clear();
  }
}

} // namespace prism::actors
