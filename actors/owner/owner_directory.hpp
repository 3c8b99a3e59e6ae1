#pragma once

#include <mutex>
#include <unordered_map>

#include <caf/actor.hpp>

#include "prism/ids.hpp"
#include "prism/internal/thread_annotations.hpp"

namespace prism::actors {

/// Where each owner of a cluster can be reached, by worker id. A ref carries
/// only its owner's worker id; borrowers look the owner up here.
class owner_directory {
public:
  void add(const worker_id& id, caf::actor owner) {
    std::lock_guard<std::mutex> guard{mu_};
    owners_[id] = std::move(owner);
  }

  void remove(const worker_id& id) {
    std::lock_guard<std::mutex> guard{mu_};
    owners_.erase(id);
  }

  /// Returns the owner, or an invalid handle if it is gone.
  caf::actor find(const worker_id& id) const {
    std::lock_guard<std::mutex> guard{mu_};
    auto i = owners_.find(id);
    return i != owners_.end() ? i->second : caf::actor{};
  }

  /// Calls `f` with every owner.
  template <class F>
  void for_each(F f) const {
    std::lock_guard<std::mutex> guard{mu_};
    for (const auto& [id, owner] : owners_)
      f(owner);
  }

  void clear() {
    std::lock_guard<std::mutex> guard{mu_};
    owners_.clear();
    adopter_ = caf::actor{};
  }

  /// The control store's owner, which adopts durable objects whose owner
  /// died (see `protocol::adopt_object`).
  void set_adopter(caf::actor adopter) {
    std::lock_guard<std::mutex> guard{mu_};
    adopter_ = std::move(adopter);
  }

  caf::actor adopter() const {
    std::lock_guard<std::mutex> guard{mu_};
    return adopter_;
  }

private:
  /// Lock order: taken after a memory store's lock (a store's hook looks
  /// owners up here under its own, memory_store.hpp), never before it:
  /// nothing here calls into a memory store, and `for_each`'s `f` must not
  /// either.
  mutable std::mutex mu_;
  caf::actor adopter_ GUARDED_BY(mu_);
  std::unordered_map<worker_id, caf::actor> owners_ GUARDED_BY(mu_);
};

} // namespace prism::actors
