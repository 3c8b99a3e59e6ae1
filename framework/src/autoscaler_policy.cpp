#include "prism/internal/autoscaler_policy.hpp"

#include <algorithm>
#include <climits>
#include <tuple>

#include "prism/internal/resource_set.hpp"

namespace prism::internal {

int copies_that_fit(const resource_set& free, const resource_set& need) {
  int copies = INT_MAX;
  for (const auto& [name, units] : need.amounts()) {
    if (units <= 0)
      continue;
    auto have = free.units(name);
    if (have < units)
      return 0;
    copies = static_cast<int>(std::min<std::int64_t>(copies, have / units));
  }
  return copies;
}

namespace {

void take_copies(resource_set& free, const resource_set& need, int copies) {
  for (const auto& [name, units] : need.amounts())
    free.amounts()[name] -= units * copies;
}

/// Somewhere demand can go: a node there is, one pending, or one this plan
/// launches.
struct bin {
  resource_set free;
  /// Its index in the view's nodes; -1 for one this plan launches.
  int node = -1;
  bool needed = false;
};

/// The order pending instances are cancelled in: not yet asked for first,
/// then asked for, then listed; the newest first within each.
int pending_rank(instance_state s) {
  switch (s) {
  case instance_state::queued:
    return 0;
  case instance_state::requested:
    return 1;
  default:
    return 2;
  }
}

class planner {
public:
  planner(const autoscaler_config& cfg, const scaling_view& view)
      : cfg_(cfg), view_(view) {}

  scaling_plan run() {
    count_active();
    enforce_maximums();
    launch_minimums();
    place_demand();
    cancel_unneeded_pending();
    stop_idle_running();
    return std::move(plan_);
  }

private:
  // -- what there is ---------------------------------------------------------

  bool managed(const capacity_node& n) const {
    return !n.instance_id.empty() && is_active(n.state);
  }

  void count_active() {
    for (const auto& n : view_.nodes) {
      if (!managed(n))
        continue;
      ++active_[n.node_type];
      ++total_;
      if (is_pending(n.state))
        ++pending_;
    }
  }

  int max_of(const std::string& type) const {
    auto* t = cfg_.type(type);
    return t ? t->max_workers : 0;
  }

  int min_of(const std::string& type) const {
    auto* t = cfg_.type(type);
    return t ? t->min_workers : 0;
  }

  /// How many more nodes of `type` may be launched now.
  int room(const std::string& type) {
    return std::max(
        0, std::min({max_of(type) - active_[type], cfg_.max_workers - total_,
                     cfg_.max_pending - pending_}));
  }

  void stop(std::size_t index, std::string why) {
    const auto& n = view_.nodes[index];
    stopped_.insert(index);
    --active_[n.node_type];
    --total_;
    if (is_pending(n.state))
      --pending_;
    plan_.stop.emplace_back(n.instance_id, std::move(why));
  }

  void launch(const std::string& type) {
    ++plan_.launch[type];
    ++active_[type];
    ++total_;
    ++pending_;
  }

  // -- maximums --------------------------------------------------------------

  /// Stops `excess` of the instances `in` selects: pending ones first, then
  /// idle ones, then the newest busy ones.
  template <class Selector>
  void stop_excess(int excess, Selector in, const std::string& why) {
    if (excess <= 0)
      return;
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < view_.nodes.size(); ++i)
      if (managed(view_.nodes[i]) && !stopped_.contains(i) &&
          in(view_.nodes[i]))
        order.push_back(i);
    auto key = [this](std::size_t i) {
      const auto& n = view_.nodes[i];
      auto group = is_pending(n.state) ? 0 : (n.idle ? 1 : 2);
      auto rank = is_pending(n.state) ? pending_rank(n.state) : 0;
      // Idle ones: the longest idle first; otherwise the newest first.
      auto time = n.idle && !is_pending(n.state)
                      ? n.idle_since.time_since_epoch()
                      : -n.since.time_since_epoch();
      return std::make_tuple(group, rank, time, n.instance_id);
    };
    std::sort(order.begin(), order.end(),
              [&](auto a, auto b) { return key(a) < key(b); });
    for (std::size_t k = 0; k < order.size() && excess > 0; ++k, --excess)
      stop(order[k], why);
  }

  void enforce_maximums() {
    std::set<std::string> types;
    for (const auto& [type, count] : active_)
      types.insert(type);
    for (const auto& type : types) {
      auto why = cfg_.type(type)
                     ? "above the maximum of " + type + " (" +
                           std::to_string(max_of(type)) + ")"
                     : "its node type " + type + " is not configured";
      stop_excess(
          active_[type] - max_of(type),
          [&](const capacity_node& n) { return n.node_type == type; }, why);
    }
    stop_excess(
        total_ - cfg_.max_workers, [](const capacity_node&) { return true; },
        "above the maximum of all node types (" +
            std::to_string(cfg_.max_workers) + ")");
  }

  // -- minimums and demand ---------------------------------------------------

  void open_bin(const std::string& type) {
    launch(type);
    bins_.push_back(bin{resource_set{cfg_.type(type)->resources}, -1, false});
  }

  void launch_minimums() {
    collect_bins();
    for (const auto& t : cfg_.node_types) {
      auto want = t.min_workers - active_[t.name];
      if (want <= 0 || view_.backed_off.contains(t.name))
        continue;
      for (auto n = std::min(want, room(t.name)); n > 0; --n)
        open_bin(t.name);
    }
  }

  /// The nodes demand may go to, in the order it fills them: the nodes in
  /// the cluster, then pending ones, the most advanced first (so that the
  /// least advanced are the ones left unneeded).
  void collect_bins() {
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < view_.nodes.size(); ++i) {
      const auto& n = view_.nodes[i];
      if (!stopped_.contains(i) &&
          (n.instance_id.empty() || is_active(n.state)))
        order.push_back(i);
    }
    auto rank = [this](std::size_t i) {
      const auto& n = view_.nodes[i];
      // Running 4, then listed 3, launched 2, not launched 1.
      return is_pending(n.state) ? 1 + pending_rank(n.state) : 4;
    };
    std::stable_sort(order.begin(), order.end(),
                     [&](auto a, auto b) { return rank(a) > rank(b); });
    for (auto i : order)
      bins_.push_back(
          bin{resource_set{view_.nodes[i].free}, static_cast<int>(i), false});
  }

  /// Places up to `count` copies of `shape` on `b`; returns how many are
  /// left.
  static int place_on(bin& b, const resource_set& shape, int count) {
    auto take = std::min(count, copies_that_fit(b.free, shape));
    if (take <= 0)
      return count;
    take_copies(b.free, shape, take);
    b.needed = true;
    return count - take;
  }

  /// Places up to `count` copies of `shape` on the bins there are, first
  /// fit; returns how many are left.
  int place(const resource_set& shape, int count) {
    for (auto& b : bins_)
      if (count > 0)
        count = place_on(b, shape, count);
    return count;
  }

  void place_demand() {
    std::map<resource_set, int, shape_order> shapes;
    for (const auto& d : view_.demand)
      ++shapes[resource_set{d}];
    for (const auto& [shape, wanted] : shapes) {
      if (shape.empty())
        continue;
      auto left = place(shape, wanted);
      while (left > 0) {
        std::set<std::string> can;
        for (const auto& t : cfg_.node_types)
          if (!view_.backed_off.contains(t.name) && room(t.name) > 0)
            can.insert(t.name);
        auto type = pick_node_type(cfg_, shape.to_map(), left, can);
        if (!type) {
          auto& into = fits_some_type(cfg_, shape.to_map()) ? plan_.waiting
                                                            : plan_.infeasible;
          into.emplace_back(shape.to_map(), left);
          break;
        }
        open_bin(*type);
        left = place_on(bins_.back(), shape, left);
      }
    }
  }

  /// Larger shapes first (they are the hardest to place), then by name.
  struct shape_order {
    bool operator()(const resource_set& a, const resource_set& b) const {
      std::int64_t sa = 0, sb = 0;
      for (const auto& [name, units] : a.amounts())
        sa += units;
      for (const auto& [name, units] : b.amounts())
        sb += units;
      if (sa != sb)
        return sa > sb;
      return a.amounts() < b.amounts();
    }
  };

  // -- scaling down ----------------------------------------------------------

  /// Running instances of `type` that stay.
  int running_kept(const std::string& type) const {
    int n = 0;
    for (std::size_t i = 0; i < view_.nodes.size(); ++i) {
      const auto& x = view_.nodes[i];
      if (managed(x) && x.node_type == type &&
          x.state == instance_state::running && !stopped_.contains(i))
        ++n;
    }
    return n;
  }

  void cancel_unneeded_pending() {
    index_needed();
    for (const auto& t : cfg_.node_types) {
      auto kept = running_kept(t.name);
      // The most advanced pending ones are kept first, for the minimum.
      std::vector<std::size_t> unneeded;
      for (std::size_t i = 0; i < view_.nodes.size(); ++i) {
        const auto& n = view_.nodes[i];
        if (!managed(n) || n.node_type != t.name || !is_pending(n.state) ||
            stopped_.contains(i))
          continue;
        // Only one not yet launched is cancelled for want of demand: one
        // launched may be the node a task just went to, before the provider
        // listed it. It goes once idle, as any node does.
        if (needed_[i] || n.state != instance_state::queued)
          ++kept;
        else
          unneeded.push_back(i);
      }
      std::sort(unneeded.begin(), unneeded.end(), [&](auto a, auto b) {
        const auto& x = view_.nodes[a];
        const auto& y = view_.nodes[b];
        return std::make_tuple(-pending_rank(x.state), x.since, x.instance_id) <
               std::make_tuple(-pending_rank(y.state), y.since, y.instance_id);
      });
      for (auto i : unneeded) {
        if (kept < t.min_workers) {
          ++kept;
          continue;
        }
        stop(i, "no longer needed: no demand waits for it");
      }
    }
  }

  void stop_idle_running() {
    for (const auto& t : cfg_.node_types) {
      auto spare = running_kept(t.name) - t.min_workers;
      std::vector<std::size_t> idle;
      for (std::size_t i = 0; i < view_.nodes.size(); ++i) {
        const auto& n = view_.nodes[i];
        if (managed(n) && n.node_type == t.name &&
            n.state == instance_state::running && !stopped_.contains(i) &&
            n.idle && view_.now - n.idle_since >= cfg_.idle_timeout &&
            !needed_[i])
          idle.push_back(i);
      }
      std::sort(idle.begin(), idle.end(), [&](auto a, auto b) {
        return std::make_tuple(view_.nodes[a].idle_since,
                               view_.nodes[a].instance_id) <
               std::make_tuple(view_.nodes[b].idle_since,
                               view_.nodes[b].instance_id);
      });
      for (std::size_t k = 0; k < idle.size() && spare > 0; ++k, --spare)
        stop(idle[k], "idle for " +
                          std::to_string(cfg_.idle_timeout.count() / 1000) +
                          " s or more");
    }
  }

  void index_needed() {
    needed_.assign(view_.nodes.size(), false);
    for (const auto& b : bins_)
      if (b.node >= 0 && b.needed)
        needed_[static_cast<std::size_t>(b.node)] = true;
  }

  const autoscaler_config& cfg_;
  const scaling_view& view_;
  scaling_plan plan_;
  std::map<std::string, int> active_;
  int total_ = 0;
  int pending_ = 0;
  std::set<std::size_t> stopped_;
  std::vector<bin> bins_;
  std::vector<bool> needed_;
};

} // namespace

bool fits_some_type(const autoscaler_config& cfg, const resource_map& shape) {
  resource_set need{shape};
  for (const auto& t : cfg.node_types)
    if (copies_that_fit(resource_set{t.resources}, need) > 0)
      return true;
  return false;
}

std::optional<std::string>
pick_node_type(const autoscaler_config& cfg, const resource_map& shape,
               int copies, const std::set<std::string>& can_launch) {
  resource_set need{shape};
  std::optional<std::string> best;
  double best_share = -1;
  int best_copies = 0;
  for (const auto& t : cfg.node_types) {
    if (!can_launch.contains(t.name))
      continue;
    resource_set total{t.resources};
    auto fit = std::min(copies, copies_that_fit(total, need));
    if (fit <= 0)
      continue;
    // The mean share of each of the type's resources the copies use: a
    // type with resources the shape does not use (a GPU) scores lower.
    double share = 0;
    int kinds = 0;
    for (const auto& [name, units] : total.amounts()) {
      if (units <= 0)
        continue;
      ++kinds;
      share += static_cast<double>(need.units(name)) * fit /
               static_cast<double>(units);
    }
    share = kinds > 0 ? share / kinds : 0;
    constexpr double same = 1e-9;
    if (share > best_share + same ||
        (share > best_share - same && fit > best_copies)) {
      best = t.name;
      best_share = share;
      best_copies = fit;
    }
  }
  return best;
}

scaling_plan plan_scaling(const autoscaler_config& cfg,
                          const scaling_view& view) {
  return planner{cfg, view}.run();
}

} // namespace prism::internal
