#include "prism/internal/memory_store.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>

#include "prism/internal/spin_wait.hpp"

namespace prism::internal {

namespace {

std::atomic<std::int64_t> live{0};

/// How long a waiting thread stays awake before it sleeps: as long as a
/// task or actor call that waits for nothing takes to come back, and short
/// next to the waits for a pipeline's results, whose sleep it barely
/// delays.
constexpr auto spin_time = std::chrono::microseconds{50};

/// Whether a borrower's count holds its object: an end that came before its
/// registration is kept as a count below zero, and holds nothing.
constexpr auto holds = [](const auto& borrower) { return borrower.second > 0; };

} // namespace

memory_store::memory_store() = default;

memory_store::~memory_store() {
  for (auto& [id, e] : entries_)
    drop_callbacks(e);
  live.fetch_sub(static_cast<std::int64_t>(entries_.size()),
                 std::memory_order_relaxed);
}

std::int64_t memory_store::live_entries() noexcept {
  return live.load(std::memory_order_relaxed);
}

void memory_store::set_self(const worker_id& self) {
  std::lock_guard<std::mutex> guard{mu_};
  self_ = self;
}

void memory_store::set_hook(hook h) {
  std::lock_guard<std::mutex> guard{mu_};
  hook_ = std::move(h);
}

std::pair<memory_store::entry_map::iterator, bool>
memory_store::emplace(const object_id& id) {
  auto result = entries_.try_emplace(id);
  if (result.second)
    live.fetch_add(1, std::memory_order_relaxed);
  return result;
}

memory_store::sharing& memory_store::shared(entry& e) {
  if (!e.share)
    e.share = std::make_unique<sharing>();
  return *e.share;
}

bool memory_store::lent(const sharing* sh) {
  return sh != nullptr &&
         std::any_of(sh->borrowers.begin(), sh->borrowers.end(), holds);
}

memory_store::fired_scope::~fired_scope() {
  if (!store_.any_fired_.load(std::memory_order_acquire))
    return;
  std::vector<std::function<void()>> fired;
  {
    std::lock_guard<std::mutex> guard{store_.mu_};
    fired.swap(store_.fired_);
    store_.any_fired_.store(false, std::memory_order_relaxed);
  }
  for (auto& callback : fired)
    callback();
}

void memory_store::drop_callbacks(entry& e) {
  for (auto* w : e.waiters)
    if (w->callback)
      delete w;
}

bool memory_store::thread_waits(const entry& e) {
  return std::any_of(e.waiters.begin(), e.waiters.end(),
                     [](const waiter* w) { return !w->callback; });
}

void memory_store::erase(entry_map::iterator i) {
  drop_callbacks(i->second);
  entries_.erase(i);
  live.fetch_sub(1, std::memory_order_relaxed);
}

void memory_store::emit(events& out) {
  // Under the lock: events of one object reach its owner in the order they
  // happened here (a registration that ends, then a new one, never the
  // other way round).
  if (hook_)
    for (const auto& e : out)
      hook_(e);
}

void memory_store::set_contains(entry& holder,
                                const std::vector<detail::contained_ref>& refs,
                                arrival how, events& out) {
  auto old = std::move(holder.contains);
  holder.contains.clear();
  for (const auto& r : refs) {
    auto [i, added] = emplace(r.id);
    auto& e = i->second;
    if (added) {
      if (r.owner == self_) {
        // One of this store's objects that is gone already: nothing to hold.
        erase(i);
        continue;
      }
      auto& sh = shared(e);
      sh.owner = r.owner;
      sh.address = r.address;
      if (closed_) {
        e.st = state::ready;
        e.err = closed_;
      }
      if (how == arrival::fetched)
        out.push_back(event{
            event::kind::borrowed, r.id, r.owner, r.address, {}, false, 0});
      sh.registrations = 1;
    } else if (how == arrival::registered_by_sender && r.owner != self_) {
      ++shared(e).registrations;
    }
    ++e.contained;
    holder.contains.push_back(r.id);
  }
  for (const auto& id : old) {
    if (auto i = entries_.find(id); i != entries_.end()) {
      --i->second.contained;
      maybe_free(i, out);
    }
  }
}

bool memory_store::add_pending(const object_id& id) {
  std::lock_guard<std::mutex> guard{mu_};
  auto [i, added] = emplace(id);
  ++i->second.local_refs;
  if (closed_ && i->second.st == state::pending) {
    i->second.st = state::ready;
    i->second.err = closed_;
  }
  return added;
}

void memory_store::make_ready(entry& e,
                              const std::vector<detail::contained_ref>& refs,
                              arrival how) {
  events out;
  e.st = state::ready;
  if (!refs.empty() || !e.contains.empty())
    set_contains(e, refs, how, out);
  wake(e);
  emit(out);
}

void memory_store::add_ready(const object_id& id, detail::value v) {
  fired_scope fired{*this};
  std::lock_guard<std::mutex> guard{mu_};
  auto& e = emplace(id).first->second;
  ++e.local_refs;
  make_ready(e, v.refs, arrival::fetched);
  e.val = std::move(v);
}

bool memory_store::complete(const object_id& id, detail::value v, arrival how) {
  fired_scope fired{*this};
  std::lock_guard<std::mutex> guard{mu_};
  auto i = entries_.find(id);
  if (i == entries_.end() || i->second.st == state::ready)
    return false;
  make_ready(i->second, v.refs, how);
  i->second.val = std::move(v);
  return true;
}

bool memory_store::fail(const object_id& id, detail::error_info err) {
  fired_scope fired{*this};
  std::lock_guard<std::mutex> guard{mu_};
  auto i = entries_.find(id);
  if (i == entries_.end() || i->second.st == state::ready)
    return false;
  i->second.st = state::ready;
  i->second.err = std::make_shared<const detail::error_info>(std::move(err));
  wake(i->second);
  return true;
}

bool memory_store::complete_remote(
    const object_id& id, const node_id& node,
    const std::vector<detail::contained_ref>& refs, arrival how) {
  fired_scope fired{*this};
  std::lock_guard<std::mutex> guard{mu_};
  auto i = entries_.find(id);
  if (i == entries_.end() || i->second.st == state::ready)
    return false;
  i->second.location = node;
  make_ready(i->second, refs, how);
  return true;
}

void memory_store::add_remote(const object_id& id, const node_id& node,
                              const std::vector<detail::contained_ref>& refs) {
  fired_scope fired{*this};
  std::lock_guard<std::mutex> guard{mu_};
  auto& e = emplace(id).first->second;
  e.location = node;
  ++e.local_refs;
  make_ready(e, refs, arrival::fetched);
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

void memory_store::block(waiter& w, std::unique_lock<std::mutex>& guard,
                         clock::time_point deadline) {
  if (w.stop != nullptr)
    stoppable_.push_back(&w);
  if (w.remaining > 0 && !w.stopped()) {
    // Awake for a short while first: a result that comes within it costs
    // its sender no futex call and this thread no wake-up.
    guard.unlock();
    spin_until(
        [&] { return w.woken.load(std::memory_order_acquire) || w.stopped(); },
        std::min(deadline, clock::now() + spin_time));
    guard.lock();
  }
  while (w.remaining > 0 && !w.stopped()) {
    if (w.cv.wait_until(guard, deadline) == std::cv_status::timeout)
      break;
  }
  if (w.stop != nullptr)
    stoppable_.erase(std::find(stoppable_.begin(), stoppable_.end(), &w));
}

void memory_store::wake_stopped() {
  std::lock_guard<std::mutex> guard{mu_};
  for (auto* w : stoppable_)
    if (w->stopped())
      w->cv.notify_one();
}

memory_store::result memory_store::wait_one(const object_id& id,
                                            clock::time_point deadline,
                                            stop_flag stop) {
  std::unique_lock<std::mutex> guard{mu_};
  auto i = entries_.find(id);
  if (i == entries_.end())
    return {};
  if (i->second.st == state::ready)
    return to_result(i->second);
  waiter w;
  w.remaining = 1;
  w.stop = stop;
  i->second.waiters.push_back(&w);
  block(w, guard, deadline);
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
                                          clock::time_point deadline,
                                          stop_flag stop) {
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
    w.stop = stop;
    std::vector<object_id> registered;
    for (std::size_t n = 0; n < ids.size(); ++n) {
      if (ready[n])
        continue;
      if (auto i = entries_.find(ids[n]); i != entries_.end()) {
        i->second.waiters.push_back(&w);
        registered.push_back(ids[n]);
      }
    }
    if (!registered.empty())
      block(w, guard, deadline);
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
  for (auto* w : e.waiters) {
    if (w->remaining > 0 && --w->remaining == 0) {
      if (w->callback) {
        fired_.push_back(std::move(w->callback));
        any_fired_.store(true, std::memory_order_release);
        delete w;
      } else {
        w->woken.store(true, std::memory_order_release);
        w->cv.notify_one();
      }
    }
  }
  e.waiters.clear();
}

bool memory_store::on_ready(const object_id& id,
                            std::function<void()> callback) {
  {
    std::lock_guard<std::mutex> guard{mu_};
    auto i = entries_.find(id);
    if (i != entries_.end() && i->second.st != state::ready) {
      auto* w = new waiter;
      w->remaining = 1;
      w->callback = std::move(callback);
      i->second.waiters.push_back(w);
      return true;
    }
  }
  callback();
  return false;
}

void memory_store::maybe_free(entry_map::iterator i, events& out) {
  // Freeing an entry drops its holds on the refs inside its value, which
  // may free those in turn: a work list, not recursion, for deep chains.
  std::vector<object_id> next;
  for (;;) {
    const auto& e = i->second;
    const auto* sh = e.share.get();
    if (e.local_refs <= 0 && e.task_refs <= 0 && e.contained <= 0 &&
        !lent(sh) && !e.pinned && !thread_waits(e)) {
      bool borrowed = sh && !sh->owner.nil() && sh->registrations > 0;
      if (borrowed)
        out.push_back(event{event::kind::freed, i->first, sh->owner,
                            sh->address, e.location, e.report_free,
                            sh->registrations});
      else if (!e.location.nil() || e.report_free)
        out.push_back(event{event::kind::freed,
                            i->first,
                            {},
                            {},
                            e.location,
                            e.report_free,
                            0});
      next.insert(next.end(), e.contains.begin(), e.contains.end());
      erase(i);
    }
    i = entries_.end();
    while (i == entries_.end() && !next.empty()) {
      i = entries_.find(next.back());
      next.pop_back();
      if (i != entries_.end())
        --i->second.contained;
    }
    if (i == entries_.end())
      return;
  }
}

bool memory_store::add_ref(const object_id& id) {
  std::lock_guard<std::mutex> guard{mu_};
  auto i = entries_.find(id);
  if (i == entries_.end())
    return false;
  ++i->second.local_refs;
  return true;
}

bool memory_store::borrow(const object_id& id, const worker_id& owner,
                          const detail::owner_address& address) {
  std::lock_guard<std::mutex> guard{mu_};
  if (owner == self_) {
    if (auto i = entries_.find(id); i != entries_.end())
      ++i->second.local_refs;
    return false;
  }
  auto [i, added] = emplace(id);
  auto& e = i->second;
  ++e.local_refs;
  auto& sh = shared(e);
  if (added) {
    sh.owner = owner;
    sh.address = address;
    sh.registrations = 1;
    if (closed_) {
      e.st = state::ready;
      e.err = closed_;
    }
    events out{event{event::kind::borrowed, id, owner, address, {}, false, 0}};
    emit(out);
  } else if (sh.owner.nil() && sh.registrations == 0 && !owner.nil() &&
             sh.borrowers.empty()) {
    // A cache entry made before this process knew the owner.
    sh.owner = owner;
    sh.address = address;
  } else if (!sh.address && address && sh.owner == owner) {
    sh.address = address;
  }
  return added;
}

std::pair<worker_id, detail::owner_address>
memory_store::owner_of(const object_id& id) const {
  std::lock_guard<std::mutex> guard{mu_};
  auto i = entries_.find(id);
  if (i == entries_.end())
    return {};
  if (!i->second.share)
    return {};
  return {i->second.share->owner, i->second.share->address};
}

namespace {

template <class Borrowers>
auto find_borrower(Borrowers& bs, const worker_id& borrower) {
  return std::find_if(bs.begin(), bs.end(),
                      [&](const auto& x) { return x.first == borrower; });
}

} // namespace

bool memory_store::add_borrower(const object_id& id, const worker_id& borrower,
                                std::int32_t n) {
  std::lock_guard<std::mutex> guard{mu_};
  auto i = entries_.find(id);
  if (i == entries_.end())
    return false;
  auto& bs = shared(i->second).borrowers;
  if (auto b = find_borrower(bs, borrower); b == bs.end())
    bs.emplace_back(borrower, n);
  else if ((b->second += n) == 0)
    bs.erase(b); // it cancels removals that came before it
  return true;
}

void memory_store::remove_borrower(const object_id& id,
                                   const worker_id& borrower, std::int32_t n) {
  std::lock_guard<std::mutex> guard{mu_};
  auto i = entries_.find(id);
  if (i == entries_.end())
    return;
  auto& bs = shared(i->second).borrowers;
  auto b = find_borrower(bs, borrower);
  if (b == bs.end()) {
    // Ahead of the registrations it ends: kept, for them to cancel.
    bs.emplace_back(borrower, -n);
    return;
  }
  if ((b->second -= n) == 0)
    bs.erase(b);
  events out;
  maybe_free(i, out);
  emit(out);
}

void memory_store::drop_borrower(const worker_id& borrower) {
  std::lock_guard<std::mutex> guard{mu_};
  std::vector<object_id> affected;
  for (auto& [id, e] : entries_) {
    if (!e.share)
      continue;
    auto& bs = e.share->borrowers;
    if (auto b = find_borrower(bs, borrower); b != bs.end()) {
      bs.erase(b);
      affected.push_back(id);
    }
  }
  events out;
  for (const auto& id : affected)
    if (auto i = entries_.find(id); i != entries_.end())
      maybe_free(i, out);
  emit(out);
}

memory_store::counts memory_store::count_of(const object_id& id) const {
  std::lock_guard<std::mutex> guard{mu_};
  auto i = entries_.find(id);
  if (i == entries_.end())
    return {};
  std::size_t borrowing = 0;
  if (const auto* sh = i->second.share.get())
    borrowing = static_cast<std::size_t>(
        std::count_if(sh->borrowers.begin(), sh->borrowers.end(), holds));
  return counts{i->second.local_refs, i->second.task_refs, i->second.contained,
                borrowing};
}

void memory_store::drop(const object_id& id, std::int32_t entry::*count) {
  std::lock_guard<std::mutex> guard{mu_};
  if (auto i = entries_.find(id); i != entries_.end()) {
    --(i->second.*count);
    events out;
    maybe_free(i, out);
    emit(out);
  }
}

void memory_store::release(const object_id& id) {
  drop(id, &entry::local_refs);
}

std::vector<object_id>
memory_store::add_task_refs(const std::vector<detail::task_arg>& args) {
  std::lock_guard<std::mutex> guard{mu_};
  std::vector<object_id> held;
  auto hold = [&](const object_id& id) {
    if (auto i = entries_.find(id); i != entries_.end()) {
      ++i->second.task_refs;
      held.push_back(id);
    }
  };
  for (const auto& arg : args) {
    if (arg.by_ref)
      hold(arg.ref);
    else
      for (const auto& r : arg.inline_value.refs)
        hold(r.id);
  }
  return held;
}

bool memory_store::add_task_ref(const object_id& id) {
  std::lock_guard<std::mutex> guard{mu_};
  auto i = entries_.find(id);
  if (i == entries_.end())
    return false;
  ++i->second.task_refs;
  return true;
}

void memory_store::release_task_ref(const object_id& id) {
  drop(id, &entry::task_refs);
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
  fired_scope fired{*this};
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
  fired_scope fired{*this};
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
