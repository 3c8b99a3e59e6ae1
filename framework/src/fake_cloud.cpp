#include "prism/internal/fake_cloud.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

namespace prism::internal {

fake_cloud::fake_cloud(std::uint64_t seed, fake_cloud_faults faults,
                       std::map<std::string, resource_map> types,
                       autoscaler_time start)
    : random_(seed), faults_(std::move(faults)), types_(std::move(types)),
      now_(start) {}

bool fake_cloud::chance(double p) {
  return p > 0 && std::uniform_real_distribution<double>{0.0, 1.0}(random_) < p;
}

std::chrono::milliseconds fake_cloud::upto(std::chrono::milliseconds max) {
  if (max.count() <= 0)
    return std::chrono::milliseconds{0};
  return std::chrono::milliseconds{
      std::uniform_int_distribution<std::int64_t>{0, max.count()}(random_)};
}

std::chrono::milliseconds fake_cloud::between(std::chrono::milliseconds min,
                                              std::chrono::milliseconds max) {
  return min + upto(max - min);
}

void fake_cloud::make(const std::string& node_type,
                      const std::string& request_id) {
  machine m;
  m.id = "i-" + std::to_string(++next_);
  m.node_type = node_type;
  m.request_id = request_id;
  m.launched = now_;
  m.visible = now_ + between(faults_.min_invisible, faults_.max_invisible);
  m.found = now_ + upto(faults_.max_lookup_lag);
  m.addressed = now_ + between(faults_.min_no_address, faults_.max_no_address);
  m.joins = now_ + between(faults_.boot_min, faults_.boot_max);
  m.never_joins = chance(faults_.never_joins);
  machines_.emplace(m.id, std::move(m));
}

void fake_cloud::end(machine& m, autoscaler_time at) {
  m.ending = true;
  m.ends = at;
  m.unlisted = at + upto(faults_.max_linger);
}

// -- the virtual clock
// ---------------------------------------------------------

void fake_cloud::advance_to(autoscaler_time now) {
  if (now <= now_)
    return;
  auto seconds = std::chrono::duration<double>(now - now_).count();
  now_ = now;
  if (!types_.empty() && chance(faults_.foreign_per_s * seconds)) {
    auto pick = std::uniform_int_distribution<std::size_t>{0, types_.size() -
                                                                  1}(random_);
    make(std::next(types_.begin(), static_cast<std::ptrdiff_t>(pick))->first,
         "");
  }
  for (auto i = machines_.begin(); i != machines_.end();) {
    auto& m = i->second;
    if (m.ending && !m.ended && m.ends <= now_)
      m.ended = true;
    if (!m.ended && !m.ending && m.joins <= now_ &&
        chance(faults_.preempt_per_s * seconds)) {
      // Preempted: gone at once, from the cluster and (soon) the listing.
      end(m, now_);
      m.ended = true;
    }
    // Forgotten once it is neither running nor listed.
    if (m.ended && m.unlisted <= now_)
      i = machines_.erase(i);
    else
      ++i;
  }
}

// -- node_provider
// --------------------------------------------------------------

provider_reply fake_cloud::launch(const std::string& node_type, int count,
                                  const std::string& request_id) {
  if (chance(faults_.throttle))
    return chance(faults_.lost_reply)
               ? provider_reply{provider_answer::unknown, "timed out"}
               : provider_reply{provider_answer::rejected,
                                "RequestLimitExceeded"};
  if (!types_.contains(node_type) || count <= 0)
    return {provider_answer::rejected, "InvalidParameterValue"};
  if (asked_.contains(request_id))
    return {}; // the same request again: nothing more
  asked_[request_id] = count;
  made_[request_id] = 0;
  auto failing = faults_.no_capacity.find(node_type);
  if (failing != faults_.no_capacity.end() && chance(failing->second)) {
    errors_.push_back(provider_error{provider_error::what_failed::launch,
                                     request_id,
                                     node_type,
                                     count,
                                     {},
                                     "capacity",
                                     "InsufficientInstanceCapacity"});
    return {};
  }
  auto made = count;
  if (count > 1 && chance(faults_.partial_launch)) {
    made = std::uniform_int_distribution<int>{0, count - 1}(random_);
    errors_.push_back(provider_error{provider_error::what_failed::launch,
                                     request_id,
                                     node_type,
                                     count - made,
                                     {},
                                     "capacity",
                                     "only " + std::to_string(made) + " of " +
                                         std::to_string(count) + " launched"});
  }
  for (int k = 0; k < made; ++k)
    make(node_type, request_id);
  made_[request_id] = made;
  if (chance(faults_.lost_reply))
    return {provider_answer::unknown, "timed out"};
  return {};
}

provider_reply fake_cloud::terminate(const std::vector<std::string>& ids,
                                     const std::string& request_id) {
  if (chance(faults_.throttle))
    return {provider_answer::rejected, "RequestLimitExceeded"};
  if (terminations_seen_.contains(request_id))
    return {};
  terminations_seen_[request_id] = true;
  std::vector<std::string> not_found;
  std::vector<std::string> failed;
  for (const auto& id : ids) {
    auto i = machines_.find(id);
    // A lookup by id misses young instances for a while, as EC2's does.
    if (i == machines_.end() || i->second.found > now_) {
      not_found.push_back(id);
      continue;
    }
    auto& m = i->second;
    if (m.ending)
      continue;
    if (chance(faults_.terminate_fails)) {
      failed.push_back(id);
      continue;
    }
    end(m, now_ + upto(faults_.max_terminate_delay));
  }
  if (!not_found.empty())
    errors_.push_back(provider_error{
        provider_error::what_failed::terminate, request_id, "", 0,
        std::move(not_found), "not_found", "InvalidInstanceID.NotFound"});
  if (!failed.empty())
    errors_.push_back(provider_error{provider_error::what_failed::terminate,
                                     request_id, "", 0, std::move(failed),
                                     "internal", "InternalError"});
  return {};
}

instance_listing fake_cloud::non_terminated() {
  instance_listing out;
  if (chance(faults_.throttle)) {
    out.ok = false;
    out.error = "RequestLimitExceeded";
    return out;
  }
  out.instances.reserve(machines_.size());
  for (const auto& [id, m] : machines_) {
    if (m.visible > now_ || (m.ended && m.unlisted <= now_))
      continue;
    if (now_ - m.launched < faults_.young && chance(faults_.drop_young))
      continue;
    if (chance(faults_.drop_any))
      continue;
    out.instances.push_back(
        cloud_instance{m.id, m.node_type, m.request_id,
                       m.addressed <= now_ ? m.id + ".internal" : ""});
  }
  return out;
}

std::vector<provider_error> fake_cloud::poll_errors() {
  return std::exchange(errors_, {});
}

// -- the cluster it plays
// --------------------------------------------------------

std::vector<fake_node> fake_cloud::joined() const {
  std::vector<fake_node> out;
  for (const auto& [id, m] : machines_)
    if (!m.ended && !m.never_joins && m.joins <= now_)
      out.push_back(fake_node{m.id, m.node_type, types_.at(m.node_type)});
  return out;
}

void fake_cloud::preempt(const std::string& id) {
  auto i = machines_.find(id);
  if (i == machines_.end() || i->second.ended)
    return;
  end(i->second, now_);
  i->second.ended = true;
}

std::size_t fake_cloud::running() const {
  return static_cast<std::size_t>(
      std::count_if(machines_.begin(), machines_.end(),
                    [](const auto& m) { return !m.second.ended; }));
}

} // namespace prism::internal
