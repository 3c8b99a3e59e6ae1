#include "prism/internal/task_events.hpp"

#include <chrono>
#include <ctime>

namespace prism::internal {

std::int64_t unix_us_now() noexcept {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::int64_t unix_us_coarse() noexcept {
  timespec ts{};
  if (clock_gettime(CLOCK_REALTIME_COARSE, &ts) != 0)
    return unix_us_now();
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000 + ts.tv_nsec / 1000;
}

namespace {

/// The attempt `n` of `r`, made in state `s` if it is new; attempts stay
/// in order. A new record's `latest` is its first attempt.
task_attempt& attempt_of(task_record& r, std::int32_t n, task_state s,
                         bool new_record) {
  auto& latest = r.latest;
  if (new_record || n > latest.attempt) {
    if (!new_record)
      r.earlier.push_back(std::move(latest));
    latest = task_attempt{};
    latest.attempt = n;
    latest.state = s;
    return latest;
  }
  if (n == latest.attempt)
    return latest;
  for (auto i = r.earlier.rbegin(); i != r.earlier.rend(); ++i)
    if (i->attempt == n)
      return *i;
  task_attempt a;
  a.attempt = n;
  a.state = s;
  auto at = r.earlier.begin();
  while (at != r.earlier.end() && at->attempt < n)
    ++at;
  return *r.earlier.insert(at, std::move(a));
}

/// How far along its life state `s` is. An attempt's state only moves
/// forward, whatever order its events arrive in.
int life_rank(task_state s) noexcept {
  switch (s) {
  case task_state::waiting_args:
    return 0;
  case task_state::queued:
    return 1;
  case task_state::running:
    return 2;
  case task_state::forwarded:
  case task_state::finished:
  case task_state::failed:
  case task_state::cancelled:
    return 3;
  }
  return 0;
}

/// The finalizer of MurmurHash3: every bit of `h` moves every bit of the
/// result, so the low bits index well whatever ids look like.
std::uint64_t mixed(std::uint64_t h) noexcept {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

} // namespace

task_table::task_table(std::size_t max_tasks)
    : max_tasks_(std::min<std::size_t>(max_tasks, 0xffffffffu)) {}

std::uint32_t task_table::tag_of(const task_id& id) noexcept {
  // One round of mixing: the sequence numbers of one submitter differ in
  // their low bits, which the multiply spreads before the finalizer mixes.
  auto h = mixed(id.submitter.hi ^ id.submitter.lo ^
                 (id.seq * 0x9e3779b97f4a7c15ULL));
  auto tag = static_cast<std::uint32_t>(h);
  return tag == 0 ? 1 : tag;
}

std::size_t task_table::slot_of(const task_id& id,
                                std::uint32_t tag) const noexcept {
  if (index_.empty())
    return no_pos;
  auto mask = index_.size() - 1;
  for (auto i = tag & mask;; i = (i + 1) & mask) {
    const auto& s = index_[i];
    if (s.tag == 0)
      return no_pos;
    if (s.tag == tag && at(s.pos).id == id)
      return i;
  }
}

void task_table::index(std::uint32_t tag, std::size_t pos) noexcept {
  auto mask = index_.size() - 1;
  auto i = tag & mask;
  while (index_[i].tag != 0)
    i = (i + 1) & mask;
  index_[i] = slot{tag, static_cast<std::uint32_t>(pos)};
}

void task_table::unindex(std::size_t hole) noexcept {
  // Linear probing without tombstones: each slot after the hole that
  // would still be found from its home moves into it.
  auto mask = index_.size() - 1;
  for (auto j = (hole + 1) & mask; index_[j].tag != 0; j = (j + 1) & mask) {
    auto home = index_[j].tag & mask;
    bool passes_hole =
        hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
    if (passes_hole) {
      index_[hole] = index_[j];
      hole = j;
    }
  }
  index_[hole] = slot{};
}

void task_table::grow_index() {
  auto old = std::move(index_);
  index_.assign(std::max<std::size_t>(1024, old.size() * 2), slot{});
  for (const auto& s : old)
    if (s.tag != 0)
      index(s.tag, s.pos);
}

std::size_t task_table::make_record(const task_id& id, std::uint32_t tag) {
  if (max_tasks_ == 0) {
    ++forgotten_;
    return no_pos;
  }
  std::size_t pos;
  if (size_ < max_tasks_) {
    pos = size_++;
    if ((pos >> chunk_bits) == chunks_.size())
      chunks_.push_back(std::make_unique<task_record[]>(
          std::min(chunk_size, max_tasks_ - pos)));
    if (size_ * 2 > index_.size())
      grow_index();
  } else {
    // Full: the oldest record makes room.
    pos = oldest_;
    auto& old = at(pos);
    if (auto s = slot_of(old.id, tag_of(old.id)); s != no_pos)
      unindex(s);
    old = task_record{};
    oldest_ = (oldest_ + 1) % max_tasks_;
    ++forgotten_;
  }
  index(tag, pos);
  at(pos).id = id;
  return pos;
}

void task_table::apply(const task_event& e) {
  auto tag = tag_of(e.task);
  auto slot = slot_of(e.task, tag);
  bool made = slot == no_pos;
  auto pos = made ? make_record(e.task, tag) : index_[slot].pos;
  if (pos == no_pos)
    return;
  auto& r = at(pos);
  if (!e.name.empty()) {
    r.name = batch_name_ = name_index(e.name);
    r.job = e.job;
  } else if (made && batch_name_ != no_name) {
    r.name = batch_name_;
    r.job = e.job;
  }
  if (!e.actor.nil())
    r.actor = e.actor;
  if (e.submit_us != 0 && (r.submit_us == 0 || e.submit_us < r.submit_us))
    r.submit_us = e.submit_us;
  auto& a = attempt_of(r, e.attempt, e.state, made);
  if (life_rank(e.state) >= life_rank(a.state))
    a.state = e.state;
  if (e.start_us != 0 && a.start_us == 0) {
    if (a.attempt == 0 && r.submit_us != 0 && e.start_us >= r.submit_us)
      scheduling_.observe(static_cast<double>(e.start_us - r.submit_us) / 1e6);
    if (a.end_us != 0 && a.end_us >= e.start_us)
      running_.observe(static_cast<double>(a.end_us - e.start_us) / 1e6);
  }
  if (e.start_us != 0)
    a.start_us = e.start_us;
  // Where it ran; an actor call lost with its actor's instance was there
  // without a start the owner learned.
  if (e.start_us != 0 || !e.node.nil()) {
    a.node = e.node;
    a.worker = e.worker;
    a.pid = e.pid;
  }
  if (e.end_us != 0) {
    if (a.end_us == 0 && a.start_us != 0 && e.end_us >= a.start_us)
      running_.observe(static_cast<double>(e.end_us - a.start_us) / 1e6);
    a.end_us = e.end_us;
    if (!e.error.empty() || !a.error.empty())
      a.error = e.error;
  }
  r.state = r.latest.state;
}

void task_table::apply_batch(const std::vector<task_event>& batch) {
  batch_name_ = no_name;
  // Far enough ahead for a fetch to arrive, near enough that the slots
  // stay in the cache until their events come.
  constexpr std::size_t ahead = 8;
  auto prefetch = [this](const task_id& id) {
    if (!index_.empty())
      __builtin_prefetch(&index_[tag_of(id) & (index_.size() - 1)]);
  };
  for (std::size_t i = 0; i < batch.size(); ++i) {
    if (i + ahead < batch.size()) {
      prefetch(batch[i + ahead].task);
      // Full: a new task makes room by forgetting the record that is then
      // the oldest (each event of the batch a new task at most). Its id,
      // untouched since it was written, is fetched a step earlier.
      if (size_ == max_tasks_ && size_ > 2 * ahead) {
        __builtin_prefetch(&at((oldest_ + 2 * ahead) % max_tasks_).id);
        prefetch(at((oldest_ + ahead) % max_tasks_).id);
      }
    }
    apply(batch[i]);
  }
}

const task_record* task_table::find(const task_id& id) const {
  auto slot = slot_of(id, tag_of(id));
  return slot == no_pos ? nullptr : &at(index_[slot].pos);
}

std::uint32_t task_table::name_index(const std::string& name) {
  // Tasks come in runs of one function: the last name is likely again.
  if (last_name_ < names_.size() && names_[last_name_] == name)
    return last_name_;
  auto [it, made] = name_indices_.try_emplace(
      name, static_cast<std::uint32_t>(names_.size()));
  if (made)
    names_.push_back(name);
  last_name_ = it->second;
  return it->second;
}

} // namespace prism::internal
