#include "prism/internal/user_metrics.hpp"

#include <algorithm>
#include <cctype>

#include "prism/error.hpp"
#include "prism/internal/task_events.hpp"

namespace prism::metrics::detail {

using internal::user_metric_kind;

/// One declared metric and its series.
struct metric_def {
  user_metric_kind kind = user_metric_kind::counter;
  std::string name;
  std::string description;
  std::vector<std::string> tag_keys;
  std::vector<double> boundaries;

  struct state {
    double value = 0;
    std::int64_t set_us = 0;
    internal::histogram buckets;
    bool dirty = false;
  };

  std::mutex mu;
  std::map<std::vector<std::string>, state> series GUARDED_BY(mu);
  std::uint64_t dropped GUARDED_BY(mu) = 0;

  /// The values of `t` in the order of the keys. Throws
  /// `invalid_argument_error` for a key the metric does not have.
  std::vector<std::string> values_of(const tags& t) const {
    std::vector<std::string> values(tag_keys.size());
    for (const auto& [key, value] : t) {
      auto i = std::find(tag_keys.begin(), tag_keys.end(), key);
      if (i == tag_keys.end())
        throw invalid_argument_error("metric " + name + " has no tag key '" +
                                     key + "'");
      values[static_cast<std::size_t>(i - tag_keys.begin())] = value;
    }
    return values;
  }

  /// The series of `values`, made if the metric has room; nullptr (and
  /// counted) if it has not.
  state* series_of(const std::vector<std::string>& values)
      EXCLUSIVE_LOCKS_REQUIRED(mu) {
    auto i = series.find(values);
    if (i != series.end())
      return &i->second;
    if (series.size() >= internal::max_series_per_metric) {
      ++dropped;
      return nullptr;
    }
    auto& s = series[values];
    if (kind == user_metric_kind::histogram)
      s.buckets = internal::histogram{boundaries};
    return &s;
  }

  /// Applies `f(state&)` to the series of `t`, and marks it changed.
  template <class F>
  void update(const tags& t, F&& f) {
    auto values = values_of(t);
    std::lock_guard<std::mutex> guard{mu};
    if (auto* s = series_of(values)) {
      f(*s);
      s->dirty = true;
    }
  }
};

} // namespace prism::metrics::detail

namespace prism::metrics {

using detail::metric_def;
using internal::user_metric_kind;

namespace {

auto& registry() {
  return internal::user_metric_registry::global();
}

} // namespace

counter::counter(std::string name, std::string description,
                 std::vector<std::string> tag_keys)
    : def_(registry().define(user_metric_kind::counter, std::move(name),
                             std::move(description), std::move(tag_keys), {})) {
}

void counter::inc(double amount, const tags& t) {
  if (!(amount >= 0))
    throw invalid_argument_error("counter " + def_->name +
                                 " only goes up: cannot add " +
                                 std::to_string(amount));
  def_->update(t, [&](metric_def::state& s) { s.value += amount; });
}

gauge::gauge(std::string name, std::string description,
             std::vector<std::string> tag_keys)
    : def_(registry().define(user_metric_kind::gauge, std::move(name),
                             std::move(description), std::move(tag_keys), {})) {
}

void gauge::set(double value, const tags& t) {
  auto now = internal::unix_us_now();
  def_->update(t, [&](metric_def::state& s) {
    s.value = value;
    s.set_us = now;
  });
}

histogram::histogram(std::string name, std::string description,
                     std::vector<double> boundaries,
                     std::vector<std::string> tag_keys)
    : def_(registry().define(user_metric_kind::histogram, std::move(name),
                             std::move(description), std::move(tag_keys),
                             std::move(boundaries))) {}

void histogram::observe(double value, const tags& t) {
  def_->update(t, [&](metric_def::state& s) { s.buckets.observe(value); });
}

} // namespace prism::metrics

namespace prism::internal {

namespace {

bool name_char(char c, bool first, bool colon) {
  auto u = static_cast<unsigned char>(c);
  return std::isalpha(u) || c == '_' || (colon && c == ':') ||
         (!first && std::isdigit(u));
}

/// Whether `text` is a name Prometheus takes: a metric's (colons allowed)
/// or a label's.
bool valid_name(const std::string& text, bool colon) {
  if (text.empty())
    return false;
  for (std::size_t i = 0; i < text.size(); ++i)
    if (!name_char(text[i], i == 0, colon) ||
        !std::isprint(static_cast<unsigned char>(text[i])))
      return false;
  return true;
}

/// Why a metric of `kind` named `name` with `tag_keys` and `boundaries`
/// cannot be; empty if it can.
std::string fault_of(user_metric_kind kind, const std::string& name,
                     const std::vector<std::string>& tag_keys,
                     const std::vector<double>& boundaries);

void check_definition(user_metric_kind kind, const std::string& name,
                      const std::vector<std::string>& tag_keys,
                      const std::vector<double>& boundaries) {
  auto why = fault_of(kind, name, tag_keys, boundaries);
  if (!why.empty())
    throw invalid_argument_error("metric '" + name + "': " + why);
}

std::string fault_of(user_metric_kind kind, const std::string& name,
                     const std::vector<std::string>& tag_keys,
                     const std::vector<double>& boundaries) {
  if (!valid_name(name, true))
    return "a metric's name matches [a-zA-Z_:][a-zA-Z0-9_:]*";
  if (name.rfind("prism_", 0) == 0)
    return "names that start with prism_ are Prism's own";
  for (std::size_t i = 0; i < tag_keys.size(); ++i) {
    if (!valid_name(tag_keys[i], false) || tag_keys[i].rfind("__", 0) == 0)
      return "tag key '" + tag_keys[i] +
             "': a key matches [a-zA-Z_][a-zA-Z0-9_]* and does not start "
             "with __";
    if (tag_keys[i] == "node" || tag_keys[i] == "le")
      return "tag key '" + tag_keys[i] + "' is Prism's own";
    for (std::size_t j = 0; j < i; ++j)
      if (tag_keys[j] == tag_keys[i])
        return "tag key '" + tag_keys[i] + "' is given twice";
  }
  if (kind == user_metric_kind::histogram) {
    if (boundaries.empty())
      return "a histogram needs at least one bucket boundary";
    for (std::size_t i = 1; i < boundaries.size(); ++i)
      if (!(boundaries[i - 1] < boundaries[i]))
        return "bucket boundaries must ascend";
  }
  return {};
}

/// Whether a shipped series may be served: a definition `fault_of` takes.
bool servable(const user_series& s) {
  std::vector<std::string> keys;
  for (const auto& [k, v] : s.tags)
    keys.push_back(k);
  auto bounds = s.kind == user_metric_kind::histogram ? s.buckets.bounds
                                                      : std::vector<double>{};
  return fault_of(s.kind, s.name, keys, bounds).empty() &&
         (s.kind != user_metric_kind::histogram ||
          s.buckets.counts.size() == s.buckets.bounds.size() + 1);
}

} // namespace

const char* to_string(user_metric_kind k) noexcept {
  switch (k) {
  case user_metric_kind::counter:
    return "counter";
  case user_metric_kind::gauge:
    return "gauge";
  case user_metric_kind::histogram:
    return "histogram";
  }
  return "counter";
}

user_metric_registry& user_metric_registry::global() {
  // Never destroyed: metrics of static objects may be updated while the
  // process exits.
  static auto* registry = new user_metric_registry;
  return *registry;
}

std::shared_ptr<metrics::detail::metric_def> user_metric_registry::define(
    user_metric_kind kind, std::string name, std::string description,
    std::vector<std::string> tag_keys, std::vector<double> boundaries) {
  check_definition(kind, name, tag_keys, boundaries);
  std::lock_guard<std::mutex> guard{mu_};
  auto i = defs_.find(name);
  if (i != defs_.end()) {
    const auto& d = *i->second;
    if (d.kind != kind || d.description != description ||
        d.tag_keys != tag_keys || d.boundaries != boundaries)
      throw invalid_argument_error(
          "metric '" + name + "' is declared already, as a " +
          to_string(d.kind) +
          " with other settings: a name means one metric in a process");
    return i->second;
  }
  auto d = std::make_shared<metrics::detail::metric_def>();
  d->kind = kind;
  d->name = name;
  d->description = std::move(description);
  d->tag_keys = std::move(tag_keys);
  d->boundaries = std::move(boundaries);
  defs_.emplace(std::move(name), d);
  return d;
}

std::vector<user_series> user_metric_registry::take_changed() {
  std::vector<std::shared_ptr<metrics::detail::metric_def>> defs;
  {
    std::lock_guard<std::mutex> guard{mu_};
    for (const auto& [name, d] : defs_)
      defs.push_back(d);
  }
  std::vector<user_series> result;
  for (const auto& d : defs) {
    std::lock_guard<std::mutex> guard{d->mu};
    for (auto& [values, s] : d->series) {
      if (!s.dirty)
        continue;
      s.dirty = false;
      user_series out;
      out.name = d->name;
      out.kind = d->kind;
      out.description = d->description;
      for (std::size_t i = 0; i < values.size(); ++i)
        out.tags.emplace_back(d->tag_keys[i], values[i]);
      out.value = s.value;
      out.set_us = s.set_us;
      out.buckets = s.buckets;
      result.push_back(std::move(out));
    }
  }
  return result;
}

std::uint64_t user_metric_registry::dropped() const {
  std::lock_guard<std::mutex> guard{mu_};
  std::uint64_t n = 0;
  for (const auto& [name, d] : defs_) {
    std::lock_guard<std::mutex> inner{d->mu};
    n += d->dropped;
  }
  return n;
}

// -- a node's table
// -------------------------------------------------------------

namespace {

/// Adds `x`'s counts to `total`.
void add_to(user_series& total, const user_series& x) {
  total.value += x.value;
  if (total.buckets.counts.empty())
    total.buckets = histogram{x.buckets.bounds};
  total.buckets.merge(x.buckets);
}

/// `x` without its counts.
user_series emptied(const user_series& x) {
  auto result = x;
  result.value = 0;
  result.buckets = histogram{x.buckets.bounds};
  return result;
}

} // namespace

void user_metric_table::apply(const std::string& from,
                              const std::vector<user_series>& series) {
  for (const auto& s : series) {
    if (!servable(s)) {
      ++dropped_;
      continue;
    }
    auto [m, made] = metrics_.try_emplace(s.name);
    if (made)
      m->second.kind = s.kind;
    if (m->second.kind != s.kind) {
      ++dropped_;
      continue;
    }
    auto& by_tags = m->second.series;
    auto entry = by_tags.find(s.tags);
    if (entry == by_tags.end()) {
      if (by_tags.size() >= max_series_per_metric) {
        ++dropped_;
        continue;
      }
      entry = by_tags.emplace(s.tags, series_entry{}).first;
    }
    entry->second.live[from] = s;
  }
}

void user_metric_table::retire(const std::string& from) {
  for (auto& [name, m] : metrics_)
    for (auto& [tags, e] : m.series) {
      auto i = e.live.find(from);
      if (i == e.live.end())
        continue;
      if (m.kind == user_metric_kind::gauge) {
        if (!e.has_settled || i->second.set_us >= e.settled.set_us)
          e.settled = i->second;
      } else {
        if (!e.has_settled)
          e.settled = emptied(i->second);
        add_to(e.settled, i->second);
      }
      e.has_settled = true;
      e.live.erase(i);
    }
}

void user_metric_table::retire_all_but(const std::set<std::string>& alive) {
  std::set<std::string> ended;
  for (const auto& [name, m] : metrics_)
    for (const auto& [tags, e] : m.series)
      for (const auto& [from, s] : e.live)
        if (alive.count(from) == 0)
          ended.insert(from);
  for (const auto& from : ended)
    retire(from);
}

std::vector<user_series> user_metric_table::merged() const {
  std::vector<user_series> result;
  for (const auto& [name, m] : metrics_)
    for (const auto& [tags, e] : m.series) {
      const user_series* any =
          e.has_settled ? &e.settled
                        : (e.live.empty() ? nullptr : &e.live.begin()->second);
      if (any == nullptr)
        continue;
      if (m.kind == user_metric_kind::gauge) {
        const user_series* latest = any;
        for (const auto& [from, s] : e.live)
          if (s.set_us > latest->set_us)
            latest = &s;
        result.push_back(*latest);
        continue;
      }
      auto total = e.has_settled ? e.settled : emptied(*any);
      for (const auto& [from, s] : e.live)
        add_to(total, s);
      result.push_back(std::move(total));
    }
  return result;
}

} // namespace prism::internal
