#include "prism/internal/output_dedup.hpp"

namespace prism::internal {

output_dedup::output_dedup(std::chrono::milliseconds window,
                           std::size_t max_texts)
    : window_{window}, max_texts_{max_texts == 0 ? 1 : max_texts} {}

bool output_dedup::offer(std::string_view text, std::string_view tag,
                         clock::time_point now) {
  std::string key{text};
  if (auto i = texts_.find(key); i != texts_.end()) {
    ++i->second.count;
    i->second.tag.assign(tag);
    return false;
  }
  // Closed early, its count is printed with the next expiry.
  while (texts_.size() >= max_texts_ && !order_.empty())
    close_front(evicted_);
  texts_.emplace(key, entry{std::string{tag}, 0});
  order_.emplace_back(now + window_, std::move(key));
  return true;
}

void output_dedup::close_front(std::vector<repeated>& out) {
  auto key = std::move(order_.front().second);
  order_.pop_front();
  auto i = texts_.find(key);
  if (i == texts_.end())
    return;
  if (i->second.count > 0)
    out.push_back(
        repeated{std::move(key), std::move(i->second.tag), i->second.count});
  texts_.erase(i);
}

std::vector<output_dedup::repeated>
output_dedup::expire(clock::time_point now) {
  auto out = std::move(evicted_);
  evicted_.clear();
  while (!order_.empty() && order_.front().first <= now)
    close_front(out);
  return out;
}

std::vector<output_dedup::repeated> output_dedup::flush() {
  auto out = std::move(evicted_);
  evicted_.clear();
  while (!order_.empty())
    close_front(out);
  return out;
}

std::optional<output_dedup::clock::time_point>
output_dedup::next_close() const {
  if (order_.empty())
    return std::nullopt;
  return order_.front().first;
}

} // namespace prism::internal
