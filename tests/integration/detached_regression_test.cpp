// Regression for Ray issue 52090 (a raylet crashed on a worker assigned to
// one job being handed a task of another). A detached, restartable service
// actor made by job one submits tasks; job one ends; job two keeps calling the
// service while the service's node dies and a new node joins. The service
// must keep answering, its tasks must run in job one on workers of job one,
// and the cluster must stay whole.

#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cluster_fixture.hpp"

namespace detached_regression_test {

using prism_test::actor_died_message;
using prism_test::result_timeout;
using prism_test::wait_until;

/// The sum of the squares of a range, and where it was computed.
struct partial_sum {
  std::int64_t sum = 0;
  std::uint32_t job = 0;
  prism::worker_id worker;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, partial_sum& x) {
  return f(x.sum, x.job, static_cast<prism::unique_id&>(x.worker));
}

/// Sums the squares of [from, to).
partial_sum sum_squares_between(int from, int to) {
  partial_sum result;
  for (std::int64_t i = from; i < to; ++i)
    result.sum += i * i;
  auto ctx = prism::get_runtime_context();
  result.job = ctx.job.value;
  result.worker = ctx.worker;
  return result;
}

/// The service's answer: the total, and the parts its subtasks computed.
struct service_reply {
  std::int64_t sum = 0;
  std::vector<partial_sum> parts;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, service_reply& x) {
  return f(x.sum, x.parts);
}

/// A service that answers each call with four subtasks.
class squares_service {
public:
  static squares_service* create() {
    return new squares_service;
  }

  /// Sums the squares of 1..n, a quarter of the range per subtask.
  service_reply sum_of_squares(int n) {
    std::vector<prism::object_ref<partial_sum>> parts;
    for (int quarter = 0; quarter < 4; ++quarter)
      parts.push_back(
          prism::task(sum_squares_between)
              .remote(1 + quarter * n / 4, 1 + (quarter + 1) * n / 4));
    service_reply reply;
    reply.parts = prism::get(parts, result_timeout);
    for (const auto& part : reply.parts)
      reply.sum += part.sum;
    return reply;
  }
};

/// A plain actor of job one; its death shows that job one's end was handled.
class job_marker {
public:
  static job_marker* create() {
    return new job_marker;
  }

  int ping() {
    return 1;
  }
};

PRISM_REMOTE(detached_regression_test::sum_squares_between);
PRISM_REMOTE(detached_regression_test::squares_service::create,
             &detached_regression_test::squares_service::sum_of_squares);
PRISM_REMOTE(detached_regression_test::job_marker::create,
             &detached_regression_test::job_marker::ping);

using namespace detached_regression_test;

namespace {

/// A task placed on a node with the "svc" resource.
const prism::resource_map on_svc_node{{"CPU", 1}, {"svc", 0.01}};

std::int64_t squares_up_to(std::int64_t n) {
  return n * (n + 1) * (2 * n + 1) / 6;
}

/// One call of the service: what was asked, and the reply.
struct answered_call {
  int n = 0;
  service_reply reply;
};

/// A head, and two nodes with the "svc" resource. Job one makes the service
/// there, job two uses it.
struct regression_fixture {
  /// Job one creates the service and ends; job two finds it by name.
  void hand_service_to_job_two() {
    job_one.emplace(prism::client::connect("svc"));
    job_one_id = job_one->job().value;
    auto created = job_one->actor(squares_service::create)
                       .name("squares")
                       .lifetime(prism::lifetime::detached)
                       .max_restarts(-1)
                       .max_task_retries(-1)
                       .resources({{"svc", 0.01}})
                       .remote();
    auto first =
        job_one->get(created.task(&squares_service::sum_of_squares).remote(8),
                     result_timeout);
    BOOST_REQUIRE(first.sum == squares_up_to(8));
    auto marker = job_one->actor(job_marker::create).name("marker").remote();
    BOOST_REQUIRE(job_one->get(marker.task(&job_marker::ping).remote(),
                               result_timeout) == 1);
    job_two.emplace(prism::client::connect("svc"));
    auto marker_seen = job_two->get_actor<job_marker>("marker");
    BOOST_REQUIRE(marker_seen.has_value());
    job_one->shutdown();
    BOOST_REQUIRE_MESSAGE(
        wait_until([&] {
          auto ping = marker_seen->task(&job_marker::ping);
          return actor_died_message(*job_two, ping.remote()).has_value();
        }),
        "job one's end was not handled within the deadline");
    service = job_two->get_actor<squares_service>("squares");
    BOOST_REQUIRE(service.has_value());
  }

  /// Job two calls the service `calls` times, and after each call runs a
  /// task of its own on a "svc" node, beside the service's subtasks.
  void use_service(int calls) {
    for (int i = 0; i < calls; ++i) {
      int n = 100 + static_cast<int>(answers.size());
      auto call = service->task(&squares_service::sum_of_squares).remote(n);
      answers.push_back({n, job_two->get(call, result_timeout)});
      auto own = job_two->task(sum_squares_between)
                     .resources(on_svc_node)
                     .remote(1, 4);
      job_two_parts.push_back(job_two->get(own, result_timeout));
    }
  }

  /// Kills the node that hosts the service, and adds a new "svc" node.
  void replace_service_node() {
    auto node = cluster.actor_node(service->id());
    BOOST_REQUIRE(node.has_value());
    BOOST_REQUIRE(node->hex() != cluster.node(0).hex());
    killed_node = node->hex();
    BOOST_REQUIRE(cluster.kill_node(*node));
    cluster.add_node({{"CPU", 2}, {"svc", 1}});
  }

  /// The whole scenario: 20 calls, the node replaced, 20 more calls.
  void run_scenario() {
    hand_service_to_job_two();
    use_service(20);
    replace_service_node();
    use_service(20);
  }

  prism::testing::local_cluster cluster{
      {{{"CPU", 2}}, {{"CPU", 2}, {"svc", 1}}, {{"CPU", 2}, {"svc", 1}}}};
  // Declared after the cluster, so that both jobs end before it shuts down.
  std::optional<prism::client> job_one;
  std::optional<prism::client> job_two;
  std::uint32_t job_one_id = 0;
  /// Job two's handle of the service.
  std::optional<prism::actor_handle<squares_service>> service;
  std::string killed_node;
  std::vector<answered_call> answers;
  std::vector<partial_sum> job_two_parts;
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(detached_regression, regression_fixture)

BOOST_AUTO_TEST_CASE(detached_service_answers_another_job_after_its_job_ends) {
  hand_service_to_job_two();
  use_service(20);
  BOOST_REQUIRE(answers.size() == 20u);
  for (const auto& call : answers)
    BOOST_TEST(call.reply.sum == squares_up_to(call.n), "n = " << call.n);
}

BOOST_AUTO_TEST_CASE(detached_service_answers_after_its_node_is_replaced) {
  run_scenario();
  BOOST_REQUIRE(answers.size() == 40u);
  for (const auto& call : answers)
    BOOST_TEST(call.reply.sum == squares_up_to(call.n), "n = " << call.n);
}

BOOST_AUTO_TEST_CASE(detached_service_moves_off_the_killed_node) {
  run_scenario();
  auto node = cluster.actor_node(service->id());
  BOOST_REQUIRE(node.has_value());
  BOOST_TEST(node->hex() != killed_node);
}

BOOST_AUTO_TEST_CASE(service_subtasks_run_in_the_job_that_created_it) {
  run_scenario();
  std::set<std::uint32_t> jobs;
  for (const auto& call : answers)
    for (const auto& part : call.reply.parts)
      jobs.insert(part.job);
  BOOST_TEST(jobs.size() == 1u);
  BOOST_TEST(jobs.count(job_one_id) == 1u);
}

BOOST_AUTO_TEST_CASE(no_worker_runs_tasks_of_both_jobs) {
  run_scenario();
  // Keyed by the job that submitted each task: the service's subtasks belong
  // to job one, job two's own tasks to job two.
  std::map<std::string, std::set<std::uint32_t>> jobs_by_worker;
  for (const auto& call : answers)
    for (const auto& part : call.reply.parts)
      jobs_by_worker[part.worker.hex()].insert(job_one_id);
  for (const auto& part : job_two_parts)
    jobs_by_worker[part.worker.hex()].insert(job_two->job().value);
  for (const auto& [worker, jobs] : jobs_by_worker)
    BOOST_TEST(jobs.size() == 1u, "worker " << worker << " ran tasks of "
                                            << jobs.size() << " jobs");
}

BOOST_AUTO_TEST_CASE(cluster_stays_whole_after_the_service_node_is_replaced) {
  run_scenario();
  // The head, the surviving "svc" node and the new one: no raylet crashed.
  BOOST_TEST(cluster.alive_nodes().size() == 3u);
  auto part =
      prism::get(prism::task(sum_squares_between).remote(1, 4), result_timeout);
  BOOST_TEST(part.sum == 1 + 4 + 9);
  BOOST_TEST(part.job == prism::get_runtime_context().job.value);
  BOOST_TEST(prism::testing::num_workers() > 0u);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace detached_regression_test
