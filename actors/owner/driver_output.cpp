#include "owner/driver_output.hpp"

#include <chrono>
#include <cstdlib>
#include <string>

#include <unistd.h>

#include <caf/all.hpp>

#include "common/default_handlers.hpp"
#include "common/log.hpp"
#include "prism/internal/output_dedup.hpp"
#include "protocol/gcs_restart.hpp"
#include "protocol/output.hpp"

namespace prism::actors {

namespace {

/// The driver prints the repeats whose window closed.
using close_atom = caf::atom_constant<caf::atom("close")>;

struct driver_output_state {
  static inline const char* name = "driver_output";
  driver_output_config cfg;
  std::shared_ptr<spdlog::logger> log;
  internal::output_dedup dedup;
  /// A `close_atom` is on its way.
  bool close_scheduled = false;
};

using driver_output_actor = caf::stateful_actor<driver_output_state>;

bool variable_off(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && std::string{v} == "0";
}

/// "(square pid=4123 node=5be0c2a7)"
std::string prefix_of(const protocol::output_line& line, const node_id& node) {
  std::string p = "(";
  if (!line.source.empty())
    p += line.source + " ";
  p += "pid=" + std::to_string(line.pid) + " node=" + node.hex().substr(0, 8) +
       ")";
  return p;
}

/// The prefix as printed: in a colour of its process's, on a terminal.
std::string shown(const driver_output_state& st, const std::string& prefix,
                  std::int32_t pid) {
  if (!st.cfg.colour)
    return prefix;
  static constexpr const char* colours[] = {"36", "32", "33", "35", "34", "96"};
  auto c = colours[static_cast<std::uint32_t>(pid) % std::size(colours)];
  return std::string{"\x1b["} + c + "m" + prefix + "\x1b[0m";
}

void print(std::FILE* to, const std::string& line) {
  std::fwrite(line.data(), 1, line.size(), to);
}

/// Prints the repeats of texts whose window closed.
void print_repeats(driver_output_actor* self,
                   std::vector<internal::output_dedup::repeated> repeats) {
  auto& st = self->state;
  for (auto& r : repeats) {
    // The text's first character says its stream (see `take`); the tag is
    // the prefix, and the pid after it its colour.
    bool err = r.text[0] == 'E';
    auto pid_at = r.tag.find("pid=");
    auto pid =
        pid_at == std::string::npos ? 0 : std::atoi(r.tag.c_str() + pid_at + 4);
    print(err ? st.cfg.err : st.cfg.out,
          shown(st, r.tag, pid) + " " + r.text.substr(1) + " [repeated " +
              std::to_string(r.count) + "x across cluster]\n");
  }
  std::fflush(st.cfg.out);
  std::fflush(st.cfg.err);
}

void schedule_close(driver_output_actor* self) {
  auto& st = self->state;
  auto next = st.dedup.next_close();
  if (st.close_scheduled || !next)
    return;
  st.close_scheduled = true;
  auto wait = std::max(std::chrono::steady_clock::duration::zero(),
                       *next - std::chrono::steady_clock::now());
  self->delayed_send(
      self,
      std::chrono::duration_cast<std::chrono::milliseconds>(wait) +
          std::chrono::milliseconds{1},
      close_atom::value);
}

bool take(driver_output_actor* self, const protocol::output_lines& msg) {
  auto& st = self->state;
  auto now = std::chrono::steady_clock::now();
  for (auto& line : msg.lines) {
    auto prefix = prefix_of(line, msg.node);
    if (st.cfg.dedup && !line.text.empty() &&
        !st.dedup.offer((line.err ? "E" : "O") + line.text, prefix, now))
      continue;
    print(line.err ? st.cfg.err : st.cfg.out,
          shown(st, prefix, line.pid) + " " + line.text + "\n");
  }
  if (msg.dropped > 0)
    print(st.cfg.err,
          "(prism) node " + msg.node.hex().substr(0, 8) + " dropped " +
              std::to_string(msg.dropped) + " lines of this job's output, " +
              "more than it holds while the driver takes the lines before; " +
              "its files keep them (worker-" + std::to_string(msg.job.value) +
              "-<pid>.out and .err in that node's session directory)\n");
  std::fflush(st.cfg.out);
  std::fflush(st.cfg.err);
  print_repeats(self, st.dedup.expire(now));
  schedule_close(self);
  return true;
}

void subscribe(driver_output_actor* self) {
  auto& st = self->state;
  self->send(st.cfg.gcs, protocol::subscribe_output{
                             st.cfg.job, caf::actor_cast<caf::actor>(self)});
}

caf::behavior driver_output(driver_output_actor* self,
                            driver_output_config cfg) {
  auto& st = self->state;
  st.cfg = std::move(cfg);
  st.log = component_logger("driver");
  install_default_handlers(self, st.log);
  self->set_exit_handler([self](caf::exit_msg& msg) {
    print_repeats(self, self->state.dedup.flush());
    self->quit(msg.reason);
  });
  self->send(st.cfg.gcs,
             protocol::watch_gcs{caf::actor_cast<caf::actor>(self)});
  return {
      [self](const protocol::output_lines& msg) { return take(self, msg); },
      [self](close_atom) {
        self->state.close_scheduled = false;
        print_repeats(
            self, self->state.dedup.expire(std::chrono::steady_clock::now()));
        schedule_close(self);
      },
      [self](const protocol::gcs_restarted&) { subscribe(self); },
      // The control store's answer to a subscription made again.
      [](bool) {},
  };
}

} // namespace

bool output_to_driver(bool configured) {
  return configured && !variable_off("PRISM_LOG_TO_DRIVER");
}

bool dedup_output(bool configured) {
  return configured && !variable_off("PRISM_DEDUP_LOGS");
}

bool output_in_colour() {
  const char* no = std::getenv("NO_COLOR");
  return ::isatty(STDOUT_FILENO) == 1 && (no == nullptr || *no == '\0');
}

caf::actor spawn_driver_output(caf::actor_system& sys,
                               driver_output_config cfg) {
  return sys.spawn<caf::detached>(driver_output, std::move(cfg));
}

} // namespace prism::actors
