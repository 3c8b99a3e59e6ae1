// `prism list`, `prism get` and `prism summary`: the cluster's nodes, jobs,
// actors and tasks as the control store knows them, its workers and objects
// as each node does, filtered before they are limited.

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "head_connection.hpp"
#include "printing.hpp"
#include "prism/detail/runtime.hpp"
#include "prism/error.hpp"
#include "prism/internal/state_query.hpp"
#include "protocol/state.hpp"

namespace prism::tools {

namespace {

using json = nlohmann::ordered_json;
using field_list = std::vector<std::pair<std::string, std::string>>;

const std::vector<std::string> kind_names = {"nodes", "jobs",    "actors",
                                             "tasks", "workers", "objects"};

state::kind kind_of(const std::string& name) {
  if (auto k = state::kind_named(name))
    return *k;
  throw invalid_argument_error("no such kind '" + name +
                               "'; give nodes, jobs, actors, tasks, "
                               "workers or objects");
}

/// The keys a table shows without --detail.
std::vector<std::string> table_keys(state::kind k) {
  switch (k) {
  case state::kind::nodes:
    return {"node_id", "state", "address", "resources", "actors"};
  case state::kind::jobs:
    return {"job_id", "state", "namespace", "start_time", "program"};
  case state::kind::actors:
    return {"actor_id", "class_name", "state", "name",
            "job_id",   "node_id",    "pid",   "restarts"};
  case state::kind::tasks:
    return {"task_id", "name", "state",       "type", "attempt",
            "node_id", "pid",  "duration_ms", "error"};
  case state::kind::workers:
    return {"worker_id", "state",  "type",      "node_id",
            "pid",       "job_id", "start_time"};
  case state::kind::objects:
    break;
  }
  return {"object_id", "node_id", "owner_id", "type", "size_bytes"};
}

std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

/// A value as JSON: a number or a flag as one (null if empty), else text.
json value_of(internal::value_type type, const std::string& v) {
  if (type == internal::value_type::text)
    return v;
  if (v.empty())
    return nullptr;
  if (type == internal::value_type::flag)
    return v == "true";
  try {
    std::size_t used = 0;
    auto n = std::stoll(v, &used);
    if (used == v.size())
      return n;
    return std::stod(v);
  } catch (const std::exception&) {
    return v;
  }
}

/// `fields` of an entry of `k` as a JSON object, in their order.
json object_of(state::kind k, const field_list& fields) {
  const auto& columns = internal::columns_of(k);
  json o = json::object();
  for (const auto& [key, v] : fields) {
    auto c = std::find_if(columns.begin(), columns.end(),
                          [&](const auto& c) { return c.key == key; });
    o[key] =
        value_of(c == columns.end() ? internal::value_type::text : c->type, v);
  }
  return o;
}

/// The options every one of these commands takes: the head and the format.
void add_common_options(CLI::App* app, std::string& address,
                        std::string& format) {
  app->add_option("--address", address,
                  "The head, HOST:PORT (default: PRISM_ADDRESS, then the "
                  "head started on this host)");
  app->add_option("--format", format, "table or json")
      ->check(CLI::IsMember({"table", "json"}));
}

// -- prism list ---------------------------------------------------------------

struct list_cli {
  std::string address;
  std::string kind;
  std::vector<std::string> filters;
  std::size_t limit = 100;
  std::string cursor;
  std::string format = "table";
  bool detail = false;
};

/// "Showing 100 of 53,572 actors matching state=ALIVE (100,000 in all)".
std::string headline(const list_cli& o, const state::page& p) {
  std::string text = "Showing " + std::to_string(p.entries.size()) + " of " +
                     std::to_string(p.matched) + " " + o.kind;
  if (!o.filters.empty()) {
    text += " matching";
    for (const auto& f : o.filters)
      text += " " + f;
  }
  text += " (" + std::to_string(p.total) + " in all)";
  // Tasks are known by their events: say when some were lost.
  if (p.dropped_events > 0 || p.forgotten_tasks > 0)
    text += "; " + std::to_string(p.dropped_events) +
            " task events dropped and " + std::to_string(p.forgotten_tasks) +
            " tasks forgotten, not counted here";
  // Workers and objects are each node's: say which nodes are missing.
  if (p.nodes_unanswered > 0)
    text += "; " + std::to_string(p.nodes_unanswered) +
            " nodes did not answer in time, their " + o.kind +
            " not counted here";
  return text;
}

int list_command(const list_cli& o) {
  auto k = kind_of(o.kind);
  for (const auto& f : o.filters)
    internal::parse_filter(k, f);
  head_connection head{o.address, "list"};
  auto reply = head.ask<protocol::state_page>(
      protocol::list_state{k, o.filters, o.limit, o.cursor},
      "listing the " + o.kind);
  check(reply);
  const auto& p = reply.page;
  if (o.format == "json") {
    json out = {{"kind", state::to_string(k)},  {"shown", p.entries.size()},
                {"matched", p.matched},         {"total", p.total},
                {"next_cursor", p.next_cursor}, {"entries", json::array()}};
    if (k == state::kind::tasks) {
      out["dropped_events"] = p.dropped_events;
      out["forgotten_tasks"] = p.forgotten_tasks;
    }
    if (k == state::kind::workers || k == state::kind::objects)
      out["nodes_unanswered"] = p.nodes_unanswered;
    for (const auto& e : p.entries)
      out["entries"].push_back(object_of(k, e.fields));
    std::cout << out.dump(2) << std::endl;
    return 0;
  }
  auto keys = o.detail ? state::keys_of(k) : table_keys(k);
  std::vector<std::vector<std::string>> rows;
  for (const auto& e : p.entries) {
    rows.emplace_back();
    for (const auto& key : keys)
      rows.back().push_back(one_line(e[key]));
  }
  std::cout << headline(o, p) << "\n";
  if (!rows.empty())
    print_table(std::cout, keys, rows);
  if (!p.next_cursor.empty())
    std::cout << "More: --cursor " << p.next_cursor << "\n";
  std::cout << std::flush;
  return 0;
}

void add_list(CLI::App& app, command_list& commands) {
  auto o = std::make_shared<list_cli>();
  auto* list = app.add_subcommand(
      "list", "List the cluster's nodes, jobs, actors, tasks, workers or "
              "objects: filtered, then limited, in order of id");
  list->add_option("kind", o->kind,
                   "nodes, jobs, actors, tasks, workers or objects")
      ->required()
      ->check(CLI::IsMember(kind_names));
  add_common_options(list, o->address, o->format);
  list->add_option("-f,--filter", o->filters,
                   "key=value, key!=value or key~=part (anywhere in the "
                   "value, any case); repeat for several, all of which "
                   "must hold")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  list->add_option("--limit", o->limit,
                   "At most N entries, after filtering (0: all)");
  list->add_option("--cursor", o->cursor,
                   "Start after this entry: the cursor a page printed");
  list->add_flag("--detail", o->detail, "Show every key in the table");
  commands.push_back(
      {list,
       [o] { return guarded("list", [&] { return list_command(*o); }); }});
}

/// What `get` calls the history of an entry of `k`; nullptr for none.
const char* history_name(state::kind k) {
  switch (k) {
  case state::kind::actors:
    return "restarts_history";
  case state::kind::tasks:
    return "attempts";
  case state::kind::objects:
    return "copies";
  default:
    return nullptr;
  }
}

// -- prism get ----------------------------------------------------------------

struct get_cli {
  std::string address;
  std::string kind;
  std::string id;
  std::string format = "table";
};

int get_command(const get_cli& o) {
  auto k = kind_of(o.kind);
  head_connection head{o.address, "get"};
  auto reply = head.ask<protocol::state_found>(
      protocol::get_state{k, o.id}, "getting " + o.kind + " " + o.id);
  check(reply);
  if (!reply.found) {
    std::cerr << "prism get: no " << o.kind << " '" << o.id << "'" << std::endl;
    return 1;
  }
  const auto& e = reply.entry;
  if (o.format == "json") {
    auto out = object_of(k, e.fields);
    if (auto name = history_name(k)) {
      out[name] = json::array();
      for (const auto& h : e.history)
        out[name].push_back(object_of(k, h));
    }
    std::cout << out.dump(2) << std::endl;
    return 0;
  }
  std::size_t width = 0;
  for (const auto& [key, v] : e.fields)
    width = std::max(width, key.size());
  for (const auto& [key, v] : e.fields)
    std::cout << key << ":" << std::string(width - key.size() + 1, ' ') << v
              << "\n";
  if (auto name = history_name(k)) {
    std::cout << name << ":";
    if (e.history.empty())
      std::cout << " none";
    std::cout << "\n";
    for (const auto& h : e.history) {
      std::cout << "  -";
      for (const auto& [key, v] : h)
        std::cout << " " << key << "="
                  << (key == "cause" || key == "error" ? "\"" + v + "\"" : v);
      std::cout << "\n";
    }
  }
  std::cout << std::flush;
  return 0;
}

void add_get(CLI::App& app, command_list& commands) {
  auto o = std::make_shared<get_cli>();
  auto* get = app.add_subcommand(
      "get", "Print one node, job, actor, task, worker or object in full: "
             "an actor with its restarts and their causes, a task with its "
             "attempts, an object with its copies");
  get->add_option("kind", o->kind, "node, job, actor, task, worker or object")
      ->required()
      ->check(CLI::IsMember({"node", "job", "actor", "task", "worker", "object",
                             "nodes", "jobs", "actors", "tasks", "workers",
                             "objects"}));
  get->add_option("id", o->id,
                  "Its id (a job's number); a unique prefix of 4 or more "
                  "characters will do")
      ->required();
  add_common_options(get, o->address, o->format);
  commands.push_back(
      {get, [o] { return guarded("get", [&] { return get_command(*o); }); }});
}

// -- prism summary ------------------------------------------------------------

struct summary_cli {
  std::string address;
  std::string kind;
  std::string by;
  std::string format = "table";
};

int summary_command(const summary_cli& o) {
  auto k = kind_of(o.kind);
  auto by = !o.by.empty()              ? o.by
            : k == state::kind::tasks  ? std::string{"name"}
            : k == state::kind::actors ? std::string{"class_name"}
                                       : std::string{"node_id"};
  internal::column_index(k, by);
  head_connection head{o.address, "summary"};
  auto reply = head.ask<protocol::state_counts>(
      protocol::summarize_state{k, by}, "summarizing the " + o.kind);
  check(reply);
  std::uint64_t all = 0;
  std::set<std::string> states;
  std::map<std::string, std::map<std::string, std::uint64_t>> by_group;
  for (const auto& c : reply.counts) {
    all += c.n;
    states.insert(c.state);
    by_group[c.group][c.state] += c.n;
  }
  if (o.format == "json") {
    json out = {{"kind", state::to_string(k)},
                {"by", by},
                {"total", all},
                {"groups", json::object()}};
    for (const auto& [g, counts] : by_group)
      for (const auto& [s, n] : counts)
        out["groups"][g][s] = n;
    if (k == state::kind::workers || k == state::kind::objects)
      out["nodes_unanswered"] = reply.nodes_unanswered;
    std::cout << out.dump(2) << std::endl;
    return 0;
  }
  std::cout << all << " " << o.kind << " by " << by << " and "
            << (k == state::kind::objects ? "type" : "state") << "\n";
  if (reply.nodes_unanswered > 0)
    std::cout << reply.nodes_unanswered
              << " nodes did not answer in time; their " << o.kind
              << " are not counted\n";
  if (by_group.empty()) {
    std::cout << std::flush;
    return 0;
  }
  std::vector<std::string> keys{by};
  keys.insert(keys.end(), states.begin(), states.end());
  keys.push_back("total");
  std::vector<std::vector<std::string>> rows;
  for (const auto& [g, counts] : by_group) {
    std::vector<std::string> row{g.empty() ? "(none)" : g};
    std::uint64_t sum = 0;
    for (const auto& s : states) {
      auto i = counts.find(s);
      auto n = i == counts.end() ? 0 : i->second;
      sum += n;
      row.push_back(std::to_string(n));
    }
    row.push_back(std::to_string(sum));
    rows.push_back(std::move(row));
  }
  print_table(std::cout, keys, rows);
  std::cout << std::flush;
  return 0;
}

void add_summary(CLI::App& app, command_list& commands) {
  auto o = std::make_shared<summary_cli>();
  auto* summary = app.add_subcommand(
      "summary", "Count the cluster's actors by class, its tasks by "
                 "function, its workers or objects by node (or another key), "
                 "and state");
  summary->add_option("kind", o->kind, "actors, tasks, workers or objects")
      ->required()
      ->check(CLI::IsMember({"actors", "tasks", "workers", "objects"}));
  summary->add_option("--by", o->by,
                      "The key to group by (default: class_name for actors, "
                      "name for tasks, node_id for workers and objects)");
  add_common_options(summary, o->address, o->format);
  commands.push_back({summary, [o] {
                        return guarded("summary",
                                       [&] { return summary_command(*o); });
                      }});
}

} // namespace

void add_state_commands(CLI::App& app, command_list& commands) {
  add_list(app, commands);
  add_get(app, commands);
  add_summary(app, commands);
}

} // namespace prism::tools
