#include "prism/internal/memory_store.hpp"

#include <algorithm>

namespace prism::internal {

bool memory_store::add_pending(const object_id& id) {
  std::lock_guard<std::mutex> guard{mu_};
  auto [i, added] = entries_.try_emplace(id);
  ++i->second.local_refs;
  if (closed_ && i->second.st == state::pending) {
    i->second.st = state::ready;
    i->second.err = closed_;
  }
  return added;
}

void memory_store::add_ready(const object_id& id, detail::value v) {
  std::lock_guard<std::mutex> guard{mu_};
  auto& e = entries_[id];
  e.st = state::ready;
  e.val = std::move(v);
  ++e.local_refs;
  wake(e);
}

bool memory_store::complete(const object_id& id, detail::value v) {
  std::lock_guard<std::mutex> guard{mu_};
  auto i = entries_.find(id);
  if (i == entries_.end() || i->second.st == state::ready)
    return false;
  i->second.st = state::ready;
  i->second.val = std::move(v);
  wake(i->second);
  return true;
}

bool memory_store::fail(const object_id& id, detail::error_info err) {
  std::lock_guard<std::mutex> guard{mu_};
  auto i = entries_.find(id);
  if (i == entries_.end() || i->second.st == state::ready)
    return false;
  i->second.st = state::ready;
  i->second.err = std::make_shared<const detail::error_info>(std::move(err));
  wake(i->second);
  return true;
}

bool memory_store::complete_remote(const object_id& id, const node_id& node) {
  std::lock_guard<std::mutex> guard{mu_};
  auto i = entries_.find(id);
  if (i == entries_.end() || i->second.st == state::ready)
    return false;
  i->second.st = state::ready;
  i->second.location = node;
  wake(i->second);
  return true;
}

void memory_store::add_remote(const object_id& id, const node_id& node) {
  std::lock_guard<std::mutex> guard{mu_};
  auto& e = entries_[id];
  e.st = state::ready;
  e.location = node;
  ++e.local_refs;
  wake(e);
}

bool memory_store::reopen(const object_id& id) {
  std::lock_guard<std::mutex> guard{mu_};
  auto i = entries_.find(id);
  if (i == entries_.end() || i->second.st != state::ready ||
      i->second.location.nil())
    return false;
  i->second.st = state::pending;
  i->second.location = node_id{};
  return true;
}

void memory_store::report_free(const object_id& id) {
  std::lock_guard<std::mutex> guard{mu_};
  if (auto i = entries_.find(id); i != entries_.end())
    i->second.report_free = true;
}

void memory_store::on_free(free_hook hook) {
  std::lock_guard<std::mutex> guard{mu_};
  on_free_ = std::move(hook);
}

memory_store::result memory_store::to_result(const entry& e) {
  return result{e.st, e.val, e.err, e.location};
}

memory_store::result memory_store::lookup(const object_id& id) const {
  std::lock_guard<std::mutex> guard{mu_};
  auto i = entries_.find(id);
  if (i == entries_.end())
    return {};
  return to_result(i->second);
}

memory_store::result memory_store::wait_one(const object_id& id,
                                            clock::time_point deadline) {
  std::unique_lock<std::mutex> guard{mu_};
  auto i = entries_.find(id);
  if (i == entries_.end())
    return {};
  if (i->second.st == state::ready)
    return to_result(i->second);
  waiter w;
  w.remaining = 1;
  i->second.waiters.push_back(&w);
  while (w.remaining > 0) {
    if (w.cv.wait_until(guard, deadline) == std::cv_status::timeout)
      break;
  }
  // The entry cannot be freed while this thread holds a reference to it.
  i = entries_.find(id);
  if (i == entries_.end())
    return {};
  if (w.remaining > 0) {
    auto& ws = i->second.waiters;
    ws.erase(std::remove(ws.begin(), ws.end(), &w), ws.end());
  }
  return to_result(i->second);
}

std::vector<bool> memory_store::wait_many(const std::vector<object_id>& ids,
                                          std::size_t k,
                                          clock::time_point deadline) {
  std::vector<bool> ready(ids.size(), false);
  std::unique_lock<std::mutex> guard{mu_};
  std::size_t num_ready = 0;
  for (std::size_t n = 0; n < ids.size(); ++n) {
    auto i = entries_.find(ids[n]);
    if (i != entries_.end() && i->second.st == state::ready) {
      ready[n] = true;
      ++num_ready;
    }
  }
  if (num_ready < k) {
    waiter w;
    w.remaining = k - num_ready;
    std::vector<object_id> registered;
    for (std::size_t n = 0; n < ids.size(); ++n) {
      if (ready[n])
        continue;
      if (auto i = entries_.find(ids[n]); i != entries_.end()) {
        i->second.waiters.push_back(&w);
        registered.push_back(ids[n]);
      }
    }
    while (w.remaining > 0 && !registered.empty()) {
      if (w.cv.wait_until(guard, deadline) == std::cv_status::timeout)
        break;
    }
    for (const auto& id : registered) {
      if (auto i = entries_.find(id); i != entries_.end()) {
        auto& ws = i->second.waiters;
        ws.erase(std::remove(ws.begin(), ws.end(), &w), ws.end());
      }
    }
    for (std::size_t n = 0; n < ids.size(); ++n) {
      auto i = entries_.find(ids[n]);
      ready[n] = i != entries_.end() && i->second.st == state::ready;
    }
  }
  return ready;
}

void memory_store::wake(entry& e) {
  for (auto* w : e.waiters)
    if (w->remaining > 0 && --w->remaining == 0)
      w->cv.notify_one();
  e.waiters.clear();
}

void memory_store::maybe_free(
    std::unordered_map<object_id, entry>::iterator i) {
  const auto& e = i->second;
  if (e.local_refs <= 0 && e.task_refs <= 0 && !e.pinned && e.waiters.empty()) {
    if ((!e.location.nil() || e.report_free) && on_free_)
      on_free_(i->first, e.location);
    entries_.erase(i);
  }
}

void memory_store::add_ref(const object_id& id) {
  std::lock_guard<std::mutex> guard{mu_};
  if (auto i = entries_.find(id); i != entries_.end())
    ++i->second.local_refs;
}

void memory_store::release(const object_id& id) {
  std::lock_guard<std::mutex> guard{mu_};
  if (auto i = entries_.find(id); i != entries_.end()) {
    --i->second.local_refs;
    maybe_free(i);
  }
}

void memory_store::add_task_ref(const object_id& id) {
  std::lock_guard<std::mutex> guard{mu_};
  if (auto i = entries_.find(id); i != entries_.end())
    ++i->second.task_refs;
}

void memory_store::release_task_ref(const object_id& id) {
  std::lock_guard<std::mutex> guard{mu_};
  if (auto i = entries_.find(id); i != entries_.end()) {
    --i->second.task_refs;
    maybe_free(i);
  }
}

void memory_store::pin(const object_id& id) {
  std::lock_guard<std::mutex> guard{mu_};
  if (auto i = entries_.find(id); i != entries_.end())
    i->second.pinned = true;
}

std::size_t memory_store::size() const {
  std::lock_guard<std::mutex> guard{mu_};
  return entries_.size();
}

void memory_store::fail_all_pending(const detail::error_info& err) {
  std::lock_guard<std::mutex> guard{mu_};
  for (auto& [id, e] : entries_) {
    if (e.st != state::ready) {
      e.st = state::ready;
      e.err = std::make_shared<const detail::error_info>(err);
      wake(e);
    }
  }
}

bool memory_store::closed() const {
  std::lock_guard<std::mutex> guard{mu_};
  return closed_ != nullptr;
}

void memory_store::close(const detail::error_info& err) {
  std::lock_guard<std::mutex> guard{mu_};
  closed_ = std::make_shared<const detail::error_info>(err);
  for (auto& [id, e] : entries_) {
    if (e.st != state::ready) {
      e.st = state::ready;
      e.err = closed_;
      wake(e);
    }
  }
}

} // namespace prism::internal
