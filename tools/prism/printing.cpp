#include "printing.hpp"

#include <algorithm>
#include <cctype>

namespace prism::tools {

void print_table(std::ostream& out, const std::vector<std::string>& keys,
                 const std::vector<std::vector<std::string>>& rows,
                 const std::string& indent) {
  std::vector<std::size_t> width;
  for (const auto& k : keys)
    width.push_back(k.size());
  for (const auto& r : rows)
    for (std::size_t i = 0; i < r.size(); ++i)
      width[i] = std::max(width[i], r[i].size());
  auto line = [&](const std::vector<std::string>& cells) {
    std::string text = indent;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      text += cells[i];
      if (i + 1 < cells.size())
        text += std::string(width[i] - cells[i].size() + 2, ' ');
    }
    out << text << "\n";
  };
  std::vector<std::string> header;
  for (const auto& k : keys) {
    std::string h = k;
    std::transform(h.begin(), h.end(), h.begin(), ::toupper);
    header.push_back(h);
  }
  line(header);
  for (const auto& r : rows)
    line(r);
}

} // namespace prism::tools
