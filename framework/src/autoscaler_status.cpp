#include "prism/internal/reconciler.hpp"

#include <ctime>
#include <sstream>

namespace prism::internal {

namespace {

std::string clock_time(autoscaler_time t) {
  auto secs = std::chrono::floor<std::chrono::seconds>(t);
  auto raw = static_cast<std::time_t>(secs.time_since_epoch().count());
  std::tm parts{};
  ::gmtime_r(&raw, &parts);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &parts);
  return text;
}

std::string shape(const resource_map& r) {
  std::ostringstream out;
  out << '{';
  bool first = true;
  for (const auto& [name, amount] : r) {
    out << (first ? "" : ", ") << name << ": " << amount;
    first = false;
  }
  out << '}';
  return out.str();
}

void section(std::ostringstream& out, const char* title) {
  out << title << '\n' << std::string(64, '-') << '\n';
}

} // namespace

std::string format_status(const autoscaler_status& s) {
  std::ostringstream out;
  out << "======== Autoscaler status: " << clock_time(s.at)
      << " UTC ========\n";
  section(out, "Node status");
  auto list = [&](const char* title, auto count, auto detail) {
    out << title << '\n';
    bool any = false;
    for (const auto& l : s.types)
      if (auto n = count(l); n > 0) {
        out << ' ' << n << ' ' << l.node_type << detail(l) << '\n';
        any = true;
      }
    if (!any)
      out << " (no nodes)\n";
  };
  auto none = [](const auto&) { return std::string{}; };
  list(
      "Active:", [](const auto& l) { return l.busy; }, none);
  list(
      "Idle:", [](const auto& l) { return l.idle; }, none);
  list(
      "Pending:",
      [](const auto& l) { return l.queued + l.requested + l.allocated; },
      [](const auto& l) {
        return " (" + std::to_string(l.queued) + " to launch, " +
               std::to_string(l.requested) + " launching, " +
               std::to_string(l.allocated) + " joining)";
      });
  list(
      "Stopping:", [](const auto& l) { return l.stopping; }, none);
  out << "Backed off:\n";
  bool any = false;
  for (const auto& l : s.types)
    if (l.backed_off_until > s.at) {
      out << ' ' << l.node_type << " until " << clock_time(l.backed_off_until)
          << " (" << l.failures << " failures in a row)\n";
      any = true;
    }
  if (!any)
    out << " (none)\n";
  out << "Recent failures:\n";
  if (s.failures.empty())
    out << " (none)\n";
  for (const auto& f : s.failures)
    out << ' ' << clock_time(f.at) << ' '
        << (f.node_type.empty() ? "" : f.node_type + " ") << f.cause << ": "
        << f.message << '\n';
  out << '\n';
  section(out, "Demands");
  if (s.demand.empty())
    out << " (no resource demands)\n";
  for (const auto& [r, n] : s.demand)
    out << ' ' << shape(r) << ": " << n << " pending tasks or actors\n";
  if (!s.infeasible.empty()) {
    out << "Infeasible (no node type fits them):\n";
    for (const auto& [r, n] : s.infeasible)
      out << ' ' << shape(r) << ": " << n << '\n';
  }
  if (!s.waiting.empty()) {
    out << "Waiting (their node types are backed off or at a maximum):\n";
    for (const auto& [r, n] : s.waiting)
      out << ' ' << shape(r) << ": " << n << '\n';
  }
  return out.str();
}

} // namespace prism::internal
