#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace prism::internal {

/// Collapses lines that many workers of a cluster print alike (the same
/// text on the same stream). The first line of a text prints at once; the
/// same text again within `window` of it is counted instead, and once that
/// window closes the count prints once, with the tag of the last repeat
/// ("[repeated 9x across cluster]"). A text seen after its window closed
/// prints at once again.
class output_dedup {
public:
  using clock = std::chrono::steady_clock;

  /// A text that was repeated while its window was open.
  struct repeated {
    std::string text;
    /// The tag of its last repeat (who wrote it).
    std::string tag;
    std::uint64_t count = 0;

    friend bool operator==(const repeated&, const repeated&) = default;
  };

  /// Remembers at most `max_texts` texts: past it, the oldest window
  /// closes early (its count comes with the next `expire`).
  explicit output_dedup(
      std::chrono::milliseconds window = std::chrono::seconds{5},
      std::size_t max_texts = 100000);

  /// Whether a line of `text` prints now (false: it was counted as a repeat
  /// of one that did). `tag` says who wrote it.
  bool offer(std::string_view text, std::string_view tag,
             clock::time_point now);

  /// The texts whose window closed by `now` (or early) with repeats, in
  /// the order they first printed; they are forgotten, and every other text
  /// whose window closed too.
  std::vector<repeated> expire(clock::time_point now);

  /// Closes every window: what `expire` would give once all had.
  std::vector<repeated> flush();

  /// When the next window closes; nothing if no text is remembered.
  std::optional<clock::time_point> next_close() const;

private:
  struct entry {
    std::string tag;
    std::uint64_t count = 0;
  };

  void close_front(std::vector<repeated>& out);

  const std::chrono::milliseconds window_;
  const std::size_t max_texts_;
  std::unordered_map<std::string, entry> texts_;
  /// Each remembered text and when its window closes, oldest first.
  std::deque<std::pair<clock::time_point, std::string>> order_;
  /// Repeats of windows closed early, not yet given out.
  std::vector<repeated> evicted_;
};

} // namespace prism::internal
