#include "prism/internal/reconciler.hpp"

#include <algorithm>
#include <cstdio>
#include <set>
#include <unordered_set>

#include "prism/internal/autoscaler_policy.hpp"
#include "prism/internal/backoff.hpp"

namespace prism::internal {

namespace {

/// Failures `status` keeps, and how long terminated instances are kept (for
/// their history) before they are forgotten.
constexpr std::size_t max_failures = 50;
constexpr std::chrono::minutes terminated_kept{10};
constexpr std::size_t max_terminated_kept = 2000;

std::string seconds(std::chrono::milliseconds d) {
  char text[32];
  std::snprintf(text, sizeof text, "%g s",
                static_cast<double>(d.count()) / 1000.0);
  return text;
}

/// A provider's call, with anything it throws turned into a refusal.
template <class Call>
provider_reply guarded(Call&& call) {
  try {
    return call();
  } catch (const std::exception& e) {
    return provider_reply{provider_answer::rejected,
                          std::string{"the provider threw: "} + e.what()};
  } catch (...) {
    return provider_reply{provider_answer::rejected,
                          "the provider threw a non-exception"};
  }
}

/// The provider's listing, with anything it throws turned into a failed one.
instance_listing list_instances(node_provider& provider) {
  instance_listing listing;
  try {
    listing = provider.non_terminated();
  } catch (const std::exception& e) {
    listing.ok = false;
    listing.error = std::string{"the provider threw: "} + e.what();
  } catch (...) {
    listing.ok = false;
    listing.error = "the provider threw a non-exception";
  }
  return listing;
}

/// Whether an instance that counted as gone went because it was terminated,
/// rather than vanishing while allocated or running.
bool ended_by_termination(const instance& x) {
  return !x.history.empty() &&
         x.history.back().from != instance_state::allocated &&
         x.history.back().from != instance_state::running;
}

} // namespace

reconciler::reconciler(autoscaler_config cfg, node_provider& provider,
                       instance_storage* storage, std::uint64_t seed)
    : cfg_(std::move(cfg)), provider_(provider), storage_(storage),
      random_(seed) {
  char text[24];
  std::snprintf(text, sizeof text, "%012llx",
                static_cast<unsigned long long>(random_() & 0xffffffffffffULL));
  prefix_ = text;
  restore();
}

// -- one pass -----------------------------------------------------------------

void reconciler::step(autoscaler_time now, const cluster_view& cluster) {
  now_ = now;
  ++passes_;
  try {
    observe_errors();
    observe_listing();
    observe_cluster(cluster);
    enforce_deadlines();
    decide(cluster);
    // Request ids are written before the provider sees them: a head that
    // dies in between launches again with the same ids, never new ones. If
    // they cannot be written, nothing is sent this pass.
    if (persist())
      act();
    persist();
    retire_terminated();
    build_status(cluster);
  } catch (const std::exception& e) {
    // Nothing above throws by design; if something does, this pass ends and
    // the next one starts again from what was recorded.
    record_failure("", "internal", std::string{"a pass failed: "} + e.what());
  } catch (...) {
    record_failure("", "internal", "a pass failed: a non-exception was thrown");
  }
}

// -- observing ----------------------------------------------------------------

void reconciler::observe_errors() {
  std::vector<provider_error> errors;
  try {
    errors = provider_.poll_errors();
  } catch (const std::exception& e) {
    record_failure("", "provider", std::string{"polling errors: "} + e.what());
    return;
  } catch (...) {
    record_failure("", "provider",
                   "polling errors: a non-exception was thrown");
    return;
  }
  for (auto& e : errors) {
    if (e.failed == provider_error::what_failed::launch) {
      auto r = by_request_.find(e.request_id);
      int left = std::max(e.count, 0);
      std::string type = e.node_type;
      if (r != by_request_.end()) {
        for (const auto& id : r->second) {
          auto& x = instances_.at(id);
          if (left == 0)
            break;
          if (x.state != instance_state::requested &&
              !(x.state == instance_state::stopping && x.cloud_id.empty()))
            continue;
          type = x.node_type;
          --left;
          if (x.state == instance_state::requested) {
            change(x, instance_state::allocation_failed,
                   "its launch failed: " + e.cause + ": " + e.message);
            change(x, instance_state::terminated, "its failure was recorded");
          } else {
            change(x, instance_state::terminated,
                   "cancelled, and its launch failed");
          }
        }
      }
      type_failed(type, e.cause,
                  "launch " + e.request_id + " of " + std::to_string(e.count) +
                      " failed: " + e.message);
      continue;
    }
    for (const auto& cloud : e.instance_ids) {
      auto c = by_cloud_.find(cloud);
      if (c == by_cloud_.end())
        continue;
      auto& x = instances_.at(c->second);
      if (x.state != instance_state::stopping)
        continue;
      x.retry_at = now_ + draw_backoff(x.terminate_attempts);
      change(x, instance_state::termination_failed,
             "its termination failed: " + e.cause + ": " + e.message);
      record_failure(x.node_type, e.cause,
                     "terminating " + cloud + " failed: " + e.message);
    }
  }
}

void reconciler::observe_listing() {
  auto listing = list_instances(provider_);
  if (!listing.ok) {
    // Says nothing of what exists: nobody counts as missing.
    record_failure("", "listing", "listing instances failed: " + listing.error);
    return;
  }
  std::unordered_set<std::string> seen;
  seen.reserve(listing.instances.size());
  for (const auto& c : listing.instances)
    if (!c.id.empty() && seen.insert(c.id).second)
      observe_listed(c);
  observe_unlisted(seen);
}

void reconciler::observe_listed(const cloud_instance& c) {
  bool ended_by_us = false;
  if (auto k = by_cloud_.find(c.id); k != by_cloud_.end()) {
    auto& x = instances_.at(k->second);
    if (x.state != instance_state::terminated) {
      seen_again(x, c);
      return;
    }
    // Listed again after it counted as gone: a new instance to us, or
    // (if it went because it was terminated) one to terminate again.
    ended_by_us = ended_by_termination(x);
  }
  if (auto* owner = waiting_for(c))
    match(*owner, c);
  else
    add_found(c, ended_by_us);
}

void reconciler::seen_again(instance& x, const cloud_instance& c) {
  x.missed_listings = 0;
  x.seen_at = now_;
  if (!c.address.empty() && x.address != c.address) {
    x.address = c.address;
    dirty_.push_back(x.id);
  }
}

instance* reconciler::waiting_for(const cloud_instance& c) {
  if (c.request_id.empty())
    return nullptr;
  auto r = by_request_.find(c.request_id);
  if (r == by_request_.end())
    return nullptr;
  for (const auto& id : r->second) {
    auto& x = instances_.at(id);
    // Queued too: a head that died after it sent the launch and
    // before it wrote so comes back with the instance queued.
    if (x.cloud_id.empty() && (x.state == instance_state::queued ||
                               x.state == instance_state::requested ||
                               x.state == instance_state::stopping))
      return &x;
  }
  return nullptr;
}

void reconciler::match(instance& owner, const cloud_instance& c) {
  listed(owner, c);
  if (owner.state == instance_state::queued) {
    ++owner.launch_attempts;
    owner.called_at = now_;
    change(owner, instance_state::requested,
           "its launch was sent before the autoscaler restarted");
  }
  if (owner.state == instance_state::requested) {
    change(owner, instance_state::allocated,
           "listed by the provider as " + c.id);
  } else {
    // Cancelled before it was listed: now it can be terminated.
    owner.call_due = true;
    dirty_.push_back(owner.id);
  }
}

void reconciler::add_found(const cloud_instance& c, bool terminate_again) {
  auto& x = add(c.node_type, instance_state::allocated,
                "listed by the provider as " + c.id +
                    (c.request_id.empty() ? ", launched by nobody here"
                                          : ", for request " + c.request_id +
                                                " that no instance waits for") +
                    ": taken on");
  x.found = true;
  x.request_id = c.request_id;
  listed(x, c);
  ++found_;
  if (terminate_again)
    stop(x, "listed again after it was terminated: terminated again");
}

void reconciler::observe_unlisted(const std::unordered_set<std::string>& seen) {
  for (auto& [id, x] : instances_) {
    if (x.cloud_id.empty() || x.state == instance_state::terminated ||
        seen.contains(x.cloud_id))
      continue;
    auto stopping = x.state == instance_state::stopping ||
                    x.state == instance_state::termination_failed;
    // One being terminated and no longer listed is what was asked: no grace
    // (if it shows again, it is terminated again).
    if (++x.missed_listings < cfg_.missed_listings ||
        (!stopping && now_ - x.seen_at < cfg_.gone_grace))
      continue;
    if (!stopping)
      record_failure(x.node_type, "vanished",
                     x.cloud_id + " is no longer listed (preempted, or ended "
                                  "elsewhere)");
    change(x, instance_state::terminated,
           stopping
               ? "no longer listed"
               : "no longer listed in " + std::to_string(x.missed_listings) +
                     " listings: preempted, or ended elsewhere");
  }
}

void reconciler::observe_cluster(const cluster_view& cluster) {
  std::unordered_map<std::string, const cluster_node_view*> nodes;
  for (const auto& n : cluster.nodes)
    if (!n.cloud_id.empty())
      nodes.emplace(n.cloud_id, &n);
  for (auto& [id, x] : instances_) {
    if (x.state != instance_state::allocated &&
        x.state != instance_state::running) {
      if (!node_missing_.empty())
        node_missing_.erase(id);
      continue;
    }
    auto n = nodes.find(x.cloud_id);
    if (x.state == instance_state::allocated) {
      if (n == nodes.end())
        continue;
      x.node_id = n->second->node_id;
      x.idle = n->second->idle;
      x.idle_since = n->second->idle_since;
      change(x, instance_state::running,
             "its node " + x.node_id + " joined the cluster");
      health_[x.node_type].failures = 0;
      continue;
    }
    if (n == nodes.end()) {
      auto [since, first] = node_missing_.emplace(id, now_);
      if (now_ - since->second < cfg_.node_grace)
        continue;
      node_missing_.erase(since);
      record_failure(x.node_type, "node_died",
                     "node " + x.node_id + " on " + x.cloud_id +
                         " left the cluster");
      stop(x, "its node " + x.node_id + " left the cluster " +
                  seconds(cfg_.node_grace) + " ago or more");
      continue;
    }
    node_missing_.erase(id);
    x.idle = n->second->idle;
    x.idle_since = n->second->idle_since;
  }
}

void reconciler::enforce_deadlines() {
  for (auto& [id, x] : instances_) {
    auto in_state = now_ - x.since;
    switch (x.state) {
    case instance_state::queued:
      if (in_state >= cfg_.queued_timeout) {
        record_failure(x.node_type, "not_launched",
                       "wanted, but not launched within " +
                           seconds(cfg_.queued_timeout));
        change(x, instance_state::terminated,
               "not launched within " + seconds(cfg_.queued_timeout));
      }
      break;
    case instance_state::requested:
      if (x.call_due || now_ - x.called_at < cfg_.request_timeout)
        break;
      if (x.launch_attempts < cfg_.max_launch_attempts) {
        // Sent again with the same request id: a launch that did happen
        // is not made twice.
        x.call_due = true;
        break;
      }
      change(x, instance_state::allocation_failed,
             "nothing listed for request " + x.request_id + " after " +
                 std::to_string(x.launch_attempts) + " launches");
      change(x, instance_state::terminated, "its failure was recorded");
      type_failed(x.node_type, "not_listed",
                  "nothing listed for request " + x.request_id + " after " +
                      std::to_string(x.launch_attempts) + " launches");
      break;
    case instance_state::allocated:
      if (in_state >= cfg_.join_timeout) {
        type_failed(x.node_type, "never_joined",
                    x.cloud_id + " did not join the cluster within " +
                        seconds(cfg_.join_timeout));
        stop(x, "its node did not join within " + seconds(cfg_.join_timeout));
      }
      break;
    case instance_state::stopping:
      if (x.cloud_id.empty()) {
        // Cancelled before it was listed: if nothing shows for its
        // request in all the time its launches had, nothing was made.
        if (now_ - x.called_at >=
            cfg_.request_timeout * cfg_.max_launch_attempts)
          change(x, instance_state::terminated,
                 "cancelled, and nothing was listed for its request");
      } else if (!x.call_due && now_ - x.called_at >= cfg_.stop_timeout) {
        x.retry_at = now_ + draw_backoff(x.terminate_attempts);
        change(x, instance_state::termination_failed,
               "still listed " + seconds(cfg_.stop_timeout) +
                   " after its termination");
        record_failure(x.node_type, "not_terminated",
                       x.cloud_id + " still listed " +
                           seconds(cfg_.stop_timeout) +
                           " after its termination");
      }
      break;
    case instance_state::termination_failed:
      if (now_ >= x.retry_at) {
        change(x, instance_state::stopping, "its termination is retried");
        x.call_due = true;
      }
      break;
    default:
      break;
    }
  }
}

// -- deciding -----------------------------------------------------------------

void reconciler::decide(const cluster_view& cluster) {
  scaling_view view;
  view.now = now_;
  view.demand = cluster.demand;
  for (const auto& [type, h] : health_)
    if (now_ < h.until)
      view.backed_off.insert(type);
  std::unordered_set<std::string> counted;
  for (const auto& n : cluster.nodes) {
    if (!n.cloud_id.empty() && !by_cloud_.contains(n.cloud_id))
      continue; // joined before the provider listed it: counted once listed
    capacity_node c;
    if (!n.cloud_id.empty()) {
      const auto& x = instances_.at(by_cloud_.at(n.cloud_id));
      if (x.state != instance_state::running || !counted.insert(x.id).second)
        continue;
      c.instance_id = x.id;
      c.node_type = x.node_type;
      c.since = x.since;
    }
    c.free = n.free;
    c.idle = n.idle;
    c.idle_since = n.idle_since;
    view.nodes.push_back(std::move(c));
  }
  for (const auto& [id, x] : instances_) {
    if (x.state == instance_state::running && !counted.contains(id)) {
      // Its node is missing from the cluster for now: it counts toward the
      // maximums, busy, with nothing free.
      capacity_node c;
      c.instance_id = id;
      c.node_type = x.node_type;
      c.since = x.since;
      view.nodes.push_back(std::move(c));
      continue;
    }
    if (!is_pending(x.state))
      continue;
    capacity_node c;
    c.instance_id = id;
    c.node_type = x.node_type;
    c.state = x.state;
    c.since = x.since;
    if (auto* t = cfg_.type(x.node_type))
      c.free = t->resources;
    view.nodes.push_back(std::move(c));
  }
  // The same view, whatever order the hash map iterates in.
  std::stable_sort(view.nodes.begin(), view.nodes.end(),
                   [](const auto& a, const auto& b) {
                     return a.instance_id < b.instance_id;
                   });
  auto plan = plan_scaling(cfg_, view);
  for (auto& [id, why] : plan.stop)
    if (auto i = instances_.find(id); i != instances_.end())
      stop(i->second, std::move(why));
  for (const auto& [type, count] : plan.launch) {
    auto request = next_id("req");
    for (int k = 0; k < count; ++k) {
      auto& x = add(type, instance_state::queued,
                    "wanted: a minimum of its type, or demand");
      x.request_id = request;
      x.request_count = count;
      by_request_[request].push_back(x.id);
    }
  }
  infeasible_ = std::move(plan.infeasible);
  waiting_ = std::move(plan.waiting);
}

// -- acting -------------------------------------------------------------------

void reconciler::act() {
  send_launches();
  send_terminations();
}

void reconciler::send_launches() {
  // One call per request: new ones (queued, their type not backed off) and
  // those sent again (requested, due).
  std::map<std::string, std::vector<instance*>> due;
  for (auto& [id, x] : instances_) {
    auto h = health_.find(x.node_type);
    if (h != health_.end() && now_ < h->second.until)
      continue;
    if (x.state == instance_state::queued ||
        (x.state == instance_state::requested && x.call_due))
      due[x.request_id].push_back(&x);
  }
  for (auto& [request, group] : due) {
    auto& first = *group.front();
    auto type = first.node_type;
    // A first launch asks for the instances of its request still wanted
    // (some may have been cancelled while it waited); a retry asks for what
    // the first asked.
    auto fresh = first.state == instance_state::queued;
    if (fresh)
      for (auto* x : group)
        x->request_count = static_cast<int>(group.size());
    auto count = first.request_count;
    auto reply =
        guarded([&] { return provider_.launch(type, count, request); });
    if (reply.answer == provider_answer::rejected) {
      type_failed(type, "refused",
                  "launch " + request + " refused: " + reply.message);
      for (auto* x : group) {
        if (fresh) {
          // Nothing was made: the demand is planned again, on another
          // type while this one backs off.
          change(*x, instance_state::terminated,
                 "its launch was refused: " + reply.message);
        } else {
          // Counted, so that a provider that refuses every retry still
          // ends the request at its deadline.
          ++x->launch_attempts;
          x->called_at = now_;
          x->call_due = false;
          dirty_.push_back(x->id);
        }
      }
      continue;
    }
    for (auto* x : group) {
      ++x->launch_attempts;
      x->called_at = now_;
      x->call_due = false;
      if (x->state == instance_state::queued)
        change(*x, instance_state::requested,
               "launch " + request + " sent" +
                   (reply.answer == provider_answer::unknown
                        ? " (its answer was lost: " + reply.message + ")"
                        : ""));
      else
        dirty_.push_back(x->id);
    }
  }
}

void reconciler::send_terminations() {
  std::vector<instance*> due;
  for (auto& [id, x] : instances_)
    if (x.state == instance_state::stopping && x.call_due &&
        !x.cloud_id.empty())
      due.push_back(&x);
  if (due.empty())
    return;
  std::sort(due.begin(), due.end(),
            [](auto* a, auto* b) { return a->id < b->id; });
  std::vector<std::string> ids;
  for (auto* x : due)
    ids.push_back(x->cloud_id);
  // Each attempt its own request id: the provider must act on a retry.
  auto request = next_id("term");
  auto reply = guarded([&] { return provider_.terminate(ids, request); });
  for (auto* x : due) {
    ++x->terminate_attempts;
    x->called_at = now_;
    if (reply.answer == provider_answer::rejected) {
      x->retry_at = now_ + draw_backoff(x->terminate_attempts);
      change(*x, instance_state::termination_failed,
             "its termination was refused: " + reply.message);
      continue;
    }
    x->call_due = false;
    dirty_.push_back(x->id);
  }
  if (reply.answer == provider_answer::rejected)
    record_failure("", "refused",
                   "terminating " + std::to_string(ids.size()) +
                       " instances refused: " + reply.message);
}

// -- bookkeeping --------------------------------------------------------------

instance& reconciler::add(std::string node_type, instance_state state,
                          std::string why) {
  auto id = next_id("inst");
  if (log_)
    log_(id + " (" + node_type + ") " + to_string(state) + ": " + why);
  auto [i, fresh] = instances_.emplace(
      id, new_instance(id, std::move(node_type), state, now_, std::move(why)));
  dirty_.push_back(id);
  return i->second;
}

void reconciler::change(instance& x, instance_state to, std::string why) {
  if (log_ && allowed(x.state, to))
    log_(x.id + " (" + x.node_type + ", " +
         (x.cloud_id.empty() ? "not listed" : x.cloud_id) + ") " +
         to_string(x.state) + " -> " + to_string(to) + ": " + why);
  if (change_state(x, to, now_, std::move(why)))
    dirty_.push_back(x.id);
  else
    record_failure(x.node_type, "illegal_transition",
                   x.id + ": " + to_string(x.state) + " -> " + to_string(to) +
                       " refused");
}

void reconciler::stop(instance& x, std::string why) {
  switch (x.state) {
  case instance_state::queued:
    change(x, instance_state::terminated, "cancelled: " + why);
    return;
  case instance_state::requested:
  case instance_state::allocated:
  case instance_state::running:
    // A requested one is terminated once the provider lists it.
    x.call_due = !x.cloud_id.empty();
    change(x, instance_state::stopping, std::move(why));
    return;
  default:
    return;
  }
}

void reconciler::listed(instance& x, const cloud_instance& c) {
  x.cloud_id = c.id;
  x.address = c.address;
  x.seen_at = now_;
  x.missed_listings = 0;
  by_cloud_[c.id] = x.id;
  dirty_.push_back(x.id);
}

void reconciler::type_failed(const std::string& type, std::string cause,
                             std::string message) {
  auto& h = health_[type];
  // One failure a pass: eight instances of one failed launch are one
  // failure, not eight doublings of the backoff.
  if (h.failed_at == now_ && h.failures > 0) {
    record_failure(type, std::move(cause), std::move(message));
    return;
  }
  h.failed_at = now_;
  ++h.failures;
  auto pause = draw_backoff(h.failures);
  h.until = std::max(h.until, now_ + pause);
  record_failure(type, std::move(cause),
                 std::move(message) + "; " + type + " backed off for " +
                     seconds(pause));
}

void reconciler::record_failure(std::string type, std::string cause,
                                std::string message) {
  failures_.push_back(autoscaler_failure{now_, std::move(type),
                                         std::move(cause), std::move(message)});
  while (failures_.size() > max_failures)
    failures_.pop_front();
}

std::chrono::milliseconds reconciler::draw_backoff(int failures) {
  auto unit = std::uniform_real_distribution<double>{0.0, 1.0}(random_);
  return backoff_delay(cfg_.type_backoff, std::max(failures, 1), unit);
}

std::string reconciler::next_id(const char* kind) {
  return std::string{kind} + "-" + prefix_ + "-" + std::to_string(++next_);
}

void reconciler::retire_terminated() {
  std::vector<std::pair<autoscaler_time, std::string>> ended;
  for (const auto& [id, x] : instances_)
    if (x.state == instance_state::terminated)
      ended.emplace_back(x.since, id);
  std::sort(ended.begin(), ended.end());
  auto excess = ended.size() > max_terminated_kept
                    ? ended.size() - max_terminated_kept
                    : 0;
  for (std::size_t k = 0; k < ended.size(); ++k) {
    if (k >= excess && now_ - ended[k].first < terminated_kept)
      break;
    auto i = instances_.find(ended[k].second);
    auto& x = i->second;
    if (auto c = by_cloud_.find(x.cloud_id);
        c != by_cloud_.end() && c->second == x.id)
      by_cloud_.erase(c);
    if (auto r = by_request_.find(x.request_id); r != by_request_.end()) {
      std::erase(r->second, x.id);
      if (r->second.empty())
        by_request_.erase(r);
    }
    erased_.push_back(x.id);
    instances_.erase(i);
  }
  if (!erased_.empty())
    persist();
}

} // namespace prism::internal
