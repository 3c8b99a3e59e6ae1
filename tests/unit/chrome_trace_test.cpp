// The timeline as Chrome trace-event JSON (internal/chrome_trace.hpp): rows
// named per node and worker, a slice per attempt with its function, attempt
// and node, an arrow from each submission to its first attempt, and its
// size.

#include <boost/test/unit_test.hpp>

#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "prism/internal/chrome_trace.hpp"

namespace chrome_trace_test {

using namespace prism;
using namespace prism::internal;
using json = nlohmann::json;

constexpr std::int64_t t0 = 1'795'000'000'000'000;

task_attempt ran(std::int32_t attempt, const node_id& n, const worker_id& w,
                 std::int64_t start, std::int64_t end, std::string error = {}) {
  task_attempt a;
  a.attempt = attempt;
  a.node = n;
  a.worker = w;
  a.pid = 4000 + attempt;
  a.start_us = start;
  a.end_us = end;
  a.error = std::move(error);
  return a;
}

struct drawn {
  json doc;
  std::vector<json> events;

  explicit drawn(const std::vector<timeline_task>& tasks,
                 const std::vector<transfer_event>& transfers = {}) {
    std::ostringstream out;
    chrome_trace_writer w{out, t0};
    for (const auto& t : tasks)
      w.add(t);
    for (const auto& t : transfers)
      w.add(t);
    w.finish();
    doc = json::parse(out.str());
    for (const auto& e : doc["traceEvents"])
      events.push_back(e);
  }

  std::vector<json> of(const std::string& ph) const {
    std::vector<json> result;
    for (const auto& e : events)
      if (e["ph"] == ph)
        result.push_back(e);
    return result;
  }

  /// The name of row (pid, tid), as its metadata says.
  std::string row_name(int pid, std::uint64_t tid) const {
    for (const auto& e : events)
      if (e["ph"] == "M" && e["name"] == "thread_name" && e["pid"] == pid &&
          e["tid"] == tid)
        return e["args"]["name"];
    return {};
  }
};

BOOST_AUTO_TEST_SUITE(chrome_trace)

BOOST_AUTO_TEST_CASE(attempts_are_slices_on_their_workers_rows) {
  node_id n{unique_id::random()};
  worker_id w1{unique_id::random()}, w2{unique_id::random()};
  worker_id driver{unique_id::random()};
  timeline_task ok{
      task_id{driver, 1}, "square", t0 + 10, {ran(0, n, w1, t0 + 50, t0 + 80)}};
  timeline_task retried{task_id{driver, 2},
                        "dies_once",
                        t0 + 20,
                        {ran(0, n, w2, t0 + 60, t0 + 70, "its worker died"),
                         ran(1, n, w1, t0 + 100, t0 + 130)}};
  drawn d{{ok, retried}};
  auto slices = d.of("X");
  std::vector<json> work;
  for (const auto& s : slices)
    if (s["name"] != "submit")
      work.push_back(s);
  BOOST_REQUIRE_EQUAL(work.size(), 3u);
  BOOST_TEST(work[0]["name"] == "square");
  BOOST_TEST(work[0]["ts"] == 50);
  BOOST_TEST(work[0]["dur"] == 30);
  BOOST_TEST(work[0]["args"]["attempt"] == 0);
  BOOST_TEST(work[0]["args"]["node"] == n.hex().substr(0, 8));
  BOOST_TEST(work[1]["args"]["error"] == "its worker died");
  BOOST_TEST(work[2]["args"]["attempt"] == 1);
  // Attempts of one worker share its row; the row is named after it.
  BOOST_TEST(work[0]["tid"] == work[2]["tid"]);
  BOOST_TEST(work[0]["tid"] != work[1]["tid"]);
  BOOST_TEST(d.row_name(work[0]["pid"], work[0]["tid"]) ==
             "worker " + w1.hex().substr(0, 8) + " (pid 4000)");
  bool node_named = false;
  for (const auto& m : d.of("M"))
    node_named |= m["name"] == "process_name" &&
                  m["args"]["name"] == "node " + n.hex().substr(0, 8);
  BOOST_TEST(node_named);
}

BOOST_AUTO_TEST_CASE(an_arrow_leads_from_each_submission_to_its_first_attempt) {
  node_id n{unique_id::random()};
  worker_id w{unique_id::random()}, driver{unique_id::random()};
  std::vector<timeline_task> tasks;
  // Two tasks in one 10 ms, one later: two submit slices on the driver's
  // row; a retry draws no second arrow.
  tasks.push_back(
      {task_id{driver, 1}, "a", t0 + 100, {ran(0, n, w, t0 + 200, t0 + 300)}});
  tasks.push_back(
      {task_id{driver, 2},
       "b",
       t0 + 150,
       {ran(0, n, w, t0 + 400, t0 + 500), ran(1, n, w, t0 + 600, t0 + 700)}});
  tasks.push_back({task_id{driver, 3},
                   "c",
                   t0 + 20'000,
                   {ran(0, n, w, t0 + 20'100, t0 + 20'200)}});
  // A task the worker submitted while it ran "c": its arrow leaves the
  // worker's row.
  tasks.push_back({task_id{w, 1},
                   "nested",
                   t0 + 20'150,
                   {ran(0, n, w, t0 + 20'300, t0 + 20'400)}});
  drawn d{tasks};
  std::map<std::uint64_t, json> sources;
  std::vector<json> arrows;
  for (const auto& s : d.of("X")) {
    if (s.contains("flow_out"))
      sources[s["bind_id"]] = s;
    if (s.contains("flow_in"))
      arrows.push_back(s);
  }
  BOOST_REQUIRE_EQUAL(sources.size(), 3u);
  BOOST_REQUIRE_EQUAL(arrows.size(), 4u);
  std::set<std::uint64_t> used;
  for (const auto& a : arrows) {
    BOOST_REQUIRE(sources.count(a["bind_id"]) == 1);
    const auto& from = sources[a["bind_id"]];
    BOOST_TEST(from["ts"].get<std::int64_t>() <= a["ts"].get<std::int64_t>());
    used.insert(a["bind_id"].get<std::uint64_t>());
  }
  BOOST_TEST(arrows[0]["bind_id"] == arrows[1]["bind_id"]);
  BOOST_TEST(arrows[1]["bind_id"] != arrows[2]["bind_id"]);
  auto nested_from = sources[arrows[3]["bind_id"]];
  BOOST_TEST(nested_from["tid"] == arrows[3]["tid"]);
  BOOST_TEST(nested_from["pid"] != 0);
  BOOST_TEST(sources[arrows[0]["bind_id"]]["pid"] == 0);
  BOOST_TEST(d.row_name(0, sources[arrows[0]["bind_id"]]["tid"]) ==
             "driver " + driver.hex().substr(0, 8));
}

BOOST_AUTO_TEST_CASE(object_transfers_are_async_slices_on_the_reading_nodes) {
  node_id here{unique_id::random()}, far{unique_id::random()};
  worker_id w{unique_id::random()};
  transfer_event read;
  read.object = object_id{task_id{w, 1}, 1};
  read.from = far;
  read.to = here;
  read.bytes = 10'000'000;
  read.start_us = t0 + 1000;
  read.end_us = t0 + 21'000;
  // Overlapping the first, cut short.
  auto cut = read;
  cut.object.index = 2;
  cut.start_us = t0 + 5000;
  cut.bytes = 4'000'000;
  cut.error = "its node \"died\"";
  // The other way, on the far node's row.
  auto back = read;
  back.from = here;
  back.to = far;
  drawn d{{{task_id{w, 1}, "make", t0, {ran(0, here, w, t0 + 10, t0 + 900)}}},
          {read, cut, back}};
  auto begins = d.of("b");
  auto ends = d.of("e");
  BOOST_REQUIRE_EQUAL(begins.size(), 3u);
  BOOST_REQUIRE_EQUAL(ends.size(), 3u);
  std::set<std::string> ids;
  for (std::size_t i = 0; i < 3; ++i) {
    // Each begin has its end: same category, name, id and process.
    BOOST_TEST(begins[i]["cat"] == "transfer");
    BOOST_TEST(begins[i]["name"] == "object transfer");
    BOOST_TEST(ends[i]["cat"] == begins[i]["cat"]);
    BOOST_TEST(ends[i]["name"] == begins[i]["name"]);
    BOOST_TEST(ends[i]["id"] == begins[i]["id"]);
    BOOST_TEST(ends[i]["pid"] == begins[i]["pid"]);
    ids.insert(begins[i]["id"].get<std::string>());
  }
  BOOST_TEST(ids.size() == 3u);
  BOOST_TEST(begins[0]["ts"] == 1000);
  BOOST_TEST(ends[0]["ts"] == 21'000);
  BOOST_TEST(begins[0]["args"]["object"] == read.object.hex());
  BOOST_TEST(begins[0]["args"]["from"] == far.hex().substr(0, 8));
  BOOST_TEST(begins[0]["args"]["bytes"] == 10'000'000);
  BOOST_TEST(begins[0]["args"]["MB_per_s"] == 500.0);
  BOOST_TEST(begins[1]["args"]["error"] == "its node \"died\"");
  // Reads into one node share its process, named after it, with the
  // node's workers; a read into the other is on that node's.
  auto task = d.of("X");
  BOOST_REQUIRE_EQUAL(task.size(), 2u); // and its "submit" slice
  BOOST_TEST(begins[0]["pid"] == task[1]["pid"]);
  BOOST_TEST(begins[1]["pid"] == begins[0]["pid"]);
  BOOST_TEST(begins[2]["pid"] != begins[0]["pid"]);
  bool far_named = false;
  for (const auto& m : d.of("M"))
    far_named |= m["name"] == "process_name" && m["pid"] == begins[2]["pid"] &&
                 m["args"]["name"] == "node " + far.hex().substr(0, 8);
  BOOST_TEST(far_named);
}

BOOST_AUTO_TEST_CASE(actor_calls_are_on_their_actors_rows) {
  node_id n{unique_id::random()};
  worker_id driver{unique_id::random()};
  actor_id a{unique_id::random()}, b{unique_id::random()};
  // Calls run in actor processes: their attempts name no worker.
  auto call = [&](std::uint64_t seq, const actor_id& actor, std::int32_t pid,
                  std::int64_t start) {
    auto at = ran(0, n, worker_id{}, start, start + 10);
    at.pid = pid;
    return timeline_task{
        task_id{driver, seq}, "counter::add", t0 + start - 5, {at}, actor};
  };
  // Two actors in one shared process, and the first one's instance after
  // a restart in another.
  drawn d{{call(1, a, 7001, t0 + 10), call(2, b, 7001, t0 + 20),
           call(3, a, 7001, t0 + 30), call(4, a, 7002, t0 + 40)}};
  std::vector<json> work;
  for (const auto& s : d.of("X"))
    if (s["name"] != "submit")
      work.push_back(s);
  BOOST_REQUIRE_EQUAL(work.size(), 4u);
  BOOST_TEST(work[0]["tid"] == work[2]["tid"]);
  BOOST_TEST(work[0]["tid"] != work[1]["tid"]);
  BOOST_TEST(work[0]["tid"] != work[3]["tid"]);
  BOOST_TEST(d.row_name(work[0]["pid"], work[0]["tid"]) ==
             "actor " + a.hex().substr(0, 8) + " (pid 7001)");
  BOOST_TEST(d.row_name(work[1]["pid"], work[1]["tid"]) ==
             "actor " + b.hex().substr(0, 8) + " (pid 7001)");
  BOOST_TEST(d.row_name(work[3]["pid"], work[3]["tid"]) ==
             "actor " + a.hex().substr(0, 8) + " (pid 7002)");
}

BOOST_AUTO_TEST_CASE(names_are_escaped) {
  node_id n{unique_id::random()};
  worker_id w{unique_id::random()};
  drawn d{{{task_id{w, 1},
            "say \"hi\"\\\n",
            t0,
            {ran(0, n, w, t0 + 1, t0 + 2, "bad\tthing")}}}};
  bool found = false;
  for (const auto& s : d.of("X"))
    found |=
        s["name"] == "say \"hi\"\\\n" && s["args"]["error"] == "bad\tthing";
  BOOST_TEST(found);
}

BOOST_AUTO_TEST_CASE(a_task_takes_about_135_bytes) {
  // As a cluster of 2 nodes with 4 workers each runs them: 100,000 tasks a
  // second, submitted by one driver.
  std::vector<node_id> nodes{node_id{unique_id::random()},
                             node_id{unique_id::random()}};
  std::vector<worker_id> workers;
  for (int i = 0; i < 8; ++i)
    workers.push_back(worker_id{unique_id::random()});
  worker_id driver{unique_id::random()};
  std::ostringstream out;
  chrome_trace_writer w{out, t0};
  constexpr int n = 20000;
  for (int i = 0; i < n; ++i) {
    auto submit = t0 + i * 10;
    auto k = static_cast<std::size_t>(i % 8);
    w.add({task_id{driver, static_cast<std::uint64_t>(i + 1)},
           "square",
           submit,
           {ran(0, nodes[k / 4], workers[k], submit + 40, submit + 110)}});
  }
  w.finish();
  auto per_task = static_cast<double>(out.str().size()) / n;
  BOOST_TEST_MESSAGE("bytes a task: " << per_task);
  BOOST_TEST(per_task < 150.0);
  BOOST_TEST(w.arrows() == static_cast<std::uint64_t>(n));
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace chrome_trace_test
