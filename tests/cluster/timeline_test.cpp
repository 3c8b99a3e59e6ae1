// `prism timeline`: the tasks a cluster recorded, as a Chrome trace a
// browser's Perfetto loads.

#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>
#include <prism/prism.hpp>

#include "prism_command.hpp"

namespace timeline_test {

using namespace prism::cluster_test;
using namespace std::chrono_literals;
using json = nlohmann::json;

int timeline_square(int x) {
  return x * x;
}

/// A value of `mb` MiB: kept in the object store of the node that made it.
std::string timeline_big(int mb) {
  return std::string(static_cast<std::size_t>(mb) << 20, 'x');
}

PRISM_REMOTE(timeline_square);
PRISM_REMOTE(timeline_big);

/// The trace `prism timeline args...` writes, parsed.
json timeline_of(process_cluster& c, std::vector<std::string> args) {
  auto file = c.session_dir() + "/trace.json";
  args.insert(args.begin(), {"timeline", "--address", c.address(), "-o", file});
  auto r = c.run(args);
  BOOST_REQUIRE_MESSAGE(r.status == 0, r.out + r.err);
  std::ifstream in{file};
  return json::parse(in);
}

std::vector<json> slices_named(const json& trace, const std::string& name) {
  std::vector<json> result;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "X" && e["name"] == name)
      result.push_back(e);
  return result;
}

BOOST_AUTO_TEST_SUITE(cluster_timeline)

BOOST_AUTO_TEST_CASE(a_trace_shows_each_task_on_its_worker_with_an_arrow) {
  auto o = attached_cluster(1);
  o.cpus = 2;
  o.driver.task_events = true;
  process_cluster c{o};
  std::vector<prism::object_ref<int>> refs;
  for (int i = 0; i < 30; ++i)
    refs.push_back(prism::task(timeline_square).remote(i));
  for (auto& r : refs)
    prism::get(r, 60s);
  // Once the control store has every event.
  BOOST_REQUIRE(eventually(20s, [&] {
    prism::state::list_options lo;
    lo.filters = {"name=timeline_square", "state=finished"};
    return prism::state::list(prism::state::kind::tasks, lo).matched == 30;
  }));
  std::set<std::string> nodes;
  for (const auto& n : prism::state::list(prism::state::kind::nodes).entries)
    nodes.insert(n["node_id"].substr(0, 8));

  auto trace = timeline_of(c, {});
  auto slices = slices_named(trace, "timeline_square");
  BOOST_REQUIRE_EQUAL(slices.size(), 30u);
  std::set<std::uint64_t> sources;
  std::set<std::pair<int, std::uint64_t>> rows;
  for (const auto& e : trace["traceEvents"])
    if (e.contains("flow_out"))
      sources.insert(e["bind_id"].get<std::uint64_t>());
  for (const auto& s : slices) {
    BOOST_TEST(s["args"]["attempt"] == 0);
    BOOST_TEST(nodes.count(s["args"]["node"]) == 1u);
    BOOST_TEST(s["dur"].get<std::int64_t>() >= 1);
    BOOST_REQUIRE(s.contains("flow_in"));
    BOOST_TEST(sources.count(s["bind_id"].get<std::uint64_t>()) == 1u);
    rows.insert({s["pid"].get<int>(), s["tid"].get<std::uint64_t>()});
  }
  // Every row a slice is on is named after its node or worker.
  for (const auto& [pid, tid] : rows) {
    bool named = false;
    for (const auto& e : trace["traceEvents"])
      named |= e["ph"] == "M" && e["name"] == "thread_name" &&
               e["pid"] == pid && e["tid"] == tid &&
               e["args"]["name"].get<std::string>().rfind("worker ", 0) == 0;
    BOOST_TEST(named);
  }

  // Filters: another job has none; the last hour has them all.
  BOOST_TEST(slices_named(timeline_of(c, {"--job", "999"}), "timeline_square")
                 .empty());
  BOOST_TEST(slices_named(timeline_of(c, {"--since", "1h"}), "timeline_square")
                 .size() == 30u);
  auto bad = c.run({"timeline", "--address", c.address(), "--since", "soon"});
  BOOST_TEST(bad.status != 0);
  BOOST_TEST(contains(bad.err, "--since"), bad.err);
}

BOOST_AUTO_TEST_CASE(
    an_object_read_from_another_node_shows_on_the_readers_row) {
  auto o = attached_cluster(0);
  o.driver.task_events = true;
  process_cluster c{o};
  c.add_node({"--resources", R"({"far": 1})"});
  // Made on the far node, kept in its store; read here, on the head's.
  auto ref = prism::task(timeline_big).resources({{"far", 1}}).remote(10);
  BOOST_REQUIRE_EQUAL(prism::get(ref, 60s).size(), 10u << 20);
  std::string far, head;
  for (const auto& n : prism::state::list(prism::state::kind::nodes).entries)
    (contains(n["resources"], "far") ? far : head) = n["node_id"].substr(0, 8);
  BOOST_REQUIRE(!far.empty() && !head.empty());

  // The transfer reaches the control store with the owner's next batch.
  std::vector<json> begins, ends;
  BOOST_REQUIRE(eventually(20s, [&] {
    begins.clear();
    ends.clear();
    auto trace = timeline_of(c, {});
    for (const auto& e : trace["traceEvents"]) {
      if (e["ph"] == "b" && e["name"] == "object transfer")
        begins.push_back(e);
      if (e["ph"] == "e" && e["name"] == "object transfer")
        ends.push_back(e);
    }
    return !begins.empty();
  }));
  BOOST_REQUIRE_EQUAL(begins.size(), 1u);
  BOOST_REQUIRE_EQUAL(ends.size(), 1u);
  const auto& b = begins[0];
  BOOST_TEST(b["args"]["from"] == far);
  BOOST_TEST(b["args"]["to"] == head);
  // The payload: the string and its length.
  auto bytes = b["args"]["bytes"].get<std::uint64_t>();
  BOOST_TEST(bytes >= 10u << 20);
  BOOST_TEST(bytes < (10u << 20) + 64);
  BOOST_TEST(!b["args"].contains("error"));
  BOOST_TEST(ends[0]["id"] == b["id"]);
  BOOST_TEST(ends[0]["ts"].get<std::int64_t>() > b["ts"].get<std::int64_t>());
  // On the head node's process, named after it.
  bool named = false;
  auto trace = timeline_of(c, {});
  for (const auto& e : trace["traceEvents"])
    named |= e["ph"] == "M" && e["name"] == "process_name" &&
             e["pid"] == b["pid"] && e["args"]["name"] == "node " + head;
  BOOST_TEST(named);
  // Another job read nothing.
  bool other = false;
  auto other_job = timeline_of(c, {"--job", "999"});
  for (const auto& e : other_job["traceEvents"])
    other |= e["ph"] == "b";
  BOOST_TEST(!other);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace timeline_test
