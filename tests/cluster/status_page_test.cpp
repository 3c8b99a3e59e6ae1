// The head's status page: its JSON against the cluster's own lists, the
// hostile queries it refuses, and the page itself in a real browser
// (Debian's chromium, driven by python3-selenium).

#include <boost/test/unit_test.hpp>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <random>
#include <set>
#include <sys/wait.h>
#include <thread>

#include <nlohmann/json.hpp>
#include <prism/prism.hpp>
#include <prism/testing.hpp>

#include "http_client.hpp"
#include "prism_command.hpp"

namespace status_page_test {

using namespace prism::cluster_test;
using namespace std::chrono_literals;
using json = nlohmann::json;
namespace fs = std::filesystem;

struct page_counter {
  static page_counter* create() {
    return new page_counter;
  }
  int bump() {
    return ++n;
  }
  /// Holds the actor until the key "page-release" is set (60 s at most):
  /// the calls behind it wait in its host.
  int hold() {
    auto deadline = std::chrono::steady_clock::now() + 60s;
    while (!prism::kv::exists("page-release", "page-test") &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(20ms);
    return n;
  }
  int n = 0;
};

struct page_cache {
  static page_cache* create() {
    return new page_cache;
  }
  int size() {
    return 0;
  }
};

/// Prints "tick N" every 100 ms, `n` times: a job whose output grows while
/// the page follows it.
int page_ticker(int n) {
  for (int i = 1; i <= n && !prism::is_cancelled(); ++i) {
    std::cout << "page tick " << i << std::endl;
    std::this_thread::sleep_for(100ms);
  }
  return n;
}

int page_fails(int) {
  throw std::runtime_error("the page test's task fails on purpose");
}

/// Works for `ms` milliseconds: slices of their own lengths on the timeline.
int page_work(int ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds{ms});
  return ms;
}

/// A value of `mb` MiB, kept in the object store of the node that made it.
std::string page_big(int mb) {
  return std::string(static_cast<std::size_t>(mb) << 20, 'x');
}

PRISM_REMOTE(page_counter::create, &page_counter::bump, &page_counter::hold);
PRISM_REMOTE(page_cache::create, &page_cache::size);
PRISM_REMOTE(page_ticker);
PRISM_REMOTE(page_fails);
PRISM_REMOTE(page_big);
PRISM_REMOTE(page_work);

json get_json(const std::string& url, int want_status = 200) {
  auto a = get_answer(url);
  BOOST_REQUIRE_MESSAGE(a.status == want_status,
                        url << " answered " << a.status << ": " << a.body);
  return json::parse(a.body);
}

/// A cluster of a head and a node with `counters` named counters (some
/// killed) and `caches` caches, a finished and a failed task.
struct populated {
  static process_cluster::options cluster_options() {
    auto o = attached_cluster(1);
    o.cpus = 4;
    o.driver.task_events = true;
    return o;
  }

  /// With `ticking`, a job whose output grows while the page follows it
  /// (`ticks`) starts before the actors.
  explicit populated(int counters, int caches, int killed, bool ticking = false)
      : cluster{cluster_options()} {
    // A failed task for the overview's recent failures.
    BOOST_CHECK_THROW(prism::get(prism::task(page_fails).remote(1), 60s),
                      prism::task_error);
    if (ticking)
      ticks = prism::task(page_ticker).remote(900);
    for (int i = 0; i < counters; ++i) {
      auto h = prism::actor(page_counter::create)
                   .name("counter-" + std::to_string(i))
                   .remote();
      counter_ids.push_back(h.id());
      handles.push_back(h);
    }
    for (int i = 0; i < caches; ++i)
      caches_.push_back(prism::actor(page_cache::create).remote());
    for (auto& h : handles)
      prism::get(h.task(&page_counter::bump).remote(), 60s);
    for (int i = 0; i < killed; ++i)
      prism::kill(handles[static_cast<std::size_t>(i)]);
    url = cluster.status_page_url();
    BOOST_REQUIRE(!url.empty());
  }

  process_cluster cluster;
  std::string url;
  std::vector<prism::actor_id> counter_ids;
  std::vector<prism::actor_handle<page_counter>> handles;
  std::vector<prism::actor_handle<page_cache>> caches_;
  std::optional<prism::object_ref<int>> ticks;
};

std::uint64_t alive_actors() {
  prism::state::list_options o;
  o.filters = {"state=ALIVE"};
  o.limit = 1;
  return prism::state::list(prism::state::kind::actors, o).matched;
}

BOOST_AUTO_TEST_SUITE(status_page)

BOOST_AUTO_TEST_CASE(its_json_matches_the_clusters_lists) {
  populated p{120, 30, 5};
  BOOST_TEST(p.url.rfind("http://127.0.0.1:", 0) == 0u);
  // The banner's address is the one `prism status` prints.
  auto status = p.cluster.run({"status", "--address", p.cluster.address()});
  BOOST_TEST(contains(status.out, "Status page: " + p.url), status.out);

  json last;
  BOOST_REQUIRE_MESSAGE(
      eventually(30s,
                 [&] {
                   last = get_json(p.url + "/api/overview");
                   // Task events reach the control store
                   // within a second or so.
                   return last["actors"]["alive"] == alive_actors() &&
                          last["tasks"].value("FAILED", 0) >= 1;
                 }),
      "the overview: " << last.dump() << ", actors alive: " << alive_actors());
  auto o = get_json(p.url + "/api/overview");
  BOOST_TEST(o["nodes"].size() == 2u);
  for (const auto& n : o["nodes"]) {
    BOOST_TEST(n["alive"].get<bool>());
    BOOST_TEST(n["answered"].get<bool>());
    bool has_cpu = false;
    for (const auto& r : n["resources"])
      has_cpu = has_cpu || (r["name"] == "CPU" && r["total"] == 4.0);
    BOOST_TEST(has_cpu, n.dump());
  }
  BOOST_TEST(o["actors"]["alive"] == 145u);
  BOOST_TEST(o["actors"]["dead"] == 5u);
  BOOST_TEST(o["jobs"].size() == 1u);
  bool failure_named = false;
  for (const auto& f : o["failures"])
    failure_named = failure_named ||
                    (f["name"] == "page_fails" &&
                     contains(f["cause"].get<std::string>(), "on purpose"));
  BOOST_TEST(failure_named, o["failures"].dump());
  // Actors killed on request are no failures.
  BOOST_TEST(o["failures_total"] == 1u, o["failures"].dump());

  // Search: a part of the class name, in any case; paged by cursor.
  auto first = get_json(p.url + "/api/actors?key=class_name&q=COUNTER");
  BOOST_TEST(first["matched"] == 120u);
  BOOST_TEST(first["total"] == 150u);
  BOOST_TEST(first["entries"].size() == 100u);
  auto cursor = first["next_cursor"].get<std::string>();
  BOOST_REQUIRE(!cursor.empty());
  auto second =
      get_json(p.url + "/api/actors?key=class_name&q=COUNTER&cursor=" + cursor);
  BOOST_TEST(second["entries"].size() == 20u);
  BOOST_TEST(second["next_cursor"] == "");
  std::set<std::string> seen;
  for (const auto* page : {&first, &second})
    for (const auto& e : (*page)["entries"]) {
      BOOST_TEST(contains(e["class_name"].get<std::string>(), "counter"));
      seen.insert(e["actor_id"].get<std::string>());
    }
  BOOST_TEST(seen.size() == 120u);
  auto dead = get_json(p.url + "/api/actors?q=counter&state=DEAD");
  BOOST_TEST(dead["matched"] == 5u);
  auto by_name = get_json(p.url + "/api/actors?key=name&q=counter-11");
  BOOST_TEST(by_name["matched"] == 11u); // counter-11 and counter-110..119

  // Jobs: the driver's job with its tasks by state.
  auto jobs = get_json(p.url + "/api/jobs");
  BOOST_REQUIRE(jobs["jobs"].size() == 1u);
  auto tasks = jobs["jobs"][0]["tasks"];
  BOOST_TEST(tasks.value("FAILED", 0) >= 1, tasks.dump());
  BOOST_TEST(jobs["submitted"].size() == 0u);

  // The history's first sample is taken as the page opens.
  auto history = get_json(p.url + "/api/history");
  BOOST_TEST(history["samples"].size() >= 1u);
  BOOST_TEST(history["columns"][0] == "unix_ms");

  // The files, with a policy that keeps the page to its own origin.
  auto page = get_answer(p.url + "/");
  BOOST_TEST(page.status == 200);
  BOOST_TEST(contains(page.body, "<script src=\"/app.js\">"));
  BOOST_TEST(get_answer(p.url + "/app.js").status == 200);
  BOOST_TEST(get_answer(p.url + "/app.css").status == 200);
}

BOOST_AUTO_TEST_CASE(hostile_queries_are_refused_and_the_head_stays_up) {
  populated p{5, 0, 0};
  // Refusals that name what is wrong, never a 500.
  auto bad_key = get_answer(p.url + "/api/actors?key=colour&q=x");
  BOOST_TEST(bad_key.status == 400);
  BOOST_TEST(contains(bad_key.body, "colour"));
  BOOST_TEST(get_answer(p.url + "/api/actors?limit=lots").status == 400);
  BOOST_TEST(get_answer(p.url + "/api/worker_logs").status == 400);
  BOOST_TEST(get_answer(p.url + "/api/job_output?id=job-nothing").status ==
             404);
  // A limit past the most is cut to it.
  auto big = get_json(p.url + "/api/actors?limit=100000000");
  BOOST_TEST(big["entries"].size() == 5u);
  // Fuzzed parameters: every answer is 200, 400 or 404.
  std::mt19937_64 rng{std::random_device{}()};
  auto seed = rng();
  rng.seed(seed);
  int inputs = 200;
  if (const char* n = std::getenv("PRISM_FUZZ_INPUTS"))
    inputs = std::atoi(n);
  BOOST_TEST_MESSAGE("seed " << seed << ", " << inputs << " inputs");
  const std::vector<std::string> routes = {
      "/api/overview",    "/api/actors",  "/api/jobs", "/api/job_output",
      "/api/worker_logs", "/api/history", "/",         "/app.js"};
  const std::vector<std::string> names = {"key",   "q",   "state", "cursor",
                                          "limit", "job", "id",    "offset",
                                          "err",   "zz"};
  auto junk = [&] {
    std::string s;
    for (auto n = rng() % 40; n > 0; --n) {
      auto c = static_cast<char>(rng() % 95 + 32);
      s += c == ' ' ? std::string{"%20"} : std::string(1, c);
    }
    if (rng() % 4 == 0)
      s += "%" + std::to_string(rng() % 100) + "%00%ff";
    return s;
  };
  std::map<int, int> statuses;
  for (int i = 0; i < inputs; ++i) {
    auto path = routes[rng() % routes.size()] + "?";
    for (auto n = rng() % 4; n > 0; --n)
      path += names[rng() % names.size()] + "=" + junk() + "&";
    auto a = get_answer(p.url + path);
    ++statuses[a.status];
    BOOST_TEST((a.status == 200 || a.status == 400 || a.status == 404),
               path << " answered " << a.status << ": " << a.body);
  }
  for (const auto& [status, n] : statuses)
    BOOST_TEST_MESSAGE(n << " answered " << status);
  BOOST_TEST(get_json(p.url + "/api/overview")["nodes"].size() == 2u);
}

/// The child `id` anywhere in a tree's description; null if none.
json child_named(const json& tree, const std::string& id) {
  for (const auto& c : tree.value("children", json::array())) {
    if (c["id"] == id)
      return c;
    if (c.contains("tree"))
      if (auto found = child_named(c["tree"], id); !found.is_null())
        return found;
  }
  return nullptr;
}

/// A tree of a counter and a pool of one cache: one_for_one over
/// one_for_all.
prism::supervisor start_tree() {
  prism::supervisor_flags outer;
  outer.intensity = 5;
  prism::supervisor_flags inner;
  inner.strategy = prism::restart_strategy::one_for_all;
  inner.intensity = 3;
  return prism::supervisor::start(
      outer, {prism::child_spec::actor("page-db", page_counter::create),
              prism::child_spec::supervisor(
                  "page-pool", inner,
                  {prism::child_spec::actor("page-w1", page_cache::create)})});
}

BOOST_AUTO_TEST_CASE(supervision_trees_show_their_children) {
  populated p{2, 0, 0};
  auto tree = start_tree();
  auto the_tree = [&] {
    auto t = get_json(p.url + "/api/trees");
    return t["trees"].size() == 1u ? t["trees"][0] : json{};
  };
  auto child = [&](const std::string& id) {
    auto t = the_tree();
    return t.is_null() ? json{} : child_named(t["tree"], id);
  };
  BOOST_REQUIRE(eventually(20s, [&] {
    auto w = child("page-w1");
    return !w.is_null() && w["running"] == true;
  }));
  auto t = the_tree();
  BOOST_TEST(t["job_state"] == "RUNNING");
  BOOST_TEST(t["tree"]["strategy"] == "one_for_one");
  BOOST_TEST(t["tree"]["mailbox"].is_number());
  auto pool = child("page-pool");
  BOOST_TEST(pool["supervisor"] == true);
  BOOST_TEST(pool["tree"]["strategy"] == "one_for_all");
  BOOST_TEST(child("page-db")["restarts"] == 0);

  // A child that dies is restarted, and the page says so.
  BOOST_REQUIRE(
      eventually(20s, [&] { return child("page-db")["running"] == true; }));
  auto db = prism::get_actor<page_counter>("page-db");
  BOOST_REQUIRE(db.has_value());
  prism::kill(*db);
  BOOST_REQUIRE(eventually(20s, [&] {
    auto c = child("page-db");
    return !c.is_null() && c["restarts"] == 1 && c["running"] == true;
  }));

  // Calls waiting for a child actor show as its mailbox length.
  BOOST_REQUIRE(eventually(20s, [&] {
    auto c = child("page-db");
    return c["running"] == true && c["mailbox"] == 0;
  }));
  db = prism::get_actor<page_counter>("page-db");
  BOOST_REQUIRE(db.has_value());
  auto held = db->task(&page_counter::hold).remote();
  std::vector<prism::object_ref<int>> behind;
  for (int i = 0; i < 20; ++i)
    behind.push_back(db->task(&page_counter::bump).remote());
  BOOST_TEST(eventually(20s, [&] { return child("page-db")["mailbox"] == 20; }),
             child("page-db").dump());
  prism::kv::put("page-release", "1", true, "page-test");
  BOOST_TEST(prism::get(behind, 60s).back() == 20);
  BOOST_TEST(eventually(20s, [&] { return child("page-db")["mailbox"] == 0; }));
  prism::get(held, 60s);

  // A stopped tree leaves the page (once its last answer is a second old).
  tree.stop();
  BOOST_TEST(eventually(5s, [&] {
    return get_json(p.url + "/api/trees")["trees"].size() == 0u;
  }));
}

/// The actors whose class name holds "count", in any case.
std::uint64_t counters_matched() {
  prism::state::list_options o;
  o.filters = {"class_name~=count"};
  o.limit = 1;
  return prism::state::list(prism::state::kind::actors, o).matched;
}

/// Runs the browser's script; returns its exit status, with what it said
/// in `said`.
int run_browser(const std::vector<std::string>& args, std::string& said) {
  std::string command =
      "/usr/bin/python3 " PRISM_SOURCE_DIR "/tests/browser/status_page.py";
  for (const auto& a : args)
    command += " '" + a + "'";
  command += " 2>&1";
  FILE* out = ::popen(command.c_str(), "r");
  BOOST_REQUIRE(out != nullptr);
  char buf[4096];
  while (auto n = std::fread(buf, 1, sizeof(buf), out))
    said.append(buf, n);
  int status = ::pclose(out);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

BOOST_AUTO_TEST_CASE(in_a_real_browser_it_shows_the_cluster) {
  populated p{150, 10, 3, /*ticking=*/true};
  auto tree = start_tree();
  // Its children count among the actors once they run.
  BOOST_REQUIRE(eventually(30s, [&] {
    auto xs = tree.which_children();
    return std::all_of(xs.begin(), xs.end(),
                       [](const prism::child_info& x) { return x.running; });
  }));
  BOOST_REQUIRE(eventually(20s, [&] {
    return get_json(p.url + "/api/overview")["actors"]["alive"] ==
           alive_actors();
  }));
  // An object made on a node of its own and read here: a transfer on the
  // timeline.
  p.cluster.add_node({"--resources", R"({"far": 1})"});
  auto big = prism::task(page_big).resources({{"far", 1}}).remote(10);
  BOOST_REQUIRE_EQUAL(prism::get(big, 60s).size(), 10u << 20);
  // Tasks of varied lengths, on the workers' rows, while the ticker runs.
  std::vector<prism::object_ref<int>> work;
  for (int i = 0; i < 30; ++i)
    work.push_back(prism::task(page_work).remote(40 + (i * 37) % 160));
  prism::get(work, 60s);
  auto job = prism::state::list(prism::state::kind::jobs).entries.at(0);
  auto artifacts = fs::path{PRISM_ARTIFACTS_DIR} / "status_page";
  fs::create_directories(artifacts);
  std::string said;
  int status = run_browser({"--url",
                            p.url,
                            "--nodes",
                            "3",
                            "--actors-alive",
                            std::to_string(alive_actors()),
                            "--jobs",
                            "1",
                            "--search",
                            "Count",
                            "--search-matches",
                            std::to_string(counters_matched()),
                            "--job",
                            job["job_id"],
                            "--follow",
                            "page tick",
                            "--tree-child",
                            "page-w1",
                            "--screenshots",
                            artifacts.string()},
                           said);
  BOOST_TEST_MESSAGE(said);
  BOOST_TEST(status == 0, said);
  BOOST_TEST(fs::exists(artifacts / "overview.png"));
  prism::cancel(*p.ticks);
  tree.stop();
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace status_page_test
