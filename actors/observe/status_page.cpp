#include "observe/status_page.hpp"

#include <algorithm>
#include <cstdlib>
#include <future>
#include <memory>
#include <mutex>
#include <optional>

#include <caf/all.hpp>
#include <nlohmann/json.hpp>

#include "observe/asking.hpp"
#include "observe/cluster_status.hpp"
#include "observe/status_history.hpp"
#include "prism/error.hpp"
#include "protocol/kv.hpp"
#include "protocol/metrics.hpp"
#include "protocol/output.hpp"
#include "protocol/state.hpp"
#include "protocol/submitted_jobs.hpp"
#include "protocol/timeline.hpp"
#include "supervisor/supervisor.hpp"

namespace prism::actors {

namespace {

using nlohmann::json;

/// Rows of an actors page at most; the page asks for 100.
constexpr std::uint64_t max_page_rows = 500;
/// Failed tasks and dead actors read for "recent failures", and shown.
constexpr std::uint64_t failures_read = 2000;
constexpr std::size_t failures_shown = 20;
/// A piece of a driver's output; the page asks again for more.
constexpr std::uint64_t output_piece_bytes = 64 * 1024;
/// Lines of each worker file, and bytes of all files, in one answer.
constexpr std::uint32_t worker_tail_lines = 200;
constexpr std::size_t worker_log_bytes = 512 * 1024;
/// Supervision trees in one answer.
constexpr std::size_t max_trees = 200;

http_reply json_reply(const json& body) {
  http_reply r;
  r.content_type = "application/json";
  // `replace`: a worker's output is bytes; the page shows it as text.
  r.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

http_reply error_reply(unsigned status, const std::string& why) {
  auto r = json_reply(json{{"error", why}});
  r.status = status;
  return r;
}

/// The answer, or a 503 naming what did not answer.
template <class Answer, class Question>
Answer ask_or_throw(const status_page_sources& s, const Question& q,
                    const char* what) {
  auto a = ask_within<Answer>(*s.sys, s.gcs, q, s.timeout);
  if (!a)
    throw gcs_unavailable_error(std::string{"the control store did not "
                                            "answer in time ("} +
                                what + ")");
  return std::move(*a);
}

json entry_json(const state::entry& e) {
  json o = json::object();
  for (const auto& [k, v] : e.fields)
    o[k] = v;
  return o;
}

/// A page of a list, or throws `invalid_argument_error` for what the
/// control store refused.
state::page list(const status_page_sources& s, state::kind k,
                 std::vector<std::string> filters, std::uint64_t limit,
                 std::string cursor = {}) {
  auto p = ask_or_throw<protocol::state_page>(
      s, protocol::list_state{k, std::move(filters), limit, std::move(cursor)},
      "a list");
  if (p.error.code != errc::ok)
    throw invalid_argument_error(p.error.message);
  return std::move(p.page);
}

json resources_json(const internal::resource_set& total,
                    const internal::resource_set& available) {
  json out = json::array();
  auto avail = available.to_map();
  for (const auto& [name, quantity] : total.to_map())
    out.push_back({{"name", name},
                   {"total", quantity},
                   {"used", quantity - avail[name]}});
  return out;
}

json shapes_json(const std::vector<internal::resource_set>& shapes) {
  json out = json::array();
  for (const auto& [shape, n] : count_shapes(shapes))
    out.push_back({{"shape", shape}, {"count", n}});
  return out;
}

/// Whether an actor that died so failed: not one that exited, was killed
/// on request or ended with its job.
bool failed_death(const std::string& death_kind) {
  return death_kind != "EXITED" && death_kind != "KILLED" &&
         death_kind != "JOB_ENDED";
}

/// The newest failures: failed tasks by end time, then actors that died
/// unasked, with their causes; `total` counts them all. Lists are ordered
/// by id, so up to `failures_read` of each are read and the newest kept.
json failures_json(const status_page_sources& s, std::uint64_t& total) {
  json out = json::array();
  auto tasks = list(s, state::kind::tasks, {"state=FAILED"}, failures_read);
  std::sort(tasks.entries.begin(), tasks.entries.end(),
            [](const auto& a, const auto& b) {
              return a["end_time"] > b["end_time"];
            });
  for (const auto& t : tasks.entries) {
    if (out.size() == failures_shown)
      break;
    out.push_back({{"kind", "task"},
                   {"id", t["task_id"]},
                   {"name", t["name"]},
                   {"node_id", t["node_id"]},
                   {"time", t["end_time"]},
                   {"cause", t["error"]}});
  }
  total = tasks.matched;
  auto deaths = ask_or_throw<protocol::state_counts>(
      s, protocol::summarize_state{state::kind::actors, "death_kind"},
      "actors by death");
  for (const auto& c : deaths.counts)
    if (c.state == "DEAD" && failed_death(c.group))
      total += c.n;
  auto actors = list(s, state::kind::actors, {"state=DEAD"}, failures_read);
  for (const auto& a : actors.entries) {
    if (out.size() == failures_shown)
      break;
    if (!failed_death(a["death_kind"]))
      continue;
    out.push_back({{"kind", "actor"},
                   {"id", a["actor_id"]},
                   {"name", a["class_name"]},
                   {"node_id", a["node_id"]},
                   {"time", ""},
                   {"cause", a["death_kind"] + ": " + a["death_cause"]}});
  }
  return out;
}

http_reply overview(const status_page_sources& s) {
  auto st = collect_cluster_status(*s.sys, s.gcs, s.timeout, s.node_timeout);
  auto control = ask_or_throw<protocol::control_metrics>(
      s, protocol::query_control_metrics{}, "its figures");
  auto tasks = ask_within<protocol::task_metrics>(
      *s.sys, s.gcs, protocol::query_task_metrics{}, s.timeout);
  std::map<node_id, const protocol::node_health*> health;
  for (const auto& h : control.nodes)
    health[h.node] = &h;
  json nodes = json::array();
  std::vector<internal::resource_set> waiting;
  std::vector<internal::resource_set> infeasible;
  for (const auto& n : st.nodes) {
    json o{{"node_id", n.node.hex()},
           {"alive", n.alive},
           {"address", n.contact},
           {"labels", n.labels}};
    auto used = st.resources.find(n.node);
    o["answered"] = used != st.resources.end();
    if (used != st.resources.end()) {
      o["resources"] =
          resources_json(used->second.total, used->second.available);
      waiting.insert(waiting.end(), used->second.waiting.begin(),
                     used->second.waiting.end());
      infeasible.insert(infeasible.end(), used->second.infeasible.begin(),
                        used->second.infeasible.end());
    } else {
      o["resources"] = resources_json(n.resources, n.resources);
    }
    if (auto h = health.find(n.node); h != health.end()) {
      o["heartbeat_age_ms"] = h->second->heartbeat_age_ms;
      o["objects"] = h->second->objects;
      o["object_bytes"] = h->second->object_bytes;
    }
    nodes.push_back(std::move(o));
  }
  json jobs = json::array();
  for (const auto& j : st.summary.jobs)
    jobs.push_back({{"job_id", j.job.value},
                    {"namespace", j.ns},
                    {"running", j.running},
                    {"start_ms", j.start_ms}});
  json by_state = json::object();
  json out;
  if (tasks) {
    for (const auto& c : tasks->tasks)
      by_state[c.state] = by_state.value(c.state, std::uint64_t{0}) + c.n;
    out["events_dropped"] = tasks->events_dropped;
    out["tasks_forgotten"] = tasks->tasks_forgotten;
  }
  std::uint64_t failures_total = 0;
  out["now_ms"] = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  out["nodes"] = std::move(nodes);
  out["jobs"] = std::move(jobs);
  out["actors"] = {{"alive", st.summary.actors_alive},
                   {"pending", st.summary.actors_pending},
                   {"restarting", st.summary.actors_restarting},
                   {"dead", st.summary.actors_dead}};
  out["tasks"] = std::move(by_state);
  out["demands"] = {
      {"waiting", shapes_json(waiting)},
      {"infeasible", shapes_json(infeasible)},
      {"unplaced_actors", shapes_json(st.summary.unplaced_actors)}};
  out["failures"] = failures_json(s, failures_total);
  out["failures_total"] = failures_total;
  out["autoscaler"] = st.autoscaler;
  return json_reply(out);
}

std::uint64_t number_param(const http_request& req, const std::string& name,
                           std::uint64_t fallback, std::uint64_t most) {
  auto text = req.param(name);
  if (text.empty())
    return fallback;
  char* end = nullptr;
  auto n = std::strtoull(text.c_str(), &end, 10);
  if (end == text.c_str() || *end != '\0')
    throw invalid_argument_error("'" + name + "' is not a number: '" + text +
                                 "'");
  return std::min<std::uint64_t>(n, most);
}

http_reply actors_page(const status_page_sources& s, const http_request& req) {
  std::vector<std::string> filters;
  auto q = req.param("q");
  if (!q.empty())
    filters.push_back(req.param("key", "class_name") + "~=" + q);
  if (auto state = req.param("state"); !state.empty())
    filters.push_back("state=" + state);
  auto limit = number_param(req, "limit", 100, max_page_rows);
  auto page = list(s, state::kind::actors, std::move(filters),
                   std::max<std::uint64_t>(limit, 1), req.param("cursor"));
  json rows = json::array();
  for (const auto& e : page.entries)
    rows.push_back(entry_json(e));
  return json_reply({{"entries", std::move(rows)},
                     {"matched", page.matched},
                     {"total", page.total},
                     {"next_cursor", page.next_cursor}});
}

http_reply jobs_page(const status_page_sources& s) {
  auto jobs = list(s, state::kind::jobs, {}, 0);
  auto counts = ask_or_throw<protocol::state_counts>(
      s, protocol::summarize_state{state::kind::tasks, "job_id"}, "tasks");
  std::map<std::string, json> tasks_of;
  for (const auto& c : counts.counts) {
    auto& t = tasks_of[c.group];
    if (t.is_null())
      t = json::object();
    t[c.state] = c.n;
  }
  json rows = json::array();
  for (const auto& j : jobs.entries) {
    auto o = entry_json(j);
    auto t = tasks_of.find(j["job_id"]);
    o["tasks"] = t == tasks_of.end() ? json::object() : t->second;
    rows.push_back(std::move(o));
  }
  auto submitted = ask_or_throw<protocol::submitted_jobs>(
      s, protocol::get_submitted_jobs{}, "submitted jobs");
  json subs = json::array();
  for (const auto& j : submitted.jobs)
    subs.push_back({{"id", j.id},
                    {"name", j.name},
                    {"state", protocol::to_string(j.state)},
                    {"argv", j.argv},
                    {"submit_ms", j.submit_ms},
                    {"start_ms", j.start_ms},
                    {"end_ms", j.end_ms},
                    {"exit_code", j.exit_code},
                    {"message", j.message},
                    {"driver_pid", j.driver_pid}});
  return json_reply(
      {{"jobs", std::move(rows)}, {"submitted", std::move(subs)}});
}

http_reply job_output(const status_page_sources& s, const http_request& req) {
  auto offset = number_param(req, "offset", 0, UINT64_MAX);
  auto part = ask_or_throw<protocol::job_output>(
      s,
      protocol::read_job_output{req.param("id"), req.param("err") == "1",
                                offset, output_piece_bytes},
      "a job's output");
  if (part.error.code != errc::ok)
    return error_reply(404, part.error.message);
  return json_reply({{"bytes", part.bytes},
                     {"offset", part.offset},
                     {"size", part.size},
                     {"ended", part.ended}});
}

http_reply worker_logs(const status_page_sources& s, const http_request& req) {
  auto job = number_param(req, "job", 0, UINT32_MAX);
  if (job == 0)
    return error_reply(400, "give the job's number: ?job=N");
  auto nodes = ask_or_throw<std::vector<protocol::node_info>>(
      s, protocol::list_nodes{}, "the nodes");
  std::vector<
      std::pair<node_id, std::future<std::optional<protocol::log_pieces>>>>
      asked;
  for (const auto& n : nodes) {
    if (!n.alive)
      continue;
    protocol::read_logs msg;
    msg.job = job_id{static_cast<std::uint32_t>(job)};
    msg.err = req.param("err") == "1";
    msg.tail = worker_tail_lines;
    asked.emplace_back(
        n.node, std::async(std::launch::async, [&s, raylet = n.raylet, msg] {
          return ask_within<protocol::log_pieces>(*s.sys, raylet, msg,
                                                  s.node_timeout);
        }));
  }
  json files = json::array();
  json unanswered = json::array();
  std::size_t bytes = 0;
  for (auto& [node, answer] : asked) {
    auto pieces = answer.get();
    if (!pieces || !pieces->error.empty()) {
      unanswered.push_back(node.hex());
      continue;
    }
    for (auto& p : pieces->pieces) {
      // The newest bytes are the ones worth showing.
      auto room = worker_log_bytes - std::min(bytes, worker_log_bytes);
      if (p.bytes.size() > room)
        p.bytes.erase(0, p.bytes.size() - room);
      bytes += p.bytes.size();
      files.push_back(
          {{"node_id", node.hex()}, {"file", p.file}, {"bytes", p.bytes}});
    }
  }
  return json_reply({{"files", std::move(files)},
                     {"nodes_unanswered", std::move(unanswered)}});
}

/// The supervision trees their processes published (supervisor/tree.cpp),
/// each with whether its job still runs: a process that died without
/// stopping its tree leaves its last description behind.
http_reply trees_page(const status_page_sources& s) {
  auto keys = ask_or_throw<std::vector<std::string>>(
      s, protocol::kv_keys{supervision_namespace, ""}, "the trees");
  std::map<std::string, std::string> job_state;
  for (const auto& j : list(s, state::kind::jobs, {}, 0).entries)
    job_state[j["job_id"]] = j["state"];
  json trees = json::array();
  for (const auto& key : keys) {
    if (trees.size() == max_trees)
      break;
    auto v = ask_or_throw<protocol::kv_value>(
        s, protocol::kv_get{supervision_namespace, key}, "a tree");
    if (!v.found)
      continue; // stopped meanwhile
    auto tree = json::parse(v.value, nullptr, false);
    if (!tree.is_object())
      continue;
    auto job = std::to_string(tree.value("job", 0));
    auto st = job_state.find(job);
    tree["job_state"] = st == job_state.end() ? "UNKNOWN" : st->second;
    trees.push_back(std::move(tree));
  }
  return json_reply({{"trees", std::move(trees)}, {"total", keys.size()}});
}

http_reply history_page(const status_page_sources& s) {
  json samples = json::array();
  if (s.history)
    for (const auto& x : s.history->samples())
      samples.push_back({x.unix_ms, x.tasks_per_s, x.actors_alive,
                         x.actors_pending, x.actors_restarting, x.actors_dead,
                         x.store_bytes, x.store_objects, x.nodes_alive});
  auto interval = s.history ? s.history->interval().count() : 0;
  return json_reply({{"interval_ms", interval},
                     {"columns",
                      {"unix_ms", "tasks_per_s", "actors_alive",
                       "actors_pending", "actors_restarting", "actors_dead",
                       "store_bytes", "store_objects", "nodes_alive"}},
                     {"samples", std::move(samples)}});
}

/// Attempts the timeline view draws at most, and its longest window.
constexpr std::uint64_t max_timeline_tasks = 5000;
constexpr std::uint64_t max_timeline_window_s = 3600;

/// The tasks of the last `window` seconds (submitted, started or ended in
/// it, or running still; the first `max_timeline_tasks` of them), each
/// attempt that started as
/// a slice, and the object transfers that ended in that time: what the
/// timeline view draws, as `prism timeline` writes it for Perfetto.
http_reply timeline_view(const status_page_sources& s,
                         const http_request& req) {
  auto window = std::max<std::uint64_t>(
      number_param(req, "window", 60, max_timeline_window_s), 1);
  protocol::timeline_query q;
  q.job = static_cast<std::uint32_t>(number_param(req, "job", 0, UINT32_MAX));
  auto now_us = internal::unix_us_now();
  q.since_us = now_us - static_cast<std::int64_t>(window) * 1'000'000;
  q.limit = max_timeline_tasks;
  auto page = ask_or_throw<protocol::timeline_page>(s, q, "the timeline");
  json tasks = json::array();
  for (const auto& t : page.tasks)
    for (const auto& a : t.attempts) {
      if (a.start_us == 0)
        continue;
      tasks.push_back({{"task", t.id.hex()},
                       {"name", t.name},
                       {"attempt", a.attempt},
                       {"node", a.node.hex()},
                       {"worker", a.worker.hex()},
                       {"actor", t.actor.nil() ? "" : t.actor.hex()},
                       {"pid", a.pid},
                       {"start_us", a.start_us},
                       {"end_us", a.end_us},
                       {"error", a.error}});
    }
  json transfers = json::array();
  for (const auto& t : page.transfers)
    transfers.push_back({{"object", t.object.hex()},
                         {"from", t.from.hex()},
                         {"to", t.to.hex()},
                         {"bytes", t.bytes},
                         {"start_us", t.start_us},
                         {"end_us", t.end_us},
                         {"error", t.error}});
  return json_reply({{"since_us", q.since_us},
                     {"now_us", now_us},
                     {"window_s", window},
                     {"tasks", std::move(tasks)},
                     {"transfers", std::move(transfers)},
                     {"truncated", page.next != 0},
                     {"dropped_events", page.dropped_events},
                     {"forgotten_tasks", page.forgotten_tasks}});
}

/// The answers given within the last `fresh_for`, by path and query: a
/// page polled by many browsers, or often by one, costs the control store
/// one answer per `fresh_for` whatever the polling.
class answer_cache {
public:
  explicit answer_cache(std::chrono::milliseconds fresh_for)
      : fresh_for_(fresh_for) {}

  std::optional<http_reply> find(const std::string& key) {
    std::lock_guard<std::mutex> guard{mu_};
    auto i = kept_.find(key);
    if (i == kept_.end() || clock::now() - i->second.first > fresh_for_)
      return std::nullopt;
    return i->second.second;
  }

  void keep(const std::string& key, const http_reply& reply) {
    if (fresh_for_.count() <= 0)
      return;
    std::lock_guard<std::mutex> guard{mu_};
    auto now = clock::now();
    // Bounded in entries and bytes: a client that asks ever new queries
    // evicts the stale answers, or, past either bound, all.
    if (kept_.size() >= max_kept || bytes_ >= max_bytes) {
      std::erase_if(kept_, [&](const auto& x) {
        bool stale = now - x.second.first > fresh_for_;
        if (stale)
          bytes_ -= x.second.second.body.size();
        return stale;
      });
      if (kept_.size() >= max_kept || bytes_ >= max_bytes) {
        kept_.clear();
        bytes_ = 0;
      }
    }
    auto& slot = kept_[key];
    bytes_ -= slot.second.body.size();
    slot = {now, reply};
    bytes_ += reply.body.size();
  }

private:
  using clock = std::chrono::steady_clock;
  static constexpr std::size_t max_kept = 1024;
  static constexpr std::size_t max_bytes = 16 * 1024 * 1024;
  std::chrono::milliseconds fresh_for_;
  std::mutex mu_;
  std::size_t bytes_ = 0;
  std::map<std::string, std::pair<clock::time_point, http_reply>> kept_;
};

/// The request's path and query, in a fixed order.
std::string key_of(const http_request& req) {
  auto key = req.path;
  for (const auto& [name, value] : req.query)
    key += "&" + name + "=" + value;
  return key;
}

/// `answer` run with the errors a route may meet turned into JSON (a
/// refused filter is the client's, 400; a silent control store 503), its
/// good answers kept in `cache` for a while.
template <class F>
http_route json_route(std::shared_ptr<answer_cache> cache, F answer) {
  return [cache, answer](const http_request& req) {
    auto key = key_of(req);
    if (auto kept = cache->find(key))
      return *kept;
    try {
      auto reply = answer(req);
      if (reply.status == 200)
        cache->keep(key, reply);
      return reply;
    } catch (const invalid_argument_error& e) {
      return error_reply(400, e.what());
    } catch (const gcs_unavailable_error& e) {
      return error_reply(503, e.what());
    }
  };
}

} // namespace

void add_status_page_routes(std::map<std::string, http_route>& routes,
                            const status_page_sources& s) {
  for (std::size_t i = 0; i < status_page_file_count; ++i) {
    const auto& f = status_page_files[i];
    routes[f.path] = [&f](const http_request&) {
      http_reply r;
      r.content_type = f.content_type;
      r.body = f.body;
      r.headers.emplace_back("Cache-Control", "no-cache");
      // Everything the page uses comes from this port.
      r.headers.emplace_back("Content-Security-Policy",
                             "default-src 'self'; img-src 'self' data:; "
                             "frame-ancestors 'none'");
      r.headers.emplace_back("X-Content-Type-Options", "nosniff");
      return r;
    };
  }
  auto cache = std::make_shared<answer_cache>(s.fresh_for);
  routes["/api/overview"] =
      json_route(cache, [s](const http_request&) { return overview(s); });
  routes["/api/actors"] = json_route(
      cache, [s](const http_request& req) { return actors_page(s, req); });
  routes["/api/jobs"] =
      json_route(cache, [s](const http_request&) { return jobs_page(s); });
  routes["/api/job_output"] = json_route(
      cache, [s](const http_request& req) { return job_output(s, req); });
  routes["/api/worker_logs"] = json_route(
      cache, [s](const http_request& req) { return worker_logs(s, req); });
  routes["/api/trees"] =
      json_route(cache, [s](const http_request&) { return trees_page(s); });
  routes["/api/history"] =
      json_route(cache, [s](const http_request&) { return history_page(s); });
  routes["/api/timeline"] = json_route(
      cache, [s](const http_request& req) { return timeline_view(s, req); });
}

} // namespace prism::actors
