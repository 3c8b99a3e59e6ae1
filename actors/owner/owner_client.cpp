#include "owner/owner_client.hpp"

#include <caf/all.hpp>

#include "protocol/owner_owner.hpp"
#include "protocol/raylet_worker.hpp"

namespace prism::actors {

namespace {

using store_state = internal::memory_store::state;
using clock = std::chrono::steady_clock;

clock::time_point deadline_of(detail::wait_duration timeout) {
  if (timeout.count() < 0)
    return clock::time_point::max();
  return clock::now() + timeout;
}

detail::value value_or_throw(internal::memory_store::result&& found) {
  if (found.err)
    detail::throw_error(*found.err);
  return std::move(found.val);
}

} // namespace

owner_client::owner_client(caf::actor_system& sys, config cfg)
    : sys_(sys), cfg_(std::move(cfg)), job_(cfg_.job) {}

owner_client::~owner_client() = default;

task_id owner_client::next_task_id() {
  return task_id{cfg_.self, next_seq_.fetch_add(1, std::memory_order_relaxed)};
}

detail::ref_ptr owner_client::submit_task(const std::string& function,
                                          std::vector<detail::task_arg> args,
                                          const detail::task_options& opts) {
  internal::task_spec spec;
  spec.id = next_task_id();
  spec.job = job_;
  spec.function = function;
  spec.name = opts.name;
  spec.args = std::move(args);
  spec.resources = internal::resource_set{opts.resources};
  spec.max_retries = opts.max_retries;
  spec.retry_exceptions = opts.retry_exceptions;
  spec.owner = cfg_.self;
  auto result_id = spec.return_id();
  cfg_.store->add_pending(result_id);
  // Arguments stay alive until the task ends, even if the caller drops its
  // refs right after this call.
  for (const auto& arg : spec.args)
    if (arg.by_ref && arg.owner == cfg_.self)
      cfg_.store->add_task_ref(arg.ref);
  caf::anon_send(cfg_.owner, protocol::submit_task{std::move(spec)});
  return std::make_shared<detail::ref_token>(result_id, cfg_.self,
                                             weak_from_this());
}

detail::ref_ptr owner_client::put(detail::value v) {
  object_id id{next_task_id(), 0};
  cfg_.store->add_ready(id, std::move(v));
  return std::make_shared<detail::ref_token>(id, cfg_.self, weak_from_this());
}

void owner_client::ensure_fetch(const object_id& id, const worker_id& owner) {
  if (owner != cfg_.self)
    caf::anon_send(cfg_.owner, protocol::fetch_object{id, owner});
}

void owner_client::on_block() {
  if (in_worker_ && !blocked_) {
    blocked_ = true;
    caf::anon_send(cfg_.raylet, protocol::worker_blocked{cfg_.self});
  }
}

void owner_client::on_unblock() {
  if (blocked_) {
    blocked_ = false;
    caf::anon_send(cfg_.raylet, protocol::worker_unblocked{cfg_.self});
  }
}

detail::value owner_client::get(const object_id& id, const worker_id& owner,
                                detail::wait_duration timeout) {
  auto deadline = deadline_of(timeout);
  auto found = cfg_.store->lookup(id);
  if (found.st == store_state::ready)
    return value_or_throw(std::move(found));
  if (found.st == store_state::missing) {
    if (owner == cfg_.self)
      throw error(errc::internal,
                  "object " + id.hex() + " is not in its owner's store");
    // A ref read outside this runtime: track it from now on.
    cfg_.store->add_pending(id);
  }
  ensure_fetch(id, owner);
  on_block();
  found = cfg_.store->wait_one(id, deadline);
  on_unblock();
  if (found.st != store_state::ready)
    throw timeout_error("get timed out after " +
                        std::to_string(timeout.count()) +
                        " ms waiting for object " + id.hex());
  return value_or_throw(std::move(found));
}

std::vector<bool>
owner_client::wait(const std::vector<const detail::ref_token*>& refs,
                   std::size_t num_returns, detail::wait_duration timeout) {
  auto deadline = deadline_of(timeout);
  std::vector<object_id> ids;
  ids.reserve(refs.size());
  for (auto* ref : refs) {
    ids.push_back(ref->id());
    if (ref->owner() != cfg_.self) {
      if (cfg_.store->lookup(ref->id()).st == store_state::missing)
        cfg_.store->add_pending(ref->id());
      ensure_fetch(ref->id(), ref->owner());
    }
  }
  auto ready = cfg_.store->wait_many(ids, 0, deadline);
  auto count =
      static_cast<std::size_t>(std::count(ready.begin(), ready.end(), true));
  if (count >= num_returns)
    return ready;
  on_block();
  ready = cfg_.store->wait_many(ids, num_returns, deadline);
  on_unblock();
  return ready;
}

detail::ref_ptr owner_client::borrow(const object_id& id,
                                     const worker_id& owner) {
  if (owner == cfg_.self)
    cfg_.store->add_ref(id);
  else
    cfg_.store->add_pending(id);
  return std::make_shared<detail::ref_token>(id, owner, weak_from_this());
}

void owner_client::escape(const object_id& id) {
  cfg_.store->pin(id);
}

void owner_client::release(const object_id& id) {
  cfg_.store->release(id);
}

} // namespace prism::actors
