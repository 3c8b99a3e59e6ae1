#include "prism/internal/supervision_core.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <unordered_set>

#include "prism/error.hpp"
#include "prism/internal/random_seed.hpp"

namespace prism {

// -- names of the public enums ------------------------------------------------

const char* to_string(restart_strategy x) noexcept {
  switch (x) {
  case restart_strategy::one_for_one:
    return "one_for_one";
  case restart_strategy::one_for_all:
    return "one_for_all";
  case restart_strategy::rest_for_one:
    return "rest_for_one";
  case restart_strategy::simple_one_for_one:
    return "simple_one_for_one";
  }
  return "unknown";
}

const char* to_string(restart_type x) noexcept {
  switch (x) {
  case restart_type::permanent:
    return "permanent";
  case restart_type::transient:
    return "transient";
  case restart_type::temporary:
    return "temporary";
  }
  return "unknown";
}

const char* to_string(child_exit x) noexcept {
  switch (x) {
  case child_exit::normal:
    return "normal";
  case child_exit::shutdown:
    return "shutdown";
  case child_exit::abnormal:
    return "abnormal";
  }
  return "unknown";
}

const char* to_string(supervisor_errc x) noexcept {
  switch (x) {
  case supervisor_errc::none:
    return "none";
  case supervisor_errc::intensity_exceeded:
    return "intensity_exceeded";
  case supervisor_errc::start_failed:
    return "start_failed";
  case supervisor_errc::unknown_child:
    return "unknown_child";
  case supervisor_errc::child_exists:
    return "child_exists";
  case supervisor_errc::child_running:
    return "child_running";
  case supervisor_errc::child_restarting:
    return "child_restarting";
  case supervisor_errc::not_supported:
    return "not_supported";
  case supervisor_errc::invalid_id:
    return "invalid_id";
  case supervisor_errc::shutting_down:
    return "shutting_down";
  }
  return "unknown";
}

// -- validation of the public types -------------------------------------------

void validate(const supervisor_flags& flags) {
  if (flags.intensity < 0)
    throw invalid_argument_error("supervisor intensity must not be negative");
  if (flags.period.count() <= 0)
    throw invalid_argument_error("supervisor period must be positive");
  if (auto& b = flags.restart_backoff) {
    if (b->min.count() < 0)
      throw invalid_argument_error("restart backoff min must not be negative");
    if (b->min > b->max)
      throw invalid_argument_error("restart backoff min must not exceed max");
    if (!(b->jitter >= 0.0 && b->jitter <= 1.0))
      throw invalid_argument_error("restart backoff jitter must be in [0, 1]");
  }
}

void validate(const shutdown_spec& spec) {
  if (spec.timeout.count() < 0)
    throw invalid_argument_error("shutdown timeout must not be negative");
}

} // namespace prism

namespace prism::internal {

// -- free functions -----------------------------------------------------------

const char* to_string(action_kind x) noexcept {
  switch (x) {
  case action_kind::start:
    return "start";
  case action_kind::stop:
    return "stop";
  case action_kind::escalate:
    return "escalate";
  case action_kind::exit:
    return "exit";
  }
  return "unknown";
}

// -- constructors -------------------------------------------------------------

supervision_core::supervision_core(supervisor_flags flags,
                                   std::vector<child_spec> children,
                                   random_source random)
    : flags_(std::move(flags)), random_(std::move(random)) {
  validate(flags_);
  std::unordered_set<std::string> ids;
  for (auto& spec : children) {
    if (spec.id.empty())
      throw invalid_argument_error("a child of a supervisor needs an id");
    if (!ids.insert(spec.id).second)
      throw invalid_argument_error("two children of a supervisor are named '" +
                                   spec.id + "'");
    validate(spec.shutdown);
  }
  if (flags_.strategy == restart_strategy::simple_one_for_one) {
    if (children.size() != 1)
      throw invalid_argument_error(
          "a simple_one_for_one supervisor takes exactly one child spec, the "
          "template of its dynamic children");
    template_ = std::move(children.front());
  } else {
    for (auto& spec : children) {
      children_.emplace_back();
      children_.back().spec = std::move(spec);
    }
  }
  if (!random_)
    random_ = seeded(random_seed());
}

supervision_core::random_source supervision_core::seeded(std::uint64_t seed) {
  auto gen = std::make_shared<std::mt19937_64>(seed);
  return [gen] {
    return std::uniform_real_distribution<double>{0.0, 1.0}(*gen);
  };
}

// -- lifecycle events ---------------------------------------------------------

supervision_plan supervision_core::start_all() {
  for (auto& c : children_) {
    if (c.status != child_status::stopped || c.start_pending)
      continue;
    c.start_pending = true;
    c.reason = start_reason::initial;
    c.not_before = time_point{};
  }
  return plan();
}

supervision_plan supervision_core::on_start_sent(const std::string& id) {
  if (auto c = lookup(id);
      c != nullptr && c->start_pending && c->status == child_status::stopped)
    begin_start(*c);
  return plan();
}

supervision_plan supervision_core::on_started(const std::string& id,
                                              time_point now) {
  auto c = lookup(id);
  if (c == nullptr)
    return plan();
  if (c->start_pending && c->status == child_status::stopped)
    begin_start(*c); // a start that completed at once
  if (c->status != child_status::starting)
    return plan();
  // A stop or a new start planned meanwhile (`must_stop`, `start_pending`)
  // stays planned.
  c->status = child_status::running;
  c->ever_started = true;
  c->up_since = now;
  if (c->in_flight == start_reason::restart)
    ++c->restarts;
  return plan();
}

supervision_plan supervision_core::on_start_failed(const std::string& id,
                                                   time_point now) {
  auto c = lookup(id);
  if (c == nullptr)
    return plan();
  if (c->start_pending && c->status == child_status::stopped)
    begin_start(*c); // a start that failed at once
  if (c->status != child_status::starting)
    return plan();
  c->status = child_status::stopped;
  // Asked to stop while it started: it is down, as asked.
  auto ordered =
      c->must_stop || shutting_down_ || escalation_ != escalation_cause::none;
  c->must_stop = false;
  if (ordered) {
    if (c->forget_when_down)
      forget(id);
    return plan();
  }
  switch (c->in_flight) {
  case start_reason::initial:
    escalate(escalation_cause::start_failed);
    break;
  case start_reason::command:
    if (template_ && !c->ever_started)
      forget(id);
    break;
  case start_reason::restart:
    restart_after_failure(index_of(id), now);
    break;
  }
  return plan();
}

supervision_plan supervision_core::on_stop_sent(const std::string& id) {
  if (auto c = lookup(id); c != nullptr && c->status == child_status::running) {
    c->status = child_status::stopping;
    c->must_stop = false;
  }
  return plan();
}

supervision_plan supervision_core::on_exit(const std::string& id,
                                           child_exit how, time_point now) {
  auto c = lookup(id);
  if (c == nullptr || c->status == child_status::stopped)
    return plan();
  if (c->status == child_status::starting)
    return on_start_failed(id, now);
  auto ordered = c->must_stop || c->status == child_status::stopping ||
                 shutting_down_ || escalation_ != escalation_cause::none;
  c->status = child_status::stopped;
  c->must_stop = false;
  if (ordered) {
    if (c->forget_when_down)
      forget(id);
    return plan();
  }
  switch (c->spec.restart) {
  case restart_type::temporary:
    forget(id);
    return plan();
  case restart_type::transient:
    if (how != child_exit::abnormal)
      return plan();
    break;
  case restart_type::permanent:
    break;
  }
  restart_after_failure(index_of(id), now);
  return plan();
}

supervision_plan supervision_core::stop_all() {
  shutting_down_ = true;
  for (auto& c : children_) {
    c.start_pending = false;
    if (is_up(c))
      c.must_stop = true;
  }
  return plan();
}

// -- children at run time -----------------------------------------------------

supervisor_errc supervision_core::add_child(const std::string& id) {
  if (!template_)
    return supervisor_errc::not_supported;
  if (shutting_down_ || escalation_ != escalation_cause::none)
    return supervisor_errc::shutting_down;
  if (id.empty())
    return supervisor_errc::invalid_id;
  if (lookup(id) != nullptr)
    return supervisor_errc::child_exists;
  child c;
  c.spec = *template_;
  c.spec.id = id;
  c.start_pending = true;
  c.reason = start_reason::command;
  children_.push_back(std::move(c));
  return supervisor_errc::none;
}

supervisor_errc supervision_core::start_child(const std::string& id) {
  if (shutting_down_ || escalation_ != escalation_cause::none)
    return supervisor_errc::shutting_down;
  auto c = lookup(id);
  if (c == nullptr)
    return template_ ? add_child(id) : supervisor_errc::unknown_child;
  if (c->status != child_status::stopped)
    return supervisor_errc::child_running;
  if (c->start_pending)
    return supervisor_errc::child_restarting;
  c->start_pending = true;
  c->reason = start_reason::command;
  c->not_before = time_point{};
  return supervisor_errc::none;
}

supervisor_errc supervision_core::terminate_child(const std::string& id) {
  if (shutting_down_ || escalation_ != escalation_cause::none)
    return supervisor_errc::shutting_down;
  auto c = lookup(id);
  if (c == nullptr)
    return supervisor_errc::unknown_child;
  c->start_pending = false;
  if (is_up(*c))
    c->must_stop = true;
  if (c->spec.restart == restart_type::temporary) {
    if (c->status == child_status::stopped)
      forget(id);
    else
      c->forget_when_down = true;
  }
  return supervisor_errc::none;
}

supervisor_errc supervision_core::delete_child(const std::string& id) {
  if (shutting_down_ || escalation_ != escalation_cause::none)
    return supervisor_errc::shutting_down;
  auto c = lookup(id);
  if (c == nullptr)
    return supervisor_errc::unknown_child;
  if (c->status != child_status::stopped)
    return supervisor_errc::child_running;
  if (c->start_pending)
    return supervisor_errc::child_restarting;
  forget(id);
  return supervisor_errc::none;
}

// -- queries ------------------------------------------------------------------

supervision_plan supervision_core::plan() const {
  supervision_plan result;
  for (auto i = children_.rbegin(); i != children_.rend(); ++i)
    if (i->must_stop && i->status == child_status::running)
      result.push_back(supervision_action{
          action_kind::stop, i->spec.id, {}, i->spec.shutdown});
  if (escalation_ != escalation_cause::none || shutting_down_) {
    auto last = escalation_ != escalation_cause::none ? action_kind::escalate
                                                      : action_kind::exit;
    result.push_back(supervision_action{last, {}, {}, {}});
    return result;
  }
  auto first_start = result.size();
  for (auto& c : children_)
    if (c.start_pending)
      result.push_back(
          supervision_action{action_kind::start, c.spec.id, c.not_before, {}});
  auto independent = flags_.strategy == restart_strategy::one_for_one ||
                     flags_.strategy == restart_strategy::simple_one_for_one;
  if (independent)
    std::stable_sort(result.begin() + static_cast<std::ptrdiff_t>(first_start),
                     result.end(), [](const auto& x, const auto& y) {
                       return x.not_before < y.not_before;
                     });
  return result;
}

bool supervision_core::stop_in_flight() const noexcept {
  return std::any_of(children_.begin(), children_.end(), [](const child& c) {
    return c.status == child_status::stopping;
  });
}

bool supervision_core::start_in_flight() const noexcept {
  return std::any_of(children_.begin(), children_.end(), [](const child& c) {
    return c.status == child_status::starting;
  });
}

bool supervision_core::starting_up() const noexcept {
  return std::any_of(children_.begin(), children_.end(), [](const child& c) {
    return (c.start_pending && c.reason == start_reason::initial) ||
           (c.status == child_status::starting &&
            c.in_flight == start_reason::initial);
  });
}

namespace {

// A child counts as running from a completed start until it is down.
template <class Child>
child_info info_of(const Child& c, bool running) {
  return child_info{c.spec.id, running, c.spec.restart, c.restarts};
}

} // namespace

std::vector<child_info> supervision_core::which_children() const {
  std::vector<child_info> result;
  result.reserve(children_.size());
  for (auto& c : children_)
    result.push_back(info_of(c, c.status == child_status::running ||
                                    c.status == child_status::stopping));
  return result;
}

std::optional<child_info> supervision_core::find(const std::string& id) const {
  auto c = lookup(id);
  if (c == nullptr)
    return std::nullopt;
  return info_of(*c, c->status == child_status::running ||
                         c->status == child_status::stopping);
}

bool supervision_core::settled_down(const std::string& id) const {
  auto c = lookup(id);
  return c != nullptr && c->status == child_status::stopped &&
         !c->start_pending;
}

bool supervision_core::down(const std::string& id) const {
  auto c = lookup(id);
  return c == nullptr || c->status == child_status::stopped;
}

// -- internal helpers ---------------------------------------------------------

supervision_core::child* supervision_core::lookup(const std::string& id) {
  auto i = std::find_if(children_.begin(), children_.end(),
                        [&](const child& c) { return c.spec.id == id; });
  return i != children_.end() ? &*i : nullptr;
}

const supervision_core::child*
supervision_core::lookup(const std::string& id) const {
  auto i = std::find_if(children_.begin(), children_.end(),
                        [&](const child& c) { return c.spec.id == id; });
  return i != children_.end() ? &*i : nullptr;
}

std::size_t supervision_core::index_of(const std::string& id) const {
  auto i = std::find_if(children_.begin(), children_.end(),
                        [&](const child& c) { return c.spec.id == id; });
  return static_cast<std::size_t>(i - children_.begin());
}

void supervision_core::begin_start(child& c) {
  c.start_pending = false;
  c.status = child_status::starting;
  c.in_flight = c.reason;
}

bool supervision_core::is_up(const child& c) {
  return c.status == child_status::running ||
         c.status == child_status::starting;
}

void supervision_core::forget(const std::string& id) {
  children_.erase(index_of(id) + children_.begin());
}

bool supervision_core::count_restart(time_point now) {
  // OTP's rule: a restart counts while it is at most `period` old.
  restarts_.push_back(now);
  while (!restarts_.empty() && now - restarts_.front() > flags_.period)
    restarts_.pop_front();
  return restarts_.size() <= static_cast<std::size_t>(flags_.intensity);
}

std::chrono::milliseconds supervision_core::next_delay(child& c,
                                                       time_point now) {
  // A child that stayed up for a whole period is forgiven its past failures.
  if (c.up_since && now - *c.up_since >= flags_.period)
    c.consecutive = 0;
  c.up_since.reset();
  ++c.consecutive;
  if (!flags_.restart_backoff)
    return std::chrono::milliseconds{0};
  return backoff_delay(*flags_.restart_backoff, c.consecutive, random_());
}

void supervision_core::restart_after_failure(std::size_t index,
                                             time_point now) {
  if (!count_restart(now)) {
    escalate(escalation_cause::intensity_exceeded);
    return;
  }
  auto& failed = children_[index];
  auto not_before = now + next_delay(failed, now);
  failed.start_pending = true;
  failed.reason = start_reason::restart;
  failed.not_before = not_before;
  std::size_t first = 0;
  switch (flags_.strategy) {
  case restart_strategy::one_for_one:
  case restart_strategy::simple_one_for_one:
    return;
  case restart_strategy::one_for_all:
    first = 0;
    break;
  case restart_strategy::rest_for_one:
    first = index + 1;
    break;
  }
  // The siblings wait for the same backoff, so the restart stays in order.
  for (auto i = first; i < children_.size(); ++i) {
    auto& c = children_[i];
    if (i == index)
      continue;
    if (c.start_pending) {
      c.not_before = std::max(c.not_before, not_before);
      continue;
    }
    if (!is_up(c) || c.must_stop)
      continue; // down, or being stopped for good: it stays down
    c.must_stop = true;
    if (c.spec.restart == restart_type::temporary) {
      c.forget_when_down = true;
      continue;
    }
    c.start_pending = true;
    c.reason = start_reason::restart;
    c.not_before = not_before;
  }
}

void supervision_core::escalate(escalation_cause cause) {
  escalation_ = cause;
  for (auto& c : children_) {
    c.start_pending = false;
    if (is_up(c))
      c.must_stop = true;
  }
}

} // namespace prism::internal
