// `prism logs`: the files of the cluster's worker processes and of its
// nodes' own processes, read through the nodes that hold them (a dead
// node's through a live node on its host), once or followed.

#include <algorithm>
#include <chrono>
#include <csignal>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <thread>

#include <CLI/CLI.hpp>
#include <caf/all.hpp>

#include "commands.hpp"
#include "head_connection.hpp"
#include "prism/error.hpp"
#include "protocol/output.hpp"
#include "protocol/owner_gcs.hpp"
#include "protocol/raylet_gcs.hpp"
#include "protocol/state.hpp"

namespace prism::tools {

namespace {

constexpr auto ask_timeout = std::chrono::seconds{5};
/// How often `-f` asks again.
constexpr auto follow_interval = std::chrono::milliseconds{500};

struct logs_options {
  std::string address;
  std::string node;
  std::uint32_t job = 0;
  std::string actor;
  std::int32_t worker = 0;
  std::string component = "worker";
  bool err = false;
  std::uint32_t tail = 0;
  bool follow = false;
  std::string task;
  /// -1: the task's latest attempt.
  std::int32_t attempt = -1;
};

std::string short_id(const unique_id& id) {
  return id.hex().substr(0, 8);
}

/// The host part of a contact, "10.0.0.2:41000".
std::string host_of(const std::string& contact) {
  return contact.substr(0, contact.rfind(':'));
}

/// 32 hex digits as an actor id.
actor_id parse_actor(const std::string& text) {
  auto bad = [&] {
    return invalid_argument_error("--actor '" + text +
                                  "' is not an actor id (32 hex digits)");
  };
  if (text.size() != 32)
    throw bad();
  actor_id id;
  for (std::size_t i = 0; i < 32; ++i) {
    auto c = text[i];
    std::uint64_t v = c >= '0' && c <= '9'   ? c - '0'
                      : c >= 'a' && c <= 'f' ? c - 'a' + 10
                      : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                             : 16;
    if (v == 16)
      throw bad();
    auto& half = i < 16 ? id.hi : id.lo;
    half = (half << 4) | v;
  }
  return id;
}

/// One node's files to read, and the live node whose raylet reads them.
struct target {
  protocol::node_info node;
  caf::actor reader;
};

class logs_reader {
public:
  logs_reader(head_connection& head, logs_options o)
      : head_{head}, o_{std::move(o)} {}

  int run() {
    auto targets = choose_targets();
    if (targets.empty())
      return 1;
    bool first = true;
    for (;;) {
      std::size_t read = 0;
      for (auto& t : targets)
        read += read_node(t, first);
      first = false;
      if (!o_.follow) {
        if (read == 0 && !any_file_)
          std::cerr << "prism logs: no file matches\n";
        return failed_ ? 1 : 0;
      }
      std::cout << std::flush;
      std::this_thread::sleep_for(follow_interval);
    }
  }

private:
  std::vector<protocol::node_info> list_nodes() {
    return head_.ask<std::vector<protocol::node_info>>(
        protocol::list_nodes{}, "listing the nodes", ask_timeout);
  }

  /// The node an actor lives on; throws if it is not alive.
  node_id node_of_actor(const actor_id& actor) {
    auto where = head_.ask<protocol::actor_location>(
        protocol::locate_actor{actor}, "locating actor " + actor.hex(),
        ask_timeout);
    if (!where.alive)
      throw invalid_argument_error(
          "actor " + actor.hex() +
          " is not alive: the files of the process it ran in stay on its node "
          "(prism logs --job N --worker PID)");
    return where.node;
  }

  std::vector<target> choose_targets() {
    auto nodes = list_nodes();
    std::vector<protocol::node_info> chosen;
    if (o_.component == "head") {
      for (auto& n : nodes)
        if (n.alive && n.raylet && n.raylet.node() == head_.gcs().node())
          chosen.push_back(n);
      o_.component = "node";
    } else if (!o_.actor.empty()) {
      auto where = node_of_actor(parse_actor(o_.actor));
      for (auto& n : nodes)
        if (n.node == where)
          chosen.push_back(n);
    } else if (!o_.node.empty()) {
      for (auto& n : nodes)
        if (n.node.hex().rfind(o_.node, 0) == 0)
          chosen.push_back(n);
      if (chosen.empty())
        throw invalid_argument_error("no node '" + o_.node +
                                     "' (prism status lists them)");
      if (chosen.size() > 1)
        throw invalid_argument_error("--node '" + o_.node +
                                     "' names more than one node: give more "
                                     "of its id");
    } else {
      chosen = nodes;
    }
    std::vector<target> targets;
    for (auto& n : chosen) {
      if (n.alive) {
        targets.push_back({n, n.raylet});
        continue;
      }
      if (o_.component == "node" || o_.node.empty())
        continue; // A dead node's own log is asked for by its id only.
      // A live node on the dead one's host reads its files, if they share
      // the session directory.
      auto host = host_of(n.contact);
      auto live = std::find_if(nodes.begin(), nodes.end(), [&](auto& m) {
        return m.alive && host_of(m.contact) == host;
      });
      if (live == nodes.end()) {
        std::cerr << "prism logs: node " << short_id(n.node)
                  << " is dead and no live node runs on its host " << host
                  << ": its files stay in the session directory there\n";
        failed_ = true;
        continue;
      }
      targets.push_back({n, live->raylet});
    }
    if (targets.empty() && !failed_)
      std::cerr << "prism logs: no node to read from\n";
    return targets;
  }

  /// Reads what is new in `t`'s files; returns the bytes printed.
  std::size_t read_node(target& t, bool first) {
    std::size_t printed = 0;
    for (;;) {
      protocol::read_logs msg;
      msg.of = t.reader == t.node.raylet ? node_id{} : t.node.node;
      msg.component = o_.component;
      msg.job = job_id{o_.job};
      msg.pid = o_.worker;
      if (!o_.actor.empty())
        msg.actor = parse_actor(o_.actor);
      msg.err = o_.err;
      msg.tail = first ? o_.tail : 0;
      auto& offsets = offsets_[t.node.node];
      msg.offsets = offsets;
      protocol::log_pieces answer;
      std::string failure;
      caf::scoped_actor self{head_.system()};
      self->request(t.reader, ask_timeout, msg)
          .receive(
              [&](protocol::log_pieces& p) { answer = std::move(p); },
              [&](caf::error& err) { failure = head_.system().render(err); });
      if (!failure.empty() || !answer.error.empty()) {
        if (!reported_.count(t.node.node)) {
          std::cerr << "prism logs: node " << short_id(t.node.node) << ": "
                    << (failure.empty() ? answer.error
                                        : "does not answer: " + failure)
                    << "\n";
          reported_.insert(t.node.node);
        }
        failed_ = true;
        return printed;
      }
      bool more = false;
      for (auto& p : answer.pieces) {
        any_file_ = true;
        if (!p.bytes.empty()) {
          print_header(t, p.file);
          std::cout << p.bytes;
          printed += p.bytes.size();
        }
        offsets[p.file] = p.offset + p.bytes.size();
        more = more || p.offset + p.bytes.size() < p.size;
      }
      // A later piece of a file read in part is asked for at once.
      if (!more)
        return printed;
      first = false;
    }
  }

  /// "==> node 5be0c2a7 worker-1-4123.out <==" before a file's bytes, unless
  /// the bytes before were that file's too.
  void print_header(const target& t, const std::string& file) {
    auto key = short_id(t.node.node) + " " + file;
    if (key == last_file_)
      return;
    if (!last_file_.empty())
      std::cout << "\n";
    std::cout << "==> node " << key << " <==\n";
    last_file_ = key;
  }

  head_connection& head_;
  logs_options o_;
  std::map<node_id, std::map<std::string, std::uint64_t>> offsets_;
  std::set<node_id> reported_;
  std::string last_file_;
  bool any_file_ = false;
  bool failed_ = false;
};

/// The value of `key` among `fields`; empty if none.
std::string
field_of(const std::vector<std::pair<std::string, std::string>>& fields,
         const std::string& key) {
  for (const auto& [k, v] : fields)
    if (k == key)
      return v;
  return {};
}

/// Narrows `o` to the worker process that ran attempt `o.attempt` (or the
/// latest) of task `o.task`, as its events tell.
void choose_task_worker(head_connection& head, logs_options& o) {
  auto found = head.ask<protocol::state_found>(
      protocol::get_state{state::kind::tasks, o.task},
      "looking up task " + o.task);
  if (found.error.code != errc::ok)
    detail::throw_error(found.error);
  if (!found.found)
    throw invalid_argument_error("no task '" + o.task +
                                 "' (prism list tasks lists them)");
  const auto& attempts = found.entry.history;
  auto chosen = attempts.empty() ? nullptr : &attempts.back();
  if (o.attempt >= 0) {
    chosen = nullptr;
    for (const auto& a : attempts)
      if (field_of(a, "attempt") == std::to_string(o.attempt))
        chosen = &a;
    if (chosen == nullptr)
      throw invalid_argument_error("task " + o.task + " has no attempt " +
                                   std::to_string(o.attempt));
  }
  if (chosen == nullptr || field_of(*chosen, "pid").empty())
    throw invalid_argument_error("task " + o.task +
                                 " has not run on a worker yet (" +
                                 found.entry["state"] + ")");
  o.worker = std::stoi(field_of(*chosen, "pid"));
  o.node = field_of(*chosen, "node_id");
  o.job = static_cast<std::uint32_t>(std::stoul(found.entry["job_id"]));
}

int logs_command(logs_options o) {
  try {
    if (o.component != "worker" && o.component != "node" &&
        o.component != "head")
      throw invalid_argument_error(
          "--component is worker, node or head, not '" + o.component + "'");
    head_connection head{o.address, "logs"};
    if (!o.task.empty())
      choose_task_worker(head, o);
    return logs_reader{head, o}.run();
  } catch (const std::exception& e) {
    std::cerr << "prism logs: " << e.what() << std::endl;
    return 1;
  }
}

} // namespace

void add_logs_command(CLI::App& app, command_list& commands) {
  auto o = std::make_shared<logs_options>();
  auto* logs = app.add_subcommand(
      "logs", "Print the output files of worker processes, or a node's log, "
              "from whichever node holds them");
  logs->add_option("--address", o->address,
                   "The head, HOST:PORT (default: PRISM_ADDRESS, then the "
                   "head started on this host)");
  logs->add_option("--node", o->node,
                   "Only this node's files (its id, or the start of it); a "
                   "dead node's are read by a live node on its host");
  logs->add_option("--job", o->job, "Only this job's worker processes");
  logs->add_option("--actor", o->actor,
                   "Only the process of this live actor (its 32-digit id)");
  logs->add_option("--worker", o->worker,
                   "Only the worker process of this pid");
  logs->add_option("--task", o->task,
                   "Only the worker process that ran this task (its id, or "
                   "a unique start of it), as its events tell");
  logs->add_option("--attempt", o->attempt,
                   "With --task: that attempt (0 is the first) instead of "
                   "the latest");
  logs->add_option("--component", o->component,
                   "worker (the worker processes' output, the default), node "
                   "(each node's own log) or head (the head's log)")
      ->capture_default_str();
  logs->add_flag("--err", o->err,
                 "The stderr files instead of the stdout files");
  logs->add_option("--tail", o->tail, "Only the last N lines of each file");
  logs->add_flag("-f,--follow", o->follow,
                 "Keep printing what the files gain, until interrupted");
  commands.push_back({logs, [o] { return logs_command(*o); }});
}

} // namespace prism::tools
