#include "prism/internal/task_events.hpp"

#include <chrono>

namespace prism::internal {

std::int64_t unix_us_now() noexcept {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

namespace {

/// The attempt `n` of `r`, made in state `s` if it is new; attempts stay
/// in order.
task_attempt& attempt_of(task_record& r, std::int32_t n, task_state s) {
  for (auto i = r.attempts.rbegin(); i != r.attempts.rend(); ++i)
    if (i->attempt == n)
      return *i;
  task_attempt a;
  a.attempt = n;
  a.state = s;
  auto at = r.attempts.begin();
  while (at != r.attempts.end() && at->attempt < n)
    ++at;
  return *r.attempts.insert(at, a);
}

/// How far along its life state `s` is. An attempt's state only moves
/// forward, whatever order its events arrive in.
int life_rank(task_state s) noexcept {
  switch (s) {
  case task_state::waiting_args:
    return 0;
  case task_state::queued:
    return 1;
  case task_state::running:
    return 2;
  case task_state::forwarded:
  case task_state::finished:
  case task_state::failed:
    return 3;
  }
  return 0;
}

} // namespace

void task_table::apply(const task_event& e) {
  auto [it, made] = records_.try_emplace(e.task);
  auto& r = it->second;
  if (made) {
    r.id = e.task;
    order_.push_back(e.task);
  }
  if (!e.name.empty()) {
    r.name = batch_name_ = name_index(e.name);
    r.job = e.job;
  } else if (made && batch_name_ != no_name) {
    r.name = batch_name_;
    r.job = e.job;
  }
  if (e.submit_us != 0 && (r.submit_us == 0 || e.submit_us < r.submit_us))
    r.submit_us = e.submit_us;
  auto& a = attempt_of(r, e.attempt, e.state);
  if (life_rank(e.state) >= life_rank(a.state))
    a.state = e.state;
  if (e.start_us != 0) {
    a.start_us = e.start_us;
    a.node = e.node;
    a.worker = e.worker;
    a.pid = e.pid;
  }
  if (e.end_us != 0) {
    a.end_us = e.end_us;
    a.error = e.error;
  }
  r.state = r.attempts.back().state;
  if (made && records_.size() > max_tasks_) {
    records_.erase(order_.front());
    order_.pop_front();
    ++forgotten_;
  }
}

const task_record* task_table::find(const task_id& id) const {
  auto i = records_.find(id);
  return i == records_.end() ? nullptr : &i->second;
}

std::uint32_t task_table::name_index(const std::string& name) {
  // Tasks come in runs of one function: the last name is likely again.
  if (last_name_ < names_.size() && names_[last_name_] == name)
    return last_name_;
  auto [it, made] = name_indices_.try_emplace(
      name, static_cast<std::uint32_t>(names_.size()));
  if (made)
    names_.push_back(name);
  last_name_ = it->second;
  return it->second;
}

} // namespace prism::internal
