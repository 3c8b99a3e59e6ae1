#include "prism/detail/runtime.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>

#include "prism/api.hpp"
#include "prism/detail/async.hpp"
#include "prism/internal/thread_annotations.hpp"

namespace prism::detail {

namespace {

thread_local runtime* thread_runtime = nullptr;
thread_local const actor_context* thread_actor = nullptr;
thread_local ref_capture* thread_capture = nullptr;
thread_local const std::atomic<bool>* thread_cancel_flag = nullptr;
thread_local async_host* thread_async_host = nullptr;
thread_local const ref_source* thread_source = nullptr;

struct driver_slot {
  std::mutex mu;
  std::shared_ptr<runtime> rt GUARDED_BY(mu);
};

driver_slot& driver() {
  static driver_slot slot;
  return slot;
}

// Read without the lock on hot paths: set by init before any API call and
// cleared by shutdown after the last one (both documented as not concurrent
// with other API calls).
std::atomic<runtime*> driver_raw{nullptr};

} // namespace

runtime::~runtime() = default;

ref_token::~ref_token() {
  if (auto rt = runtime_.lock())
    rt->release(id_);
}

runtime* try_current_runtime() noexcept {
  if (thread_runtime != nullptr)
    return thread_runtime;
  return driver_raw.load(std::memory_order_acquire);
}

runtime& current_runtime() {
  if (auto rt = try_current_runtime())
    return *rt;
  throw not_initialized_error("prism is not initialized: call prism::init()");
}

const actor_context* current_actor() noexcept {
  return thread_actor;
}

void set_current_actor(const actor_context* ctx) noexcept {
  thread_actor = ctx;
}

async_call::~async_call() = default;

async_host* current_async_host() noexcept {
  return thread_async_host;
}

void set_current_async_host(async_host* host) noexcept {
  thread_async_host = host;
}

const std::atomic<bool>* current_cancel_flag() noexcept {
  return thread_cancel_flag;
}

void set_current_cancel_flag(const std::atomic<bool>* flag) noexcept {
  thread_cancel_flag = flag;
}

void set_thread_runtime(runtime* rt) noexcept {
  thread_runtime = rt;
}

void set_driver_runtime(std::shared_ptr<runtime> rt) {
  auto& slot = driver();
  std::lock_guard<std::mutex> guard{slot.mu};
  driver_raw.store(rt.get(), std::memory_order_release);
  slot.rt = std::move(rt);
}

ref_ptr borrow_ref(const object_id& id, const worker_id& owner) {
  auto address = ref_source::address_of(id);
  if (auto rt = try_current_runtime())
    return rt->borrow(id, owner, address);
  // Read outside a running Prism: the ref names the object but keeps no
  // reference count anywhere.
  return std::make_shared<ref_token>(id, owner, std::move(address),
                                     std::weak_ptr<runtime>{});
}

ref_capture::ref_capture() noexcept : outer_(thread_capture) {
  thread_capture = this;
}

ref_capture::~ref_capture() {
  thread_capture = outer_;
}

void ref_capture::note(const object_id& id, const worker_id& owner,
                       const owner_address& address) {
  if (thread_capture != nullptr)
    thread_capture->refs_.push_back(contained_ref{id, owner, address});
}

std::vector<contained_ref> ref_capture::finish() {
  std::sort(refs_.begin(), refs_.end(),
            [](const contained_ref& x, const contained_ref& y) {
              return x.id < y.id;
            });
  refs_.erase(std::unique(refs_.begin(), refs_.end(),
                          [](const contained_ref& x, const contained_ref& y) {
                            return x.id == y.id;
                          }),
              refs_.end());
  if (auto rt = try_current_runtime())
    for (const auto& r : refs_)
      rt->hold(r.id, r.owner, r.address);
  return std::move(refs_);
}

ref_source::ref_source(const std::vector<contained_ref>& refs) noexcept
    : outer_(thread_source), refs_(refs) {
  thread_source = this;
}

ref_source::~ref_source() {
  thread_source = outer_;
}

owner_address ref_source::address_of(const object_id& id) {
  if (thread_source == nullptr)
    return {};
  // The list is sorted by id (see `ref_capture::finish`), but a value from
  // another process is not trusted to be.
  for (const auto& r : thread_source->refs_)
    if (r.id == id)
      return r.address;
  return {};
}

void release_refs(const std::vector<contained_ref>& refs) {
  if (refs.empty())
    return;
  if (auto rt = try_current_runtime())
    for (const auto& r : refs)
      rt->release(r.id);
}

} // namespace prism::detail

namespace prism {

void get(const std::vector<object_ref<void>>& refs,
         std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (const auto& ref : refs) {
    get(ref, detail::time_left(timeout, deadline));
  }
}

bool is_cancelled() noexcept {
  const auto* flag = detail::current_cancel_flag();
  return flag != nullptr && flag->load(std::memory_order_acquire);
}

runtime_context get_runtime_context() {
  auto& rt = detail::current_runtime();
  runtime_context ctx;
  ctx.job = rt.current_job();
  ctx.worker = rt.self();
  ctx.node = rt.node();
  ctx.task = rt.current_task();
  ctx.attempt = rt.current_attempt();
  return ctx;
}

} // namespace prism
