// The cluster's state as an operator and a program read it: `prism list`
// filters before it limits and always says "N of M", pages go on from a
// cursor, `prism get` shows an actor's restarts with their causes and a
// task's attempts, `prism summary` counts by class or function and state,
// and `prism::state` answers the same without a command line.

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <utility>
#include <vector>

#include <boost/test/unit_test.hpp>

#include <prism/prism.hpp>

#include "output_driver.hpp"
#include "prism_command.hpp"

namespace state_test {

using namespace prism::cluster_test;
using namespace std::chrono_literals;

constexpr auto result_timeout = std::chrono::seconds{60};

/// An actor that answers where it runs; its calls are listed as tasks:
/// one counts, one throws, and two die (one with the process it is given).
class listed_probe {
public:
  static listed_probe* create() {
    return new listed_probe;
  }

  int pid() {
    return static_cast<int>(::getpid());
  }

  int die() {
    std::_Exit(3);
  }

  int bump() {
    return ++calls_;
  }

  int refuse() {
    throw std::runtime_error("listed_probe refuses");
  }

  int die_in(int pid) {
    if (pid == static_cast<int>(::getpid()))
      std::_Exit(3);
    return static_cast<int>(::getpid());
  }

private:
  int calls_ = 0;
};

/// An actor no node can host: it stays pending, in the control store only.
class pending_probe {
public:
  static pending_probe* create() {
    return new pending_probe;
  }
};

int listed_square(int x) {
  return x * x;
}

/// Dies with its worker process on its first attempt, and returns its
/// attempt on the next.
int dies_once() {
  auto attempt = prism::get_runtime_context().attempt;
  std::printf("dies_once attempt %d\n", attempt);
  std::fflush(stdout);
  if (attempt == 0)
    std::_Exit(3);
  return attempt;
}

PRISM_REMOTE(listed_probe::create, &listed_probe::pid, &listed_probe::die,
             &listed_probe::bump, &listed_probe::refuse, &listed_probe::die_in);
PRISM_REMOTE(pending_probe::create);
/// More than a value passed inline: kept in the store of the node that ran
/// it.
std::vector<char> listed_blob(int n) {
  return std::vector<char>(static_cast<std::size_t>(n), 'x');
}

/// Runs until `path` exists, for a minute at most: a wait on that
/// condition with a deadline, polled because a task in another process has
/// nothing to block on.
int runs_until(std::string path) {
  for (int i = 0; i < 6000 && ::access(path.c_str(), F_OK) != 0; ++i)
    ::usleep(10'000);
  return 1;
}

PRISM_REMOTE(listed_square, dies_once, listed_blob, runs_until);

/// The value of `key` in an entry of a history; empty if it has none.
std::string
field(const std::vector<std::pair<std::string, std::string>>& fields,
      const std::string& key) {
  for (const auto& [k, v] : fields)
    if (k == key)
      return v;
  return std::string{};
}

/// A driver on a head of 2 CPUs, recording its task events.
process_cluster::options recording_driver() {
  auto o = attached_cluster(0);
  o.cpus = 2;
  o.driver.task_events = true;
  return o;
}

prism::state::list_options with(std::vector<std::string> filters,
                                std::size_t limit) {
  prism::state::list_options o;
  o.filters = std::move(filters);
  o.limit = limit;
  return o;
}

BOOST_AUTO_TEST_SUITE(cluster_state)

BOOST_AUTO_TEST_CASE(lists_filter_before_they_limit_over_100000_actors) {
  auto o = attached_cluster(0);
  o.cpus = 2;
  process_cluster cluster{o};
  using prism::state::kind;
  std::vector<prism::actor_handle<listed_probe>> listed;
  for (int i = 0; i < 3; ++i)
    listed.push_back(prism::actor(listed_probe::create)
                         .isolation(prism::isolation::shared)
                         .remote());
  for (auto& a : listed)
    BOOST_REQUIRE(prism::get(a.task(&listed_probe::pid).remote(),
                             result_timeout) != ::getpid());
  constexpr std::uint64_t pending = 100'000;
  std::vector<prism::actor_handle<pending_probe>> waiting;
  waiting.reserve(pending);
  // In steps the control store takes before the next: a sanitized head
  // flooded with 100,000 creations at once misses its heartbeats.
  constexpr std::uint64_t step = 10'000;
  for (std::uint64_t made = 0; made < pending;) {
    for (std::uint64_t i = 0; i < step; ++i, ++made)
      waiting.push_back(prism::actor(pending_probe::create)
                            .resources({{"unobtainium", 1}})
                            .remote());
    BOOST_REQUIRE(eventually(120s, [&] {
      return prism::state::list(kind::actors,
                                with({"class_name=pending_probe"}, 1))
                 .matched == made;
    }));
  }

  // The C++ API: 3 of 100,003 match, found on two pages.
  auto first =
      prism::state::list(kind::actors, with({"class_name=listed_probe"}, 2));
  BOOST_TEST(first.total == pending + 3);
  BOOST_TEST(first.matched == 3u);
  BOOST_REQUIRE(first.entries.size() == 2u);
  BOOST_REQUIRE(!first.next_cursor.empty());
  auto rest_options = with({"class_name=listed_probe"}, 2);
  rest_options.cursor = first.next_cursor;
  auto rest = prism::state::list(kind::actors, rest_options);
  BOOST_REQUIRE(rest.entries.size() == 1u);
  BOOST_TEST(rest.next_cursor.empty());
  BOOST_TEST(first.entries[0]["actor_id"] < first.entries[1]["actor_id"]);
  BOOST_TEST(first.entries[1]["actor_id"] < rest.entries[0]["actor_id"]);
  for (const auto* p : {&first, &rest})
    for (const auto& e : p->entries) {
      BOOST_TEST(e["state"] == "ALIVE");
      BOOST_TEST(e["shared"] == "true");
      BOOST_TEST(!e["pid"].empty());
      BOOST_TEST(e["pid"] != std::to_string(::getpid()));
    }
  BOOST_CHECK_THROW(
      (void)prism::state::list(kind::actors, with({"colour=red"}, 1)),
      prism::invalid_argument_error);

  // The command says "N of M" and where the next page starts.
  auto a = cluster.address();
  auto alive = cluster.run({"list", "actors", "--address", a, "--filter",
                            "class_name=listed_probe", "--filter",
                            "state=alive", "--limit", "2"});
  BOOST_TEST(alive.status == 0, alive.err);
  BOOST_TEST(contains(alive.out, "Showing 2 of 3 actors matching "
                                 "class_name=listed_probe state=alive "
                                 "(100003 in all)"),
             alive.out);
  BOOST_TEST(contains(alive.out, "More: --cursor " + first.next_cursor),
             alive.out);
  BOOST_TEST(count_of(alive.out, "listed_probe  ALIVE") == 2u, alive.out);
  auto waiting_list =
      cluster.run({"list", "actors", "--address", a, "--filter",
                   "state=PENDING", "--limit", "5", "--format", "json"});
  BOOST_TEST(waiting_list.status == 0, waiting_list.err);
  BOOST_TEST(contains(waiting_list.out, "\"shown\": 5"), waiting_list.out);
  BOOST_TEST(contains(waiting_list.out, "\"matched\": 100000"));
  BOOST_TEST(count_of(waiting_list.out, "\"state\": \"PENDING\"") == 5u);

  auto summary = cluster.run({"summary", "actors", "--address", a});
  BOOST_TEST(summary.status == 0, summary.err);
  BOOST_TEST(contains(summary.out, "100003 actors by class_name and state"),
             summary.out);
  auto rows = lines_of(summary.out);
  auto row_of = [&](const std::string& group) {
    for (const auto& r : rows)
      if (r.rfind(group + " ", 0) == 0)
        return r;
    return std::string{};
  };
  BOOST_TEST(row_of("listed_probe").find(" 3") != std::string::npos,
             summary.out);
  BOOST_TEST(row_of("pending_probe").find(" 100000") != std::string::npos,
             summary.out);

  // One actor by a prefix of its id; nodes and jobs list too.
  auto id = first.entries[0]["actor_id"];
  auto got = cluster.run({"get", "actor", id.substr(0, 12), "--address", a});
  BOOST_TEST(got.status == 0, got.err);
  BOOST_TEST(contains(got.out, "actor_id:     " + id), got.out);
  BOOST_TEST(contains(got.out, "restarts_history: none"), got.out);
  auto nodes = cluster.run({"list", "nodes", "--address", a});
  BOOST_TEST(contains(nodes.out, "Showing 1 of 1 nodes (1 in all)"), nodes.out);
  BOOST_TEST(contains(nodes.out, "ALIVE"));
  auto jobs = cluster.run(
      {"list", "jobs", "--address", a, "--filter", "state=running"});
  BOOST_TEST(contains(jobs.out, "Showing 1 of 1 jobs"), jobs.out);

  // Bad input: one clear line and a failing status.
  auto bad_key =
      cluster.run({"list", "actors", "--address", a, "--filter", "colour=red"});
  BOOST_TEST(bad_key.status != 0);
  BOOST_TEST(contains(bad_key.err, "no key 'colour'"), bad_key.err);
  BOOST_TEST(lines_of(bad_key.err).size() == 1u, bad_key.err);
  auto unknown = cluster.run(
      {"get", "actor", "00000000000000000000000000000000", "--address", a});
  BOOST_TEST(unknown.status != 0);
  BOOST_TEST(contains(unknown.err, "no actor"), unknown.err);
  BOOST_TEST(cluster.sanitizer_reports() == "");
}

BOOST_AUTO_TEST_CASE(get_actor_shows_each_restart_with_its_cause) {
  auto o = attached_cluster(0);
  o.cpus = 2;
  process_cluster cluster{o};
  using prism::state::kind;
  auto a = prism::actor(listed_probe::create).max_restarts(2).remote();
  auto pid = prism::get(a.task(&listed_probe::pid).remote(), result_timeout);
  auto id = a.id().hex();
  (void)a.task(&listed_probe::die).remote();
  // Restarted: another process answers.
  BOOST_REQUIRE(eventually(60s, [&] {
    try {
      return prism::get(a.task(&listed_probe::pid).remote(), 5s) != pid;
    } catch (const prism::error&) {
      return false;
    }
  }));
  auto e = prism::state::get(kind::actors, id);
  BOOST_REQUIRE(e.has_value());
  BOOST_TEST((*e)["restarts"] == "1");
  BOOST_TEST((*e)["state"] == "ALIVE");
  BOOST_REQUIRE(e->history.size() == 1u);
  auto cause = field(e->history[0], "cause");
  BOOST_TEST(!cause.empty());
  auto got = cluster.run({"get", "actor", id, "--address", cluster.address()});
  BOOST_TEST(got.status == 0, got.err);
  BOOST_TEST(contains(got.out, "- restart=1 time="), got.out);
  BOOST_TEST(contains(got.out, "cause=\"" + cause + "\""), got.out);

  // The control store keeps the restarts with the actor: a head started
  // again on its storage tells the same story.
  cluster.restart_head();
  std::optional<prism::state::entry> again;
  BOOST_REQUIRE(eventually(60s, [&] {
    try {
      again = prism::state::get(kind::actors, id);
      return again.has_value();
    } catch (const prism::error&) {
      return false;
    }
  }));
  // Its instance may have gone with the head's node and restarted once
  // more since: the first restart is still the one seen before.
  BOOST_TEST(std::stoi((*again)["restarts"]) >= 1);
  BOOST_REQUIRE(!again->history.empty());
  BOOST_TEST(field(again->history[0], "cause") == cause);
  BOOST_TEST((again->history[0] == e->history[0]));

  prism::kill(a);
  BOOST_REQUIRE(eventually(30s, [&] {
    return (*prism::state::get(kind::actors, id))["state"] == "DEAD";
  }));
  auto dead = *prism::state::get(kind::actors, id);
  BOOST_TEST(dead["death_kind"] == "KILLED");
  BOOST_TEST(!dead["death_cause"].empty());
  BOOST_REQUIRE(!dead.history.empty());
  BOOST_TEST((dead.history[0] == e->history[0]));
  BOOST_TEST(cluster.sanitizer_reports() == "");
}

BOOST_AUTO_TEST_CASE(tasks_are_listed_from_their_events_with_each_attempt) {
  process_cluster cluster{recording_driver()};
  using prism::state::kind;
  std::vector<prism::object_ref<int>> refs;
  for (int i = 0; i < 200; ++i)
    refs.push_back(prism::task(listed_square).remote(i));
  auto retried = prism::task(dies_once).max_retries(1).remote();
  for (int i = 0; i < 200; ++i)
    BOOST_REQUIRE(prism::get(refs[i], result_timeout) == i * i);
  BOOST_REQUIRE(prism::get(retried, result_timeout) == 1);
  // Events go to the control store in batches, a second apart at most.
  BOOST_REQUIRE(eventually(30s, [&] {
    return prism::state::list(kind::tasks,
                              with({"name=listed_square", "state=finished"}, 1))
                   .matched == 200u &&
           prism::state::list(kind::tasks,
                              with({"name=dies_once", "state=finished"}, 1))
                   .matched == 1u;
  }));
  auto page = prism::state::list(kind::tasks, with({"name=dies_once"}, 10));
  BOOST_REQUIRE(page.entries.size() == 1u);
  BOOST_TEST(page.dropped_events == 0u);
  BOOST_TEST(page.forgotten_tasks == 0u);
  const auto& t = page.entries[0];
  BOOST_TEST(t["attempt"] == "1");
  BOOST_TEST(t["job_id"] == "1");
  BOOST_TEST(!t["pid"].empty());
  BOOST_TEST(t["pid"] != std::to_string(::getpid()));
  BOOST_TEST(!t["start_time"].empty());
  BOOST_TEST(!t["duration_ms"].empty());
  auto e = prism::state::get(kind::tasks, t["task_id"]);
  BOOST_REQUIRE(e.has_value());
  BOOST_REQUIRE(e->history.size() == 2u);
  BOOST_TEST(field(e->history[0], "state") == "FAILED");
  BOOST_TEST(contains(field(e->history[0], "error"), "died"),
             field(e->history[0], "error"));
  BOOST_TEST(field(e->history[0], "pid") != field(e->history[1], "pid"));
  BOOST_TEST(field(e->history[1], "state") == "FINISHED");

  auto a = cluster.address();
  auto listed = cluster.run({"list", "tasks", "--address", a, "--filter",
                             "name=listed_square", "--limit", "3"});
  BOOST_TEST(listed.status == 0, listed.err);
  BOOST_TEST(contains(listed.out, "Showing 3 of 200 tasks matching "
                                  "name=listed_square (201 in all)"),
             listed.out);
  auto got = cluster.run({"get", "task", t["task_id"], "--address", a});
  BOOST_TEST(got.status == 0, got.err);
  BOOST_TEST(contains(got.out, "- attempt=0 state=FAILED"), got.out);
  BOOST_TEST(contains(got.out, "- attempt=1 state=FINISHED"), got.out);
  // The output of each attempt, in the file of the process that ran it.
  auto first_log = cluster.run(
      {"logs", "--address", a, "--task", t["task_id"], "--attempt", "0"});
  BOOST_TEST(first_log.status == 0, first_log.err);
  BOOST_TEST(contains(first_log.out, "dies_once attempt 0"), first_log.out);
  BOOST_TEST(!contains(first_log.out, "dies_once attempt 1"), first_log.out);
  auto last_log = cluster.run({"logs", "--address", a, "--task", t["task_id"]});
  BOOST_TEST(contains(last_log.out, "dies_once attempt 1"), last_log.out);
  auto summary = cluster.run({"summary", "tasks", "--address", a});
  BOOST_TEST(contains(summary.out, "201 tasks by name and state"), summary.out);
  BOOST_TEST(cluster.sanitizer_reports() == "");
}

// Workers and objects are each node's own: the control store asks every
// node and merges their pages, filtered before they are limited, and says
// how many nodes did not answer in time (a frozen one).
BOOST_AUTO_TEST_CASE(workers_and_objects_are_listed_from_every_node) {
  auto o = attached_cluster(1);
  o.cpus = 2;
  process_cluster cluster{o};
  using prism::state::kind;
  constexpr int puts = 40, blobs = 20, blob_bytes = 200'000;
  std::vector<prism::object_ref<std::vector<char>>> kept;
  for (int i = 0; i < puts; ++i)
    kept.push_back(prism::put(std::vector<char>(blob_bytes, 'p')));
  for (int i = 0; i < blobs; ++i)
    kept.push_back(prism::task(listed_blob).remote(blob_bytes));
  for (int i = puts; i < puts + blobs; ++i)
    BOOST_REQUIRE(prism::get(kept[i], result_timeout).size() ==
                  static_cast<std::size_t>(blob_bytes));

  // Workers: the processes that ran the tasks, each with its pid and job.
  auto workers = prism::state::list(kind::workers, with({"type=process"}, 0));
  BOOST_TEST(workers.nodes_unanswered == 0u);
  BOOST_REQUIRE(!workers.entries.empty());
  BOOST_TEST(workers.matched == workers.entries.size());
  for (const auto& w : workers.entries) {
    BOOST_TEST(!w["pid"].empty());
    BOOST_TEST(w["pid"] != std::to_string(::getpid()));
    BOOST_TEST(!w["node_id"].empty());
    BOOST_TEST(!w["start_time"].empty());
  }
  auto idle_or_leased =
      prism::state::list(kind::workers, with({"job_id=1"}, 1));
  BOOST_TEST(idle_or_leased.matched >= 1u);

  // Objects: the puts and the large results, filtered before the limit.
  auto put_page = prism::state::list(kind::objects, with({"type=PUT"}, 5));
  BOOST_TEST(put_page.entries.size() == 5u);
  std::set<std::string> put_ids;
  std::string cursor;
  for (;;) {
    auto o = with({"type=put"}, 7);
    o.cursor = cursor;
    auto p = prism::state::list(kind::objects, o);
    for (const auto& e : p.entries) {
      BOOST_TEST(e["size_bytes"] != "", e["object_id"]);
      BOOST_TEST(std::stoull(e["size_bytes"]) >=
                 static_cast<std::uint64_t>(blob_bytes));
      put_ids.insert(e["object_id"]);
    }
    if (p.next_cursor.empty())
      break;
    cursor = p.next_cursor;
  }
  BOOST_TEST(put_ids.size() == static_cast<std::size_t>(puts));
  auto results =
      prism::state::list(kind::objects, with({"type=TASK_RESULT"}, 0));
  std::set<std::string> result_ids;
  for (const auto& e : results.entries)
    result_ids.insert(e["object_id"]);
  BOOST_TEST(result_ids.size() == static_cast<std::size_t>(blobs));
  BOOST_TEST(results.total >= static_cast<std::uint64_t>(puts + blobs));

  // One object with each of its copies. The objects of one owner share
  // the start of their ids: a prefix that names several is refused.
  auto one = *result_ids.begin();
  BOOST_CHECK_THROW((void)prism::state::get(kind::objects, one.substr(0, 24)),
                    prism::invalid_argument_error);
  auto e = prism::state::get(kind::objects, one);
  BOOST_REQUIRE(e.has_value());
  BOOST_TEST((*e)["object_id"] == one);
  BOOST_TEST(e->history.size() >= 1u);

  auto a = cluster.address();
  auto listed = cluster.run({"list", "objects", "--address", a, "--filter",
                             "type=PUT", "--limit", "3"});
  BOOST_TEST(listed.status == 0, listed.err);
  BOOST_TEST(contains(listed.out, "Showing 3 of 40 objects matching type=PUT"),
             listed.out);
  BOOST_TEST(contains(listed.out, "More: --cursor "), listed.out);
  auto got = cluster.run({"get", "object", one, "--address", a});
  BOOST_TEST(got.status == 0, got.err);
  BOOST_TEST(contains(got.out, "copies:\n  - object_id=" + one), got.out);
  auto json = cluster.run(
      {"list", "workers", "--address", a, "--format", "json", "--limit", "0"});
  BOOST_TEST(json.status == 0, json.err);
  BOOST_TEST(contains(json.out, "\"nodes_unanswered\": 0"), json.out);
  auto summary = cluster.run({"summary", "workers", "--address", a});
  BOOST_TEST(summary.status == 0, summary.err);
  BOOST_TEST(contains(summary.out, "workers by node_id and state"),
             summary.out);
  auto bad = cluster.run(
      {"list", "workers", "--address", a, "--filter", "colour=red"});
  BOOST_TEST(bad.status == 1);
  BOOST_TEST(contains(bad.err, "their keys are worker_id, state"), bad.err);

  // A frozen node does not answer: the page says so rather than pretend.
  cluster.freeze_node(1);
  auto partial = prism::state::list(kind::workers, with({}, 0));
  cluster.resume_node(1);
  BOOST_TEST(partial.nodes_unanswered == 1u);
  BOOST_TEST(cluster.sanitizer_reports() == "");
}

BOOST_AUTO_TEST_CASE(a_task_in_flight_is_listed_while_it_runs) {
  process_cluster cluster{recording_driver()};
  using prism::state::kind;
  auto release = cluster.session_dir() + "/release-runs-until";
  auto ref = prism::task(runs_until).remote(release);
  auto running = [&] {
    return prism::state::list(kind::tasks,
                              with({"name=runs_until", "state=running"}, 1));
  };
  // Recorded by the owner's look at its tasks in flight, before it ends.
  BOOST_REQUIRE(eventually(30s, [&] { return running().matched == 1u; }));
  auto t = running().entries.at(0);
  BOOST_TEST(!t["pid"].empty());
  BOOST_TEST(!t["node_id"].empty());
  BOOST_TEST(!t["submit_time"].empty());
  BOOST_TEST(!t["start_time"].empty());
  BOOST_TEST(t["end_time"].empty());
  std::ofstream{release} << "go\n";
  BOOST_REQUIRE(prism::get(ref, result_timeout) == 1);
  BOOST_REQUIRE(eventually(30s, [&] {
    return prism::state::list(kind::tasks,
                              with({"name=runs_until", "state=finished"}, 1))
               .matched == 1u;
  }));
  BOOST_TEST(cluster.sanitizer_reports() == "");
}

BOOST_AUTO_TEST_CASE(actor_calls_are_listed_as_tasks_with_each_attempt) {
  process_cluster cluster{recording_driver()};
  using prism::state::kind;
  auto a = prism::actor(listed_probe::create)
               .max_restarts(1)
               .max_task_retries(1)
               .remote();
  auto id = a.id().hex();
  auto first_pid =
      prism::get(a.task(&listed_probe::pid).remote(), result_timeout);
  std::vector<prism::object_ref<int>> bumps;
  for (int i = 0; i < 50; ++i)
    bumps.push_back(a.task(&listed_probe::bump).remote());
  for (int i = 0; i < 50; ++i)
    BOOST_REQUIRE(prism::get(bumps[i], result_timeout) == i + 1);
  BOOST_CHECK_THROW(
      prism::get(a.task(&listed_probe::refuse).remote(), result_timeout),
      prism::error);
  // Its first instance dies running it; the call is retried on the next.
  auto second_pid = prism::get(a.task(&listed_probe::die_in).remote(first_pid),
                               result_timeout);
  BOOST_REQUIRE(second_pid != first_pid);
  BOOST_REQUIRE(eventually(30s, [&] {
    return prism::state::list(kind::tasks,
                              with({"actor_id=" + id, "name=listed_probe::bump",
                                    "state=finished"},
                                   1))
                   .matched == 50u &&
           prism::state::list(
               kind::tasks,
               with({"name=listed_probe::die_in", "state=finished"}, 1))
                   .matched == 1u;
  }));
  auto calls = prism::state::list(kind::tasks, with({"type=actor_task"}, 100));
  BOOST_TEST(calls.matched == 53u);
  for (const auto& t : calls.entries) {
    BOOST_TEST(t["actor_id"] == id);
    BOOST_TEST(t["job_id"] == "1");
    BOOST_TEST(!t["submit_time"].empty());
  }
  auto bump =
      prism::state::list(kind::tasks, with({"name=listed_probe::bump"}, 1));
  BOOST_REQUIRE(bump.entries.size() == 1u);
  BOOST_TEST(bump.entries[0]["type"] == "ACTOR_TASK");
  BOOST_TEST(bump.entries[0]["pid"] == std::to_string(first_pid));
  BOOST_TEST(!bump.entries[0]["node_id"].empty());
  BOOST_TEST(!bump.entries[0]["start_time"].empty());
  BOOST_TEST(!bump.entries[0]["duration_ms"].empty());
  auto refused =
      prism::state::list(kind::tasks, with({"name=listed_probe::refuse"}, 1));
  BOOST_REQUIRE(refused.entries.size() == 1u);
  BOOST_TEST(refused.entries[0]["state"] == "FAILED");
  BOOST_TEST(contains(refused.entries[0]["error"], "listed_probe refuses"),
             refused.entries[0]["error"]);
  // Tasks are not actor calls.
  BOOST_TEST(
      prism::state::list(kind::tasks, with({"type=normal_task"}, 1)).matched ==
      0u);

  auto died =
      prism::state::list(kind::tasks, with({"name=listed_probe::die_in"}, 1));
  BOOST_REQUIRE(died.entries.size() == 1u);
  auto e = prism::state::get(kind::tasks, died.entries[0]["task_id"]);
  BOOST_REQUIRE(e.has_value());
  BOOST_REQUIRE(e->history.size() == 2u);
  BOOST_TEST(field(e->history[0], "state") == "FAILED");
  BOOST_TEST(contains(field(e->history[0], "error"), "lost"),
             field(e->history[0], "error"));
  BOOST_TEST(field(e->history[0], "pid") == std::to_string(first_pid));
  BOOST_TEST(field(e->history[1], "state") == "FINISHED");
  BOOST_TEST(field(e->history[1], "pid") == std::to_string(second_pid));

  auto listed = cluster.run({"list", "tasks", "--address", cluster.address(),
                             "--filter", "type=ACTOR_TASK", "--limit", "2"});
  BOOST_TEST(listed.status == 0, listed.err);
  BOOST_TEST(contains(listed.out, "Showing 2 of 53 tasks matching "
                                  "type=ACTOR_TASK"),
             listed.out);
  BOOST_TEST_MESSAGE(listed.out);
  BOOST_TEST(cluster.sanitizer_reports() == "");
}

// A driver records its tasks' events and sends them a second later at the
// most; one that ends sooner sends them as its job ends, and waits until
// the control store has them.
BOOST_AUTO_TEST_CASE(a_driver_that_ends_at_once_has_its_last_tasks_listed) {
  process_cluster cluster{recording_driver()};
  using prism::state::kind;
  // Its stdin closed at once: 3 tasks, an actor says "hello", and it ends.
  auto d = start_driver(
      cluster, {"3", "1", "0"},
      {"PRISM_ADDRESS=" + cluster.address(), "PRISM_TASK_EVENTS=1"}, "ends");
  BOOST_REQUIRE_MESSAGE(d.finish(cluster) == 0, d.err_text());
  // Listed as the driver ended, not a batch later.
  auto tasks =
      prism::state::list(kind::tasks, with({"name=output_driver::shout"}, 10));
  BOOST_TEST(tasks.matched == 3u);
  for (auto& t : tasks.entries)
    BOOST_TEST(t["state"] == "FINISHED");
  auto calls = prism::state::list(kind::tasks, with({"type=ACTOR_TASK"}, 10));
  BOOST_REQUIRE(calls.matched == 1u);
  BOOST_TEST(contains(calls.entries[0]["name"], "say"),
             calls.entries[0]["name"]);
  BOOST_TEST(calls.entries[0]["state"] == "FINISHED");
  BOOST_TEST(tasks.dropped_events == 0u);
  BOOST_TEST(cluster.sanitizer_reports() == "");
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace state_test
