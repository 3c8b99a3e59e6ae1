// The reconciler's instances in its `instance_storage`: read back when it is
// made, and what changed written during each pass, so that a restarted head
// goes on where the last one stopped.

#include "prism/internal/reconciler.hpp"

#include <algorithm>
#include <exception>
#include <string>
#include <vector>

namespace prism::internal {

void reconciler::restore() {
  if (!storage_)
    return;
  for (auto& x : storage_->load()) {
    auto id = x.id;
    // Of two records of one cloud id (one that ended, one found when it
    // was listed again), the one not terminated is the instance's.
    if (!x.cloud_id.empty()) {
      auto [k, fresh] = by_cloud_.emplace(x.cloud_id, id);
      if (!fresh && x.state != instance_state::terminated)
        k->second = id;
    }
    if (!x.request_id.empty())
      by_request_[x.request_id].push_back(id);
    instances_.emplace(std::move(id), std::move(x));
  }
}

bool reconciler::persist() {
  if (!storage_) {
    dirty_.clear();
    erased_.clear();
    return true;
  }
  std::sort(dirty_.begin(), dirty_.end());
  dirty_.erase(std::unique(dirty_.begin(), dirty_.end()), dirty_.end());
  std::vector<const instance*> changed;
  for (const auto& id : dirty_)
    if (auto i = instances_.find(id); i != instances_.end())
      changed.push_back(&i->second);
  try {
    if (!changed.empty())
      storage_->save(changed);
    dirty_.clear();
    if (!erased_.empty())
      storage_->erase(erased_);
    erased_.clear();
    return true;
  } catch (const std::exception& e) {
    // Kept dirty: written on the next pass.
    record_failure("", "storage", std::string{"saving instances: "} + e.what());
    return false;
  }
}

} // namespace prism::internal
