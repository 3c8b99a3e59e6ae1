#include "raylet/worker_pool.hpp"

#include <algorithm>

#include "common/secret.hpp"

namespace prism::actors {

void worker_pool::add(worker w) {
  auto id = w.id;
  w.job = job_id{};
  w.lease_id = 0;
  workers_.emplace(id, std::move(w));
  idle_.push_back(id);
}

void worker_pool::add_starting(worker w) {
  auto id = w.id;
  w.starting = true;
  w.lease_id = 0;
  workers_.emplace(id, std::move(w));
}

void worker_pool::registered(const worker_id& id, caf::actor handle,
                             caf::actor control, std::string contact) {
  auto i = workers_.find(id);
  if (i == workers_.end() || !i->second.starting)
    return;
  i->second.starting = false;
  i->second.token.clear();
  i->second.handle = std::move(handle);
  i->second.control = std::move(control);
  i->second.contact = std::move(contact);
  i->second.idle_since = std::chrono::steady_clock::now();
  if (!i->second.hosts_actor)
    idle_.push_back(id);
}

std::size_t worker_pool::task_workers() const {
  std::size_t n = 0;
  for (auto& [id, w] : workers_)
    n += w.hosts_actor ? 0 : 1;
  return n;
}

std::size_t worker_pool::starting(job_id job) const {
  std::size_t n = 0;
  for (auto& [id, w] : workers_)
    n += w.starting && !w.hosts_actor && w.job == job ? 1 : 0;
  return n;
}

std::size_t worker_pool::starting() const {
  std::size_t n = 0;
  for (auto& [id, w] : workers_)
    n += w.starting ? 1 : 0;
  return n;
}

worker_pool::worker* worker_pool::find_token(const std::string& token) {
  worker* found = nullptr;
  for (auto& [id, w] : workers_)
    if (w.starting && !token.empty() && same_secret(w.token, token))
      found = &w;
  return found;
}

std::vector<worker_pool::worker*> worker_pool::idle_oldest_first() {
  std::vector<worker*> result;
  for (auto& id : idle_)
    result.push_back(&workers_.at(id));
  std::stable_sort(result.begin(), result.end(), [](auto* x, auto* y) {
    return x->idle_since < y->idle_since;
  });
  return result;
}

worker_pool::worker* worker_pool::pop(job_id job, std::uint64_t lease_id) {
  auto take = [&](auto pred) -> worker* {
    // Most recently idle first: its thread is most likely still warm.
    for (auto i = idle_.rbegin(); i != idle_.rend(); ++i) {
      auto& w = workers_.at(*i);
      if (pred(w)) {
        idle_.erase(std::next(i).base());
        w.job = job;
        w.lease_id = lease_id;
        return &w;
      }
    }
    return nullptr;
  };
  if (auto w = take([&](const worker& w) { return w.job == job; }))
    return w;
  return take([](const worker& w) { return w.job.value == 0; });
}

void worker_pool::release(const worker_id& id) {
  auto i = workers_.find(id);
  if (i == workers_.end() || i->second.lease_id == 0)
    return;
  i->second.lease_id = 0;
  i->second.idle_since = std::chrono::steady_clock::now();
  idle_.push_back(id);
}

std::optional<worker_pool::worker> worker_pool::remove(worker_id id) {
  auto i = workers_.find(id);
  if (i == workers_.end())
    return std::nullopt;
  auto w = std::move(i->second);
  workers_.erase(i);
  idle_.erase(std::remove(idle_.begin(), idle_.end(), id), idle_.end());
  return w;
}

worker_pool::worker* worker_pool::idle_of_other_job(job_id job) {
  for (auto& id : idle_) {
    auto& w = workers_.at(id);
    if (w.job.value != 0 && w.job != job)
      return &w;
  }
  return nullptr;
}

std::vector<worker_pool::worker> worker_pool::remove_idle_of(job_id job) {
  std::vector<worker> result;
  std::vector<worker_id> ids;
  for (auto& id : idle_)
    if (workers_.at(id).job == job)
      ids.push_back(id);
  for (auto& id : ids)
    if (auto w = remove(id))
      result.push_back(std::move(*w));
  return result;
}

worker_pool::worker* worker_pool::find(const worker_id& id) {
  auto i = workers_.find(id);
  return i != workers_.end() ? &i->second : nullptr;
}

worker_pool::worker* worker_pool::find(const caf::actor_addr& addr) {
  for (auto& [id, w] : workers_)
    if (w.handle && w.handle.address() == addr)
      return &w;
  return nullptr;
}

std::vector<caf::actor> worker_pool::handles() const {
  std::vector<caf::actor> result;
  for (auto& [id, w] : workers_)
    if (w.handle)
      result.push_back(w.handle);
  return result;
}

std::vector<worker_id> worker_pool::ids() const {
  std::vector<worker_id> result;
  for (auto& [id, w] : workers_)
    result.push_back(id);
  return result;
}

std::vector<worker_pool::worker*> worker_pool::shared_hosts_of(job_id job) {
  auto all = shared_hosts();
  std::erase_if(all, [job](const worker* w) { return w->job != job; });
  return all;
}

std::vector<worker_pool::worker*> worker_pool::shared_hosts() {
  std::vector<worker*> result;
  for (auto& [id, w] : workers_)
    if (w.shares_actors && !w.disconnected && w.killed_for.empty())
      result.push_back(&w);
  return result;
}

} // namespace prism::actors
