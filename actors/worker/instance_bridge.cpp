#include "worker/instance_bridge.hpp"

#include <algorithm>

#include "common/log.hpp"
#include "prism/error.hpp"
#include "prism/internal/object_arena.hpp"

namespace prism::actors {

namespace {

/// Addresses of objects the process holds nothing of, at most: they serve
/// refs it may name again (one it read from a value), and go beyond this.
constexpr std::size_t max_known = 65536;

/// The error the process's call threw, to throw there again. REQUIRES:
/// called inside a `catch` block.
detail::error_info error_of_call() {
  detail::error_info err;
  try {
    throw;
  } catch (const task_error& e) {
    err.code = errc::task_failed;
    err.exception_type = e.exception_type();
    err.message = e.exception_message();
    err.function_name = e.function_name();
  } catch (const error& e) {
    err.code = e.code();
    err.message = e.what();
  } catch (const std::exception& e) {
    err.code = errc::internal;
    err.message = e.what();
  } catch (...) {
    err.code = errc::internal;
    err.message = "a runtime call threw something that is not an exception";
  }
  return err;
}

/// Whether `call` only touches references: it never waits, and it is made
/// in order with the process's other frames.
bool touches_refs_only(const instance_wire::runtime_call& call) {
  using instance_wire::op;
  return call.what == op::borrow || call.what == op::hold ||
         call.what == op::release || call.what == op::release_value;
}

/// Values this large or larger that lie in the node's store are read there
/// by the process, not copied to it.
constexpr std::size_t in_place_bytes = 64 * 1024;

} // namespace

instance_bridge::instance_bridge(std::shared_ptr<detail::runtime> rt,
                                 std::shared_ptr<executor> pool,
                                 std::function<void()> wake,
                                 when_ready_fn when_ready)
    : rt_(std::move(rt)), pool_(std::move(pool)), wake_(std::move(wake)),
      when_ready_(std::move(when_ready)) {}

void instance_bridge::take(instance_link& link,
                           instance_wire::runtime_call call) {
  restore_call(call);
  if (call.what == instance_wire::op::when_ready) {
    // Answered once the object is; nothing waits meanwhile.
    auto answer = [link = link.shared_from_this(), id = call.id] {
      instance_wire::runtime_answer a;
      a.id = id;
      link->answer(a);
    };
    if (call.refs.empty() || !when_ready_) {
      answer();
      return;
    }
    when_ready_(*token_of(call.refs.front()), answer);
    return;
  }
  if (touches_refs_only(call)) {
    instance_wire::runtime_answer a;
    a.id = call.id;
    make_ref_call(call, a);
    if (call.id != 0)
      link.answer(a);
    return;
  }
  pool_->submit([self = shared_from_this(), link = link.shared_from_this(),
                 call = std::move(call)]() mutable {
    running_call running;
    running.task = call.task;
    {
      std::lock_guard<std::mutex> guard{self->mu_};
      self->running_.push_back(&running);
    }
    instance_wire::runtime_answer a;
    a.id = call.id;
    detail::set_thread_runtime(self->rt_.get());
    detail::set_current_cancel_flag(&running.cancelled);
    try {
      self->make(call, a);
    } catch (...) {
      a = instance_wire::runtime_answer{};
      a.id = call.id;
      a.error = error_of_call();
    }
    detail::set_current_cancel_flag(nullptr);
    detail::set_thread_runtime(nullptr);
    {
      std::lock_guard<std::mutex> guard{self->mu_};
      std::erase(self->running_, &running);
    }
    link->answer(a);
  });
}

void instance_bridge::sending(const std::vector<detail::value>& values) {
  std::lock_guard<std::mutex> guard{mu_};
  for (auto& v : values)
    for (auto& r : v.refs)
      note(r);
  trim();
}

void instance_bridge::restore(detail::value& v) {
  if (v.refs.empty())
    return;
  std::lock_guard<std::mutex> guard{mu_};
  for (auto& r : v.refs)
    restore(r);
}

void instance_bridge::handed_on(
    const std::vector<detail::contained_ref>& refs) {
  std::lock_guard<std::mutex> guard{mu_};
  for (auto& r : refs)
    if (auto k = known_.find(r.id); k != known_.end() && k->second.holds > 0)
      --k->second.holds;
}

void instance_bridge::cancel(const task_id& task) {
  bool any = false;
  {
    std::lock_guard<std::mutex> guard{mu_};
    for (auto* r : running_)
      if (r->task == task) {
        r->cancelled.store(true);
        any = true;
      }
  }
  if (any && wake_)
    wake_();
}

void instance_bridge::note(const detail::contained_ref& r) {
  auto& k = known_[r.id];
  if (!k.address.lock() || !k.address)
    k.address = r.address;
}

void instance_bridge::restore(detail::contained_ref& r) {
  if (r.address.lock())
    return;
  if (auto k = known_.find(r.id); k != known_.end() && k->second.address)
    r.address = k->second.address;
}

void instance_bridge::restore_call(instance_wire::runtime_call& call) {
  std::lock_guard<std::mutex> guard{mu_};
  for (auto& arg : call.args) {
    for (auto& r : arg.inline_value.refs)
      restore(r);
    if (arg.by_ref && !arg.address.lock())
      if (auto k = known_.find(arg.ref); k != known_.end())
        arg.address = k->second.address;
  }
  for (auto& r : call.value.refs)
    restore(r);
  for (auto& r : call.refs)
    restore(r);
}

detail::ref_ptr instance_bridge::token_of(const detail::contained_ref& r) {
  {
    std::lock_guard<std::mutex> guard{mu_};
    if (auto k = known_.find(r.id);
        k != known_.end() && !k->second.refs.empty())
      return k->second.refs.front();
  }
  return std::make_shared<detail::ref_token>(r.id, r.owner, r.address,
                                             std::weak_ptr<detail::runtime>{});
}

detail::contained_ref instance_bridge::keep(detail::ref_ptr ref) {
  detail::contained_ref result{ref->id(), ref->owner(), ref->address()};
  std::lock_guard<std::mutex> guard{mu_};
  auto& k = known_[ref->id()];
  k.address = ref->address();
  k.refs.push_back(std::move(ref));
  return result;
}

void instance_bridge::trim() {
  if (known_.size() <= max_known)
    return;
  std::erase_if(known_, [](const auto& e) {
    return e.second.refs.empty() && e.second.holds == 0;
  });
}

void instance_bridge::hand_in_place(instance_wire::runtime_answer& a) {
  auto& v = a.value;
  if (v.size() < in_place_bytes)
    return;
  std::uint64_t offset = 0;
  auto view =
      internal::arena_view::containing(v.bytes.data(), v.size(), offset);
  if (!view)
    return;
  a.bytes.path = view->path();
  a.bytes.capacity = view->capacity();
  a.bytes.mark = view->mark();
  a.bytes.offset = offset;
  a.bytes.size = v.size();
  std::lock_guard<std::mutex> guard{mu_};
  a.bytes.handle = ++next_kept_;
  // What keeps the bytes pinned stays here; the answer carries the rest.
  auto kept = v;
  v.bytes = {};
  kept_.emplace(a.bytes.handle, std::move(kept));
}

void instance_bridge::make_ref_call(instance_wire::runtime_call& call,
                                    instance_wire::runtime_answer& a) {
  using instance_wire::op;
  if (call.what == op::release_value) {
    detail::value dropped;
    {
      std::lock_guard<std::mutex> guard{mu_};
      if (auto k = kept_.find(call.number); k != kept_.end()) {
        dropped = std::move(k->second);
        kept_.erase(k);
      }
    }
    return; // dropped here, outside the lock
  }
  try {
    if (call.refs.empty())
      throw invalid_argument_error("a reference call names no object");
    auto& r = call.refs.front();
    switch (call.what) {
    case op::borrow:
      a.refs.push_back(keep(rt_->borrow(r.id, r.owner, r.address)));
      break;
    case op::hold: {
      rt_->hold(r.id, r.owner, r.address);
      std::lock_guard<std::mutex> guard{mu_};
      auto& k = known_[r.id];
      if (!k.address)
        k.address = r.address;
      ++k.holds;
      break;
    }
    case op::release:
      for (auto& each : call.refs) {
        detail::ref_ptr dropped;
        bool held = false;
        {
          std::lock_guard<std::mutex> guard{mu_};
          auto k = known_.find(each.id);
          if (k == known_.end())
            continue;
          if (!k->second.refs.empty()) {
            dropped = std::move(k->second.refs.back());
            k->second.refs.pop_back();
          } else if (k->second.holds > 0) {
            --k->second.holds;
            held = true;
          }
        }
        // Outside the lock: dropping a ref may free the object.
        if (held)
          rt_->release(each.id);
        dropped.reset();
      }
      break;
    default:
      break;
    }
  } catch (...) {
    a.error = error_of_call();
  }
}

void instance_bridge::make(instance_wire::runtime_call& call,
                           instance_wire::runtime_answer& a) {
  using instance_wire::op;
  auto timeout = detail::wait_duration{call.timeout_ms};
  auto first_ref = [&]() -> const detail::contained_ref& {
    if (call.refs.empty())
      throw invalid_argument_error("the call names no object");
    return call.refs.front();
  };
  switch (call.what) {
  case op::submit_task:
    a.refs.push_back(keep(
        rt_->submit_task(call.name, std::move(call.args), call.task_options)));
    break;
  case op::put:
    a.refs.push_back(keep(rt_->put(std::move(call.value))));
    break;
  case op::get:
    a.value = rt_->get(*token_of(first_ref()), timeout);
    sending({a.value});
    hand_in_place(a);
    break;
  case op::wait: {
    std::vector<detail::ref_ptr> tokens;
    std::vector<const detail::ref_token*> refs;
    for (auto& r : call.refs) {
      tokens.push_back(token_of(r));
      refs.push_back(tokens.back().get());
    }
    for (bool ready : rt_->wait(refs, call.number, timeout))
      a.ready.push_back(ready ? 1 : 0);
    break;
  }
  case op::create_actor:
    a.actor = rt_->create_actor(call.name, call.number, std::move(call.args),
                                call.actor_options);
    break;
  case op::submit_actor_task:
    a.refs.push_back(keep(rt_->submit_actor_task(
        call.actor, call.name, std::move(call.args), call.call_options)));
    break;
  case op::find_actor:
    if (auto found = rt_->find_actor(call.name, call.flag ? &call.key : nullptr,
                                     call.number)) {
      a.found = true;
      a.actor = *found;
    }
    break;
  case op::cancel:
    rt_->cancel(*token_of(first_ref()), call.flag, call.flag2);
    break;
  case op::kill_actor:
    rt_->kill_actor(call.actor, call.flag);
    break;
  case op::kv_put:
    a.found = rt_->kv_put(call.name, call.key, call.text, call.flag);
    break;
  case op::kv_get:
    if (auto v = rt_->kv_get(call.name, call.key)) {
      a.found = true;
      a.text = std::move(*v);
    }
    break;
  case op::kv_del:
    a.found = rt_->kv_del(call.name, call.key);
    break;
  case op::kv_keys:
    a.keys = rt_->kv_keys(call.name, call.key);
    break;
  case op::list_state:
    a.page = rt_->list_state(static_cast<state::kind>(call.number),
                             call.list_options);
    break;
  case op::get_state:
    if (auto e =
            rt_->get_state(static_cast<state::kind>(call.number), call.name)) {
      a.found = true;
      a.entry = std::move(*e);
    }
    break;
  case op::summarize_state:
    a.counts =
        rt_->summarize_state(static_cast<state::kind>(call.number), call.key);
    break;
  case op::borrow:
  case op::hold:
  case op::release:
    make_ref_call(call, a);
    break;
  case op::when_ready:
  case op::release_value:
    break; // taken before
  }
}

} // namespace prism::actors
